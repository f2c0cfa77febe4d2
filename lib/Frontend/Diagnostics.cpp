//===- Diagnostics.cpp - Clang-style source diagnostics -------------------===//

#include "tegula/Frontend/Diagnostics.h"

#include "llvm/ADT/Twine.h"

using namespace tegula::frontend;

llvm::StringRef DiagEngine::slice(SourceRange range) const {
  uint32_t begin = std::min<uint32_t>(range.begin.offset, text.size());
  uint32_t end = std::min<uint32_t>(std::max(range.end, begin), text.size());
  return llvm::StringRef(text).slice(begin, end);
}

void DiagEngine::report(SourceLoc loc, llvm::StringRef kind,
                        const llvm::Twine &message) {
  os << fileName << ":" << loc.line << ":" << loc.col << ": " << kind << ": "
     << message << "\n";
  // The source line and a caret under the column.
  llvm::StringRef all(text);
  size_t offset = std::min<size_t>(loc.offset, all.size());
  size_t newline = all.substr(0, offset).rfind('\n');
  size_t lineStart = newline == llvm::StringRef::npos ? 0 : newline + 1;
  size_t lineEnd = all.find('\n', lineStart);
  if (lineEnd == llvm::StringRef::npos)
    lineEnd = all.size();
  llvm::StringRef line = all.slice(lineStart, lineEnd);
  std::string printable;
  for (char c : line)
    printable.push_back((c == '\t' || (c >= 32 && c < 127) ||
                         static_cast<unsigned char>(c) >= 128)
                            ? c
                            : ' ');
  os << printable << "\n";
  std::string caret;
  for (size_t i = lineStart; i < offset && i < lineEnd; ++i)
    caret.push_back(all[i] == '\t' ? '\t' : ' ');
  os << caret << "^\n";
}

void DiagEngine::error(SourceLoc loc, const llvm::Twine &message) {
  ++numErrors;
  if (numErrors > kMaxErrors) {
    if (!suppressed)
      os << fileName << ": error: too many errors emitted, stopping now\n";
    suppressed = true;
    return;
  }
  report(loc, "error", message);
}

void DiagEngine::warning(SourceLoc loc, const llvm::Twine &message) {
  ++numWarnings;
  if (suppressed)
    return;
  report(loc, "warning", message);
}

void DiagEngine::note(SourceLoc loc, const llvm::Twine &message) {
  if (suppressed)
    return;
  report(loc, "note", message);
}

void DiagEngine::errorNoLoc(const llvm::Twine &message) {
  ++numErrors;
  os << "tilec: error: " << message << "\n";
}
