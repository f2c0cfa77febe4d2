//===- ASTDump.cpp - Printing the syntax tree (tilec --emit ast) ----------===//

#include "tegula/Frontend/AST.h"

using namespace tegula::frontend;

namespace {
class Dumper {
public:
  explicit Dumper(llvm::raw_ostream &os) : os(os) {}

  void line(unsigned indent, const llvm::Twine &text, SourceLoc loc) {
    os.indent(indent * 2) << text << " <" << loc.line << ":" << loc.col << ">\n";
  }

  std::string opName(Tok op) {
    std::string s = tokSpelling(op);
    return s.substr(1, s.size() - 2);
  }

  void expr(const Expr &e, unsigned indent) {
    switch (e.kind) {
    case ExprKind::Int: line(indent, "Int " + llvm::Twine(e.intValue), e.loc()); break;
    case ExprKind::Float: line(indent, "Float " + std::to_string(e.floatValue), e.loc()); break;
    case ExprKind::Bool: line(indent, llvm::Twine("Bool ") + (e.boolValue ? "true" : "false"), e.loc()); break;
    case ExprKind::Name: line(indent, "Name " + e.name, e.loc()); break;
    case ExprKind::Unary: line(indent, "Unary " + opName(e.op), e.loc()); break;
    case ExprKind::Binary: line(indent, "Binary " + opName(e.op), e.loc()); break;
    case ExprKind::Ternary: line(indent, "Ternary", e.loc()); break;
    case ExprKind::Call: line(indent, "Call " + e.name, e.loc()); break;
    case ExprKind::Index: line(indent, "Index", e.loc()); break;
    case ExprKind::Method: line(indent, "Method " + e.name, e.loc()); break;
    case ExprKind::Tuple: line(indent, "Tuple", e.loc()); break;
    case ExprKind::Slice: line(indent, e.operands.empty() ? "Slice :" : "Slice", e.loc()); break;
    case ExprKind::NoneIndex: line(indent, "None", e.loc()); break;
    }
    if (e.hasTemplateArgs) {
      line(indent + 1, "TemplateArgs", e.loc());
      for (const ExprPtr &a : e.templateArgs)
        expr(*a, indent + 2);
    }
    if (e.hasShape) {
      line(indent + 1, "Shape", e.loc());
      for (const ExprPtr &a : e.shape)
        expr(*a, indent + 2);
    }
    for (const ExprPtr &op : e.operands)
      if (op)
        expr(*op, indent + 1);
    for (const NamedArg &arg : e.namedArgs) {
      line(indent + 1, "NamedArg " + arg.name, arg.loc);
      expr(*arg.value, indent + 2);
    }
  }

  void type(const TypeExpr &t, unsigned indent) {
    const char *kinds[] = {"Scalar", "Tile", "Pipeline", "Tensor", "Tuple"};
    line(indent,
         llvm::Twine("Type ") + kinds[(int)t.kind] +
             (t.isMutable ? " mut" : "") + (t.isStrided ? " strided" : ""),
         t.range.begin);
    if (t.dtype)
      expr(*t.dtype, indent + 1);
    for (const ExprPtr &d : t.dims)
      expr(*d, indent + 1);
    for (const TypePtr &e : t.elements)
      type(*e, indent + 1);
  }

  void stmts(const std::vector<StmtPtr> &body, unsigned indent) {
    for (const StmtPtr &s : body)
      stmt(*s, indent);
  }

  void stmt(const Stmt &s, unsigned indent) {
    std::string names;
    for (const std::string &n : s.names)
      names += (names.empty() ? "" : ", ") + n;
    switch (s.kind) {
    case StmtKind::Let: line(indent, (s.destructure ? "Let (" + names + ")" : "Let " + names), s.range.begin); break;
    case StmtKind::Var: line(indent, "Var " + names, s.range.begin); break;
    case StmtKind::Assign: line(indent, "Assign " + names + " " + opName(s.op), s.range.begin); break;
    case StmtKind::For: line(indent, "For " + names + (s.stages ? " pipelined" : ""), s.range.begin); break;
    case StmtKind::If: line(indent, "If", s.range.begin); break;
    case StmtKind::Expr: line(indent, "ExprStmt", s.range.begin); break;
    case StmtKind::StaticAssert: line(indent, "StaticAssert \"" + s.message + "\"", s.range.begin); break;
    case StmtKind::Return: line(indent, "Return", s.range.begin); break;
    case StmtKind::Break: line(indent, "Break", s.range.begin); break;
    case StmtKind::DeviceAssert: line(indent, "DeviceAssert \"" + s.message + "\"", s.range.begin); break;
    }
    if (s.type)
      type(*s.type, indent + 1);
    for (const Expr *e : {s.value.get(), s.start.get(), s.end.get(), s.step.get(), s.stages.get()})
      if (e)
        expr(*e, indent + 1);
    if (!s.body.empty())
      line(indent + 1, "Body", s.range.begin);
    stmts(s.body, indent + 2);
    if (s.hasElse) {
      line(indent + 1, "Else", s.range.begin);
      stmts(s.elseBody, indent + 2);
    }
  }

  void templateParams(const std::vector<TemplateParam> &params, unsigned indent) {
    const char *kinds[] = {"int", "bool", "dtype"};
    for (const TemplateParam &tp : params) {
      line(indent, "TemplateParam " + tp.name + ": " + kinds[(int)tp.kind], tp.loc);
      if (tp.defaultValue)
        expr(*tp.defaultValue, indent + 1);
    }
  }

  void params(const std::vector<Param> &params, unsigned indent) {
    for (const Param &p : params) {
      line(indent, "Param " + p.name, p.loc);
      type(*p.type, indent + 1);
    }
  }

  llvm::raw_ostream &os;
};
} // namespace

void tegula::frontend::dumpAST(const Program &program, llvm::raw_ostream &os) {
  Dumper d(os);
  for (const auto &fn : program.functions) {
    d.line(0, "Fn " + fn->name, fn->loc);
    d.templateParams(fn->templateParams, 1);
    d.params(fn->params, 1);
    if (fn->result) {
      d.line(1, "Result", fn->loc);
      d.type(*fn->result, 2);
    }
    d.stmts(fn->body, 1);
  }
  for (const auto &k : program.kernels) {
    d.line(0, "Kernel " + k->name, k->loc);
    d.templateParams(k->templateParams, 1);
    d.params(k->params, 1);
    d.line(1, "Grid", k->gridLoc);
    for (const ExprPtr &g : k->grid)
      d.expr(*g, 2);
    if (k->warps) {
      d.line(1, "Warps", k->warps->loc());
      d.expr(*k->warps, 2);
    }
    if (k->blocksPerSm) {
      d.line(1, "BlocksPerSm", k->blocksPerSm->loc());
      d.expr(*k->blocksPerSm, 2);
    }
    for (const ExprPtr &r : k->requires_) {
      d.line(1, "Requires", r->loc());
      d.expr(*r, 2);
    }
    if (k->flops) {
      d.line(1, "Flops", k->flops->loc());
      d.expr(*k->flops, 2);
    }
    if (k->bytes) {
      d.line(1, "Bytes", k->bytes->loc());
      d.expr(*k->bytes, 2);
    }
    d.stmts(k->body, 1);
  }
}
