//===- Driver.h - What tilec's parts share ----------------------*- C++ -*-===//
//
// tilec is its driver (tilec.cpp: options, then the stage chain), the
// bundle stage (Bundles.cpp), the -D sweep (Sweep.cpp), ptxas (Ptxas.cpp)
// and the output helpers below (Output.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TOOLS_TILEC_DRIVER_H
#define TEGULA_TOOLS_TILEC_DRIVER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <utility>
#include <vector>

namespace tegula::tilec {

/// Prints "tilec: error: MESSAGE" and returns 1, tilec's exit code.
int fail(const llvm::Twine &message);

/// Writes `text` to `path` ("-" is stdout). A write that fails (a full
/// disk, /dev/full) is reported and leaves no file behind.
bool writeFile(llvm::StringRef path, llvm::StringRef text);

/// Flushes what tilec printed on stdout; false, with a message, when that
/// fails, so a full stdout is an error and not an abort at exit.
bool flushStdout();

/// The -D options in order, each with its values (more than one: swept).
using Sweep = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// The sweep the -D options give; false after a message. A comma list in
/// a -D sweeps that parameter: every combination becomes a config of one
/// bundle (docs/tuning.md), the first -D slowest.
bool parseSweep(const std::vector<std::string> &defines, Sweep &sweep);

/// How many configs the sweep makes.
size_t configCount(const Sweep &sweep);

/// The defines of combination `index` of the sweep, the first -D slowest.
std::vector<std::pair<std::string, std::string>>
configDefines(const Sweep &sweep, size_t index);

/// "BLOCK_M=64,BLOCK_N=32": the swept parameters of a combination.
std::string configName(const Sweep &sweep, size_t index);

} // namespace tegula::tilec

#endif // TEGULA_TOOLS_TILEC_DRIVER_H
