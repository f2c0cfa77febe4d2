//===- Builtins.h - The builtins' signatures --------------------*- C++ -*-===//
//
// What the parser and Sema both need to know of a builtin. The table itself,
// with each builtin's handler, is in Sema/SemaBuiltins.cpp. Private to
// lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_FRONTEND_BUILTINS_H
#define TEGULA_LIB_FRONTEND_BUILTINS_H

#include "llvm/ADT/StringRef.h"

namespace tegula::frontend {

/// The template arguments a builtin is written with.
enum class BuiltinTemplate {
  None,
  DType,      ///< cast<DT>(x)
  DTypeShape, ///< zeros<DT>[S0, ...], full<DT>[S...](v), pipeline<DT>[S...]
};

struct BuiltinSignature {
  llvm::StringLiteral name;
  BuiltinTemplate templateArgs;
  unsigned minArgs, maxArgs; ///< positional arguments
  const char *named[2];      ///< named arguments; unused slots are null
};

/// The builtin called `name`, or null.
const BuiltinSignature *lookupBuiltin(llvm::StringRef name);

} // namespace tegula::frontend

#endif // TEGULA_LIB_FRONTEND_BUILTINS_H
