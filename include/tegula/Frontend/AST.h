//===- AST.h - Syntax tree of the tile language -----------------*- C++ -*-===//
//
// Plain node structs, each with the source range it was parsed from. Sema
// walks them directly; nothing here is typed yet.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_FRONTEND_AST_H
#define TEGULA_FRONTEND_AST_H

#include "tegula/Frontend/Diagnostics.h"
#include "tegula/Frontend/Lexer.h"

#include <memory>
#include <string>
#include <vector>

namespace tegula::frontend {

struct Expr;
struct TypeExpr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using TypePtr = std::unique_ptr<TypeExpr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind {
  Int,       ///< 42
  Float,     ///< 0.5, inf
  Bool,      ///< true, false
  Name,      ///< x
  Unary,     ///< -x, !x (op)
  Binary,    ///< a op b
  Ternary,   ///< c ? a : b (operands 0, 1, 2)
  Call,      ///< callee<templateArgs>[shape](args, named = args)
  Index,     ///< operands[0][operands[1], ...]
  Method,    ///< operands[0].name(operands[1], ...)
  Tuple,     ///< (a, b)
  Slice,     ///< a : b inside an index; a null operand is `:` alone
  NoneIndex, ///< None inside an index
};

struct NamedArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  SourceRange range;
  std::string name;   ///< Name, callee, method
  uint64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  Tok op = Tok::Eof;
  SourceLoc opLoc; ///< Binary: the operator
  std::vector<ExprPtr> operands;
  bool hasTemplateArgs = false;
  std::vector<ExprPtr> templateArgs;
  bool hasShape = false;
  std::vector<ExprPtr> shape;
  bool hasCallArgs = false;
  std::vector<NamedArg> namedArgs;

  Expr(ExprKind kind, SourceRange range) : kind(kind), range(range) {}
  SourceLoc loc() const { return range.begin; }
};

enum class TypeKind { Scalar, Tile, Pipeline, Tensor, Tuple };

struct TypeExpr {
  TypeKind kind;
  SourceRange range;
  ExprPtr dtype;              ///< scalars: a Name holding the dtype name
  std::vector<ExprPtr> dims;  ///< tile, pipeline and tensor extents
  bool isMutable = false;     ///< `mut tensor`
  bool isStrided = false;     ///< `tensor<...>[...] strided`
  std::vector<TypePtr> elements; ///< tuples
  TypeExpr(TypeKind kind, SourceRange range) : kind(kind), range(range) {}
};

enum class StmtKind {
  Let,
  Var,
  Assign,
  For,
  If,
  Expr,
  StaticAssert,
  Return,
  Break,
  DeviceAssert,
};

struct Stmt {
  StmtKind kind;
  SourceRange range;
  std::vector<std::string> names; ///< let/var/assign target, loop variable
  std::vector<SourceLoc> nameLocs;
  bool destructure = false;       ///< let (a, b) = ...
  TypePtr type;
  Tok op = Tok::Assign;           ///< = += -= *= /=
  ExprPtr value;                  ///< init, assigned value, condition, expr
  ExprPtr start, end, step;       ///< for
  ExprPtr stages;                 ///< pipelined(S)
  std::string message;            ///< static_assert, device_assert
  std::vector<StmtPtr> body;      ///< for body, then branch
  std::vector<StmtPtr> elseBody;
  bool hasElse = false;
  Stmt(StmtKind kind, SourceRange range) : kind(kind), range(range) {}
};

enum class TemplateKind { Int, Bool, DType };

struct TemplateParam {
  std::string name;
  SourceLoc loc;
  TemplateKind kind;
  ExprPtr defaultValue;
};

struct Param {
  std::string name;
  SourceLoc loc;
  TypePtr type;
};

struct Kernel {
  std::string name;
  SourceLoc loc;
  std::vector<TemplateParam> templateParams;
  std::vector<Param> params;
  SourceLoc gridLoc;
  std::vector<ExprPtr> grid;
  ExprPtr warps;
  /// `blocks_per_sm N`: registers for N resident blocks (.minnctapersm).
  ExprPtr blocksPerSm;
  std::vector<ExprPtr> requires_;
  ExprPtr flops, bytes;
  /// `exact_math`: no flush-to-zero ex2 and no FMA contraction.
  bool exactMath = false;
  std::vector<StmtPtr> body;
};

struct Function {
  std::string name;
  SourceLoc loc;
  std::vector<TemplateParam> templateParams;
  std::vector<Param> params;
  TypePtr result; ///< null when the fn returns nothing
  std::vector<StmtPtr> body;
};

struct Program {
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::unique_ptr<Function>> functions;
};

/// Parses the whole buffer of `diags`; reports syntax errors there.
Program parseProgram(DiagEngine &diags);

/// Prints the tree in an indented, readable form (`tilec --emit ast`).
void dumpAST(const Program &program, llvm::raw_ostream &os);

} // namespace tegula::frontend

#endif // TEGULA_FRONTEND_AST_H
