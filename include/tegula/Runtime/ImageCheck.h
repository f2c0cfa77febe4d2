//===- ImageCheck.h - A bundle's PTX and cubins checked on the host -*- C++
//-*-===//
//
// The driver parses what a bundle hands it (cuModuleLoadDataEx) trusting
// its structure: a cubin cut short makes it read past the buffer, a PTX cut
// short fails deep in the JIT. These checks run when the bundle is loaded,
// so that tile-run --dry-run and the C ABI's load report such files.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_IMAGECHECK_H
#define TEGULA_RUNTIME_IMAGECHECK_H

#include <cstdint>
#include <string>

namespace tegula::rt {

/// Checks that `image` is a complete ELF64 little-endian file as far as a
/// loader reads it: the header, the program and section header tables and
/// every section's bytes inside the file, and a valid section-name string
/// table. On failure `error` says what is wrong ("is truncated: ...").
bool checkElfImage(const std::string &image, std::string &error);

/// `ptx` with its comments (`// ...` and `/* ... */`) turned into spaces,
/// string literals kept, so that offsets stay the same and commented-out
/// text is never taken for code.
std::string stripPtxComments(const std::string &ptx);

/// Whether the entry whose parameter list closes at `paramsEnd` (the
/// offset just past its ')') in comment-free `ptx` has a body that closes:
/// a '{' and its matching '}'. A PTX cut short fails here.
bool ptxEntryBodyCloses(const std::string &ptx, size_t paramsEnd);

/// The bytes of shared memory that comment-free `ptx` declares with a size
/// (`.shared .align 16 .b8 name[4096];`); `.extern` declarations without a
/// size (dynamic shared memory) count 0. Saturates at 2^40.
int64_t ptxStaticSharedBytes(const std::string &ptx);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_IMAGECHECK_H
