//===- Diagnostics.h - Clang-style source diagnostics -----------*- C++ -*-===//
//
// Errors, warnings and notes printed as `FILE:LINE:COL: error: MESSAGE`,
// followed by the source line and a caret under the column.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_FRONTEND_DIAGNOSTICS_H
#define TEGULA_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tegula::frontend {

/// A position in the source buffer (1-based line and column).
struct SourceLoc {
  uint32_t offset = 0;
  uint32_t line = 1;
  uint32_t col = 1;
};

/// A half-open range of the source buffer.
struct SourceRange {
  SourceLoc begin;
  uint32_t end = 0; ///< Offset one past the last character.
};

/// One source file in memory and the diagnostics reported against it.
class DiagEngine {
public:
  DiagEngine(std::string fileName, std::string text, llvm::raw_ostream &os)
      : fileName(std::move(fileName)), text(std::move(text)), os(os) {}

  void error(SourceLoc loc, const llvm::Twine &message);
  /// A likely mistake in a program that still compiles: printed like an
  /// error, but it does not count as one (the exit status stays 0).
  void warning(SourceLoc loc, const llvm::Twine &message);
  void note(SourceLoc loc, const llvm::Twine &message);
  /// An error without a position (for example a bad -D option).
  void errorNoLoc(const llvm::Twine &message);

  unsigned getNumErrors() const { return numErrors; }
  unsigned getNumWarnings() const { return numWarnings; }
  bool hasErrors() const { return numErrors != 0; }
  llvm::StringRef getText() const { return text; }
  llvm::StringRef getFileName() const { return fileName; }
  /// The source text of a range.
  llvm::StringRef slice(SourceRange range) const;

  /// Stop reporting after this many errors (cascades are noise).
  static constexpr unsigned kMaxErrors = 20;

private:
  void report(SourceLoc loc, llvm::StringRef kind, const llvm::Twine &message);

  std::string fileName;
  std::string text;
  llvm::raw_ostream &os;
  unsigned numErrors = 0;
  unsigned numWarnings = 0;
  bool suppressed = false;
};

} // namespace tegula::frontend

#endif // TEGULA_FRONTEND_DIAGNOSTICS_H
