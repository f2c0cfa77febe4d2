//===- Ptxas.cpp - Assembling PTX into a cubin with ptxas -----------------===//

#include "Ptxas.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace tegula;

/// The first integer before `word` on a line of `log` holding `key`.
std::optional<int64_t> tilec::numberBefore(llvm::StringRef log,
                                           llvm::StringRef key,
                                           llvm::StringRef word) {
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    size_t at = line.find(key);
    size_t end = line.find(word);
    if (at == llvm::StringRef::npos || end == llvm::StringRef::npos)
      continue;
    llvm::StringRef before = line.take_front(end).rtrim();
    size_t start = before.find_last_not_of("0123456789");
    int64_t value;
    if (!before.drop_front(start + 1).getAsInteger(10, value))
      return value;
  }
  return std::nullopt;
}

bool tilec::assembleCubin(llvm::StringRef ptxas, llvm::StringRef chip,
                          llvm::StringRef ptxPath, llvm::StringRef cubinPath,
                          PtxasStats *stats) {
  auto warn = [&](const llvm::Twine &why) {
    llvm::sys::fs::remove(cubinPath);
    llvm::errs() << "tilec: warning: " << why << "; '" << ptxPath
                 << "' ships without a cubin\n";
    return false;
  };
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tilec-ptxas", "log", log))
    return warn("cannot create a temporary file for ptxas's output");
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-o", cubinPath,
                                             ptxPath};
  if (stats)
    args.insert(args.begin() + 1, "-v");
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string error;
  int code =
      llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error);
  std::string output;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    output = llvm::StringRef((*text)->getBuffer()).trim().str();
  llvm::sys::fs::remove(log);
  if (code == 0) {
    if (stats) {
      stats->registers = numberBefore(output, "Used ", " registers");
      stats->spillBytes =
          numberBefore(output, "spill stores", " bytes spill stores");
    }
    return true;
  }
  if (size_t newline = output.find('\n'); newline != std::string::npos)
    output.resize(newline);
  return warn("ptxas failed" +
              (code < 0 ? llvm::Twine(" (") + error + ")"
                        : llvm::Twine(" (exit ") + llvm::Twine(code) + ")") +
              (output.empty() ? "" : ": " + output));
}
