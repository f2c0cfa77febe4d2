//===- Ptxas.cpp - Assembling PTX into a cubin with ptxas -----------------===//

#include "Ptxas.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace tegula;
using namespace tegula::tilec;

namespace {
/// The integer just before `word` on `line` ("92 bytes spill stores"), or
/// none.
std::optional<int64_t> numberBefore(llvm::StringRef line,
                                    llvm::StringRef word) {
  size_t end = line.find(word);
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef before = line.take_front(end).rtrim();
  size_t start = before.find_last_not_of("0123456789");
  int64_t value;
  if (before.drop_front(start + 1).getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// The quoted name after `key` on `line` ("Compiling entry function 'F'"),
/// quotes optional ("Function properties for F").
std::optional<llvm::StringRef> nameAfter(llvm::StringRef line,
                                         llvm::StringRef key) {
  size_t at = line.find(key);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = line.drop_front(at + key.size()).ltrim();
  if (rest.consume_front("'"))
    return rest.take_until([](char c) { return c == '\''; });
  return rest.take_until([](char c) { return c == ' '; });
}

/// Why `line` says ptxas serializes a function's wgmma instructions, after
/// ptxas's code for the case ("C7515: non wgmma instructions defining
/// accumulator registers ..."; ptxas 13.0 says C7514 for some), if it does
/// and names the function.
std::optional<std::string> serializationReason(llvm::StringRef line) {
  llvm::StringRef key = "wgmma.mma_async instructions are serialized ";
  size_t at = line.find(key);
  size_t end = line.rfind(" in the function");
  if (at == llvm::StringRef::npos || end == llvm::StringRef::npos || end < at)
    return std::nullopt;
  llvm::StringRef why = line.slice(at + key.size(), end);
  why.consume_front("due to ");
  size_t open = line.find("(C");
  size_t close = line.find(')', open);
  if (open == llvm::StringRef::npos || close == llvm::StringRef::npos ||
      close > at)
    return why.str();
  return (line.slice(open + 1, close) + ": " + why).str();
}
} // namespace

std::vector<PtxasStats> tilec::parsePtxasLog(llvm::StringRef log) {
  std::vector<PtxasStats> functions;
  // Indices, not references: a new name grows the vector.
  auto indexOf = [&](llvm::StringRef name) {
    for (auto [index, function] : llvm::enumerate(functions))
      if (function.function == name)
        return index;
    functions.push_back({name.str(), std::nullopt, 0, 0, std::nullopt});
    return functions.size() - 1;
  };
  std::optional<size_t> entry, properties;
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (auto why = serializationReason(line)) {
      functions[indexOf(*nameAfter(line, "in the function"))].wgmmaSerialized =
          std::move(*why);
    } else if (auto name = nameAfter(line, "Compiling entry function")) {
      entry = indexOf(*name);
    } else if (auto name = nameAfter(line, "Function properties for")) {
      properties = indexOf(*name);
    } else if (auto count = numberBefore(line, " registers");
               count && entry && line.contains("Used ")) {
      functions[*entry].registers = *count;
    } else if (auto stores = numberBefore(line, " bytes spill stores");
               stores && properties) {
      PtxasStats &function = functions[*properties];
      function.spillStores = *stores;
      function.spillLoads =
          numberBefore(line, " bytes spill loads").value_or(0);
    }
  }
  return functions;
}

std::optional<std::string> tilec::withMinBlocksPerSm(llvm::StringRef ptx,
                                                     int64_t blocks) {
  if (ptx.contains(".minnctapersm"))
    return std::nullopt;
  size_t at = ptx.find(".maxntid ");
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  size_t end = ptx.find('\n', at);
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  return (ptx.take_front(end + 1) + ".minnctapersm " + llvm::Twine(blocks) +
          "\n" + ptx.drop_front(end + 1))
      .str();
}

llvm::Expected<std::vector<PtxasStats>>
tilec::assembleCubin(llvm::StringRef ptxas, llvm::StringRef chip,
                     llvm::StringRef ptxPath, llvm::StringRef cubinPath) {
  auto failed = [&](const llvm::Twine &why) {
    llvm::sys::fs::remove(cubinPath);
    return llvm::createStringError(why);
  };
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("tilec-ptxas", "log", log))
    return failed("cannot create a temporary file for ptxas's output");
  // -v costs nothing measurable and is how spills are never silent.
  std::string arch = ("-arch=" + chip).str();
  llvm::StringRef args[] = {ptxas, "-v", arch, "-o", cubinPath, ptxPath};
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
  if (code == 0)
    return parsePtxasLog(output);
  // The first line that is not -v's information says why.
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(output).split(lines, '\n', -1, /*KeepEmpty=*/false);
  llvm::StringRef why;
  for (llvm::StringRef line : lines)
    if (!line.starts_with("ptxas info")) {
      why = line.trim();
      break;
    }
  return failed("ptxas failed" +
                (code < 0 ? llvm::Twine(" (") + error + ")"
                          : llvm::Twine(" (exit ") + llvm::Twine(code) + ")") +
                (why.empty() ? "" : ": " + why));
}
