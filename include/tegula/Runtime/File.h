//===- File.h - Reading user-named files without surprises ------*- C++ -*-===//
//
// Every file a runner reads (bundles, PTX, .npy inputs and references) or
// writes (--out, --json) is named by the user, so it may be a directory, a
// device, unreadable or unwritable: each case is an error message, never an
// exception.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_FILE_H
#define TEGULA_RUNTIME_FILE_H

#include <string>
#include <string_view>

namespace tegula::rt {

/// Reads the regular file at `path` into `contents`; on failure sets
/// `reason` to why (no such file, a directory, not a regular file, a read
/// that failed), for the caller to put in its own message.
bool readFile(const std::string &path, std::string &contents,
              std::string &reason);

/// Writes `contents` to `path`, replacing it; on failure sets `reason` to
/// why (a directory, no such directory, permission denied, a full disk).
bool writeFile(const std::string &path, std::string_view contents,
               std::string &reason);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_FILE_H
