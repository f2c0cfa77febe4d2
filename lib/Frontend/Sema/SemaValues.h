//===- SemaValues.h - The elaborator's types and values ---------*- C++ -*-===//
//
// What the elaborator computes with: dtypes, types (Ty), values (Val) with
// the compile-time integers' origins, bindings, pipeline effects, fn frames,
// tensor parameters and blocks. Private to lib/Frontend.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_FRONTEND_SEMA_SEMAVALUES_H
#define TEGULA_LIB_FRONTEND_SEMA_SEMAVALUES_H

#include "tegula/Frontend/AST.h"

#include "mlir/IR/Value.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tegula::frontend::sema {

enum class DT { I1, I32, I64, F16, BF16, F32 };

inline bool isFloat(DT dt) {
  return dt == DT::F16 || dt == DT::BF16 || dt == DT::F32;
}
inline bool isInt(DT dt) { return dt == DT::I32 || dt == DT::I64; }
inline int64_t dtBytes(DT dt) {
  switch (dt) {
  case DT::I1:
    return 1;
  case DT::F16:
  case DT::BF16:
    return 2;
  case DT::I32:
  case DT::F32:
    return 4;
  case DT::I64:
    return 8;
  }
  return 4;
}
inline const char *dtName(DT dt) {
  switch (dt) {
  case DT::I1:
    return "i1";
  case DT::I32:
    return "i32";
  case DT::I64:
    return "i64";
  case DT::F16:
    return "f16";
  case DT::BF16:
    return "bf16";
  case DT::F32:
    return "f32";
  }
  return "?";
}
inline std::optional<DT> parseDT(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DT>>(name)
      .Case("i1", DT::I1)
      .Case("bool", DT::I1)
      .Case("i32", DT::I32)
      .Case("i64", DT::I64)
      .Case("f16", DT::F16)
      .Case("bf16", DT::BF16)
      .Case("f32", DT::F32)
      .Default(std::nullopt);
}

/// How one compile-time integer was computed, for messages.
struct Origin {
  std::string text; ///< "DK = D * EXPAND / 2 = 16 * 1 / 2"; empty if literal
  SourceLoc loc;
};

struct Ty {
  enum Kind { Scalar, Tile, Pipeline, Tensor } kind = Scalar;
  DT dt = DT::I32;
  llvm::SmallVector<int64_t> shape;
  std::vector<Origin> origins; ///< per extent; may be empty
  unsigned stages = 0;
  bool isMutable = false;
  bool isStrided = false; ///< tensors: strides come at launch

  static Ty scalar(DT dt) {
    Ty t;
    t.dt = dt;
    return t;
  }
  static Ty tile(DT dt, llvm::ArrayRef<int64_t> shape,
                 std::vector<Origin> origins = {}) {
    if (shape.empty())
      return scalar(dt);
    Ty t;
    t.kind = Tile;
    t.dt = dt;
    t.shape.assign(shape.begin(), shape.end());
    t.origins = std::move(origins);
    t.origins.resize(shape.size());
    return t;
  }
  Ty withDT(DT newDT) const {
    Ty t = *this;
    t.dt = newDT;
    return t;
  }
  bool isScalar() const { return kind == Scalar; }
  bool isTile() const { return kind == Tile; }
  int64_t rank() const { return shape.size(); }
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t e : shape)
      n *= e;
    return n;
  }
  bool sameValueType(const Ty &o) const {
    return kind == o.kind && dt == o.dt && shape == o.shape;
  }
  std::string str() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (kind == Scalar) {
      os << dtName(dt);
      return s;
    }
    os << (kind == Tile       ? "tile"
           : kind == Pipeline ? "pipeline"
                              : "tensor")
       << "<" << dtName(dt) << ">[";
    llvm::interleaveComma(shape, os);
    os << "]";
    return s;
  }
};

inline std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// An integer `/` whose quotient a float would misread (`1 / K` is 0).
struct TruncatedDiv {
  const Expr *div;
  std::string values; ///< "1 / 64 = 0"; empty when only known at run time
};

/// What an expression evaluates to.
struct Val {
  enum Kind {
    Invalid, ///< an error was reported already
    Void,
    CInt,   ///< compile-time integer: takes any numeric dtype it meets
    CFloat, ///< float literal: takes any float dtype it meets
    CBool,
    DType,
    Runtime, ///< an SSA scalar or tile
    Tensor,  ///< a tensor parameter
    Pipe,    ///< a pipeline handle
    Tuple,
  } kind = Invalid;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  DT dt = DT::I32;
  Origin origin;
  Ty ty;
  mlir::Value v;
  int index = -1; ///< tensor parameter or pipeline id
  std::vector<Val> elements;
  /// Set on the quotient of an integer `/` (and, at compile time, on what
  /// is computed from it): warned about where it becomes a float. Shared:
  /// values are copied often and this is rarely set.
  std::shared_ptr<const TruncatedDiv> truncatedDiv;

  static Val invalid() { return Val(); }
  static Val voidVal() {
    Val x;
    x.kind = Void;
    return x;
  }
  static Val cint(int64_t value, Origin origin = {}) {
    Val x;
    x.kind = CInt;
    x.i = value;
    x.origin = std::move(origin);
    return x;
  }
  static Val cfloat(double value) {
    Val x;
    x.kind = CFloat;
    x.f = value;
    return x;
  }
  static Val cbool(bool value) {
    Val x;
    x.kind = CBool;
    x.b = value;
    return x;
  }
  static Val dtype(DT dt) {
    Val x;
    x.kind = DType;
    x.dt = dt;
    return x;
  }
  static Val runtime(mlir::Value v, Ty ty) {
    Val x;
    x.kind = Runtime;
    x.v = v;
    x.ty = std::move(ty);
    return x;
  }
  bool ok() const { return kind != Invalid; }
  bool isConst() const {
    return kind == CInt || kind == CFloat || kind == CBool || kind == DType;
  }
  /// A literal-like value with no dtype of its own yet.
  bool isLiteral() const { return kind == CInt || kind == CFloat; }
  bool isValue() const {
    return kind == Runtime || isLiteral() || kind == CBool;
  }
};

struct Binding {
  Val val;
  bool isVar = false;
  SourceLoc loc;
  /// How many runtime ifs and loops enclose the declaration.
  unsigned runtimeDepth = 0;
};

/// Push/pop events of pipelines, in program order, for the counting rule.
struct Effect {
  enum Kind { Push, Pop, If, Loop } kind;
  int pipe = -1;
  SourceLoc loc;
  std::vector<Effect> first, second;
};

struct PipeInfo {
  std::string name;
  SourceLoc loc;
  unsigned stages;
  Ty ty;
};

/// One inlined fn call in progress.
struct Frame {
  const Function *fn = nullptr;
  SourceLoc callLoc;
  bool returned = false;
  Val result;
  unsigned runtimeNesting = 0;
};

/// A tensor block addressed by T[I0, ..., In].
struct Block {
  int tensor = -1;
  llvm::SmallVector<int64_t> shape;
  std::vector<Origin> origins;
  llvm::SmallVector<mlir::Value> indices;
};

/// One index of a block T[...]: its value and whether it is a tile (that
/// adds its extents to the block) or a scalar.
struct BlockIndex {
  Val v;
  bool tile;
};

/// An index expression as a linear sum (SemaMemory.cpp).
struct Linear;

struct TensorParam {
  std::string name;
  SourceLoc loc;
  Ty ty;
  mlir::Value value;
  bool read = false, written = false;
  /// Each dimension as written (`D`, `R / 2`, `64`), for messages.
  std::vector<std::string> dimTexts;
};

inline std::string opText(Tok kind) {
  std::string s = tokSpelling(kind);
  return s.substr(1, s.size() - 2);
}

inline bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// How a template parameter's kind is written: int, bool or dtype.
inline const char *templateKindName(TemplateKind kind) {
  return kind == TemplateKind::Int    ? "int"
         : kind == TemplateKind::Bool ? "bool"
                                      : "dtype";
}

} // namespace tegula::frontend::sema

#endif // TEGULA_LIB_FRONTEND_SEMA_SEMAVALUES_H
