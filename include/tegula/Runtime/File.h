//===- File.h - Reading user-named files without surprises ------*- C++ -*-===//
//
// Every file a runner reads (bundles, PTX, .npy inputs and references) is
// named by the user, so it may be a directory, a device or unreadable: each
// case is an error message, never an exception.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_FILE_H
#define TEGULA_RUNTIME_FILE_H

#include <string>

namespace tegula::rt {

/// Reads the regular file at `path` into `contents`; on failure sets
/// `reason` to why (no such file, a directory, not a regular file, a read
/// that failed), for the caller to put in its own message.
bool readFile(const std::string &path, std::string &contents,
              std::string &reason);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_FILE_H
