//===- Parser.cpp - Recursive-descent parser of the tile language ---------===//

#include "tegula/Frontend/AST.h"

#include "Builtins.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <cstdlib>

using namespace tegula::frontend;

namespace {

/// Nesting deeper than this is reported instead of recursed into, so that
/// malformed input cannot exhaust the stack. Each operator of a chain such as
/// `a + b + c` counts as one level, because it nests the tree one level deeper
/// and every later walk of the tree recurses through it.
constexpr unsigned kMaxDepth = 200;

class Parser {
public:
  Parser(DiagEngine &diags) : diags(diags), tokens(lex(diags)) {
    // Items come in any order: `f<...>` opens template arguments for every
    // fn of the file, so collect their names first.
    for (size_t i = 0; i + 1 < tokens.size(); ++i)
      if (tokens[i].kind == Tok::Ident && tokens[i].text == "fn" &&
          tokens[i + 1].kind == Tok::Ident)
        fnNames.insert(tokens[i + 1].text);
  }

  Program parse();

private:
  const Token &cur() const { return tokens[pos]; }
  const Token &ahead(size_t n) const {
    return tokens[std::min(pos + n, tokens.size() - 1)];
  }
  bool at(Tok kind) const { return cur().kind == kind; }
  bool atIdent(llvm::StringRef text) const {
    return cur().kind == Tok::Ident && cur().text == text;
  }
  Token take() {
    Token t = cur();
    if (pos + 1 < tokens.size())
      ++pos;
    return t;
  }
  bool accept(Tok kind) {
    if (!at(kind))
      return false;
    take();
    return true;
  }
  bool acceptIdent(llvm::StringRef text) {
    if (!atIdent(text))
      return false;
    take();
    return true;
  }
  /// Consumes one `>`, splitting a `>>` token where template arguments nest.
  bool acceptCloseAngle() {
    if (at(Tok::Gt)) {
      take();
      return true;
    }
    if (at(Tok::Shr) || at(Tok::Ge)) {
      Token &t = tokens[pos];
      t.kind = t.kind == Tok::Shr ? Tok::Gt : Tok::Assign;
      t.text = t.text.substr(1);
      ++t.loc.offset;
      ++t.loc.col;
      return true;
    }
    return false;
  }
  bool expect(Tok kind, llvm::StringRef what) {
    if (accept(kind))
      return true;
    error(cur().loc, llvm::Twine("expected ") + tokSpelling(kind) + " " + what +
                         ", found " + describe(cur()));
    return false;
  }
  std::string describe(const Token &t) {
    if (t.kind == Tok::Eof)
      return "end of file";
    return "'" + t.text.str() + "'";
  }
  bool expectIdent(std::string &name, SourceLoc &loc, llvm::StringRef what) {
    if (!at(Tok::Ident)) {
      error(cur().loc, "expected " + what + ", found " + describe(cur()));
      return false;
    }
    loc = cur().loc;
    name = take().text.str();
    return true;
  }
  void error(SourceLoc loc, const llvm::Twine &message) {
    // One error per statement: the rest of it is usually a cascade.
    if (panic)
      return;
    panic = true;
    diags.error(loc, message);
  }
  SourceRange rangeFrom(SourceLoc begin) const {
    const Token &last = tokens[pos == 0 ? 0 : pos - 1];
    uint32_t end = last.loc.offset + last.text.size();
    return {begin, std::max(end, begin.offset)};
  }

  // Recovery.
  void skipStatement();
  void skipToItem();

  // Items.
  std::unique_ptr<Kernel> parseKernel();
  std::unique_ptr<Function> parseFunction();
  bool parseTemplateParams(std::vector<TemplateParam> &params);
  bool parseParams(std::vector<Param> &params);
  TypePtr parseType();
  bool parseBlock(std::vector<StmtPtr> &body);
  StmtPtr parseStatement();

  // Expressions.
  ExprPtr parseExpr();
  ExprPtr parseTernary();
  ExprPtr parseBinary(int minPrec);
  ExprPtr parseUnary();
  ExprPtr parsePostfix(ExprPtr base);
  ExprPtr parsePrimary();
  bool parseCallArgs(Expr &call);
  ExprPtr parseIndexItem();

  DiagEngine &diags;
  std::vector<Token> tokens;
  size_t pos = 0;
  unsigned depth = 0;
  bool panic = false;
  llvm::StringSet<> fnNames;
};

struct DepthGuard {
  unsigned &depth;
  explicit DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
  ~DepthGuard() { --depth; }
};

bool isTemplateBuiltin(llvm::StringRef name) {
  const BuiltinSignature *builtin = lookupBuiltin(name);
  return builtin && builtin->templateArgs != BuiltinTemplate::None;
}

} // namespace

void Parser::skipStatement() {
  int nesting = 0;
  while (!at(Tok::Eof)) {
    if (at(Tok::LBrace) || at(Tok::LParen) || at(Tok::LBracket))
      ++nesting;
    if (at(Tok::RBrace) || at(Tok::RParen) || at(Tok::RBracket)) {
      // A '}' at depth 0 ends the enclosing block; a ')' or ']' there closes
      // a bracket the failed statement opened, and is part of it.
      if (nesting == 0 && at(Tok::RBrace))
        return;
      if (nesting == 0) {
        take();
        continue;
      }
      --nesting;
      take();
      if (nesting == 0 && tokens[pos - 1].kind == Tok::RBrace)
        return;
      continue;
    }
    if (at(Tok::Semi) && nesting == 0) {
      take();
      return;
    }
    take();
  }
}

void Parser::skipToItem() {
  while (!at(Tok::Eof) && !atIdent("kernel") && !atIdent("fn"))
    take();
}

Program Parser::parse() {
  Program program;
  while (!at(Tok::Eof)) {
    panic = false;
    if (atIdent("kernel")) {
      if (auto kernel = parseKernel())
        program.kernels.push_back(std::move(kernel));
      else
        skipToItem();
      continue;
    }
    if (atIdent("fn")) {
      if (auto fn = parseFunction())
        program.functions.push_back(std::move(fn));
      else
        skipToItem();
      continue;
    }
    error(cur().loc, "expected 'kernel' or 'fn', found " + describe(cur()));
    take();
    skipToItem();
  }
  return program;
}

bool Parser::parseTemplateParams(std::vector<TemplateParam> &params) {
  if (!accept(Tok::Lt))
    return true;
  while (!acceptCloseAngle()) {
    TemplateParam param;
    if (!expectIdent(param.name, param.loc, "a template parameter name") ||
        !expect(Tok::Colon, "after the template parameter name"))
      return false;
    if (acceptIdent("int"))
      param.kind = TemplateKind::Int;
    else if (acceptIdent("bool"))
      param.kind = TemplateKind::Bool;
    else if (acceptIdent("dtype"))
      param.kind = TemplateKind::DType;
    else {
      error(cur().loc, "expected 'int', 'bool' or 'dtype' as the kind of "
                       "template parameter '" + param.name + "', found " +
                           describe(cur()));
      return false;
    }
    if (accept(Tok::Assign)) {
      param.defaultValue = parseBinary(8); // stops before '>'
      if (!param.defaultValue)
        return false;
    }
    params.push_back(std::move(param));
    if (acceptCloseAngle())
      break;
    if (!expect(Tok::Comma, "between template parameters"))
      return false;
  }
  return true;
}

bool Parser::parseParams(std::vector<Param> &params) {
  if (!expect(Tok::LParen, "to open the parameter list"))
    return false;
  while (!accept(Tok::RParen)) {
    Param param;
    if (!expectIdent(param.name, param.loc, "a parameter name") ||
        !expect(Tok::Colon, "after the parameter name"))
      return false;
    param.type = parseType();
    if (!param.type)
      return false;
    params.push_back(std::move(param));
    if (accept(Tok::RParen))
      break;
    if (!expect(Tok::Comma, "between parameters"))
      return false;
  }
  return true;
}

TypePtr Parser::parseType() {
  DepthGuard guard(depth);
  SourceLoc begin = cur().loc;
  if (depth > kMaxDepth) {
    error(begin, "type nested too deeply");
    return nullptr;
  }
  if (accept(Tok::LParen)) {
    auto type = std::make_unique<TypeExpr>(TypeKind::Tuple, SourceRange{begin});
    while (!accept(Tok::RParen)) {
      TypePtr element = parseType();
      if (!element)
        return nullptr;
      type->elements.push_back(std::move(element));
      if (accept(Tok::RParen))
        break;
      if (!expect(Tok::Comma, "between tuple element types"))
        return nullptr;
    }
    type->range = rangeFrom(begin);
    return type;
  }
  bool isMutable = acceptIdent("mut");
  if (!at(Tok::Ident)) {
    error(cur().loc, "expected a type, found " + describe(cur()));
    return nullptr;
  }
  Token name = cur();
  TypeKind kind = TypeKind::Scalar;
  if (name.text == "tile")
    kind = TypeKind::Tile;
  else if (name.text == "pipeline")
    kind = TypeKind::Pipeline;
  else if (name.text == "tensor")
    kind = TypeKind::Tensor;
  if (isMutable && kind != TypeKind::Tensor) {
    error(name.loc, "'mut' applies only to tensor parameters");
    return nullptr;
  }
  take();
  auto type = std::make_unique<TypeExpr>(kind, SourceRange{begin});
  type->isMutable = isMutable;
  if (kind == TypeKind::Scalar) {
    type->dtype = std::make_unique<Expr>(ExprKind::Name,
                                         SourceRange{name.loc, name.loc.offset + (uint32_t)name.text.size()});
    type->dtype->name = name.text.str();
    type->range = rangeFrom(begin);
    return type;
  }
  if (!expect(Tok::Lt, "before the element type"))
    return nullptr;
  type->dtype = parseBinary(8);
  if (!type->dtype)
    return nullptr;
  if (!acceptCloseAngle()) {
    error(cur().loc, "expected '>' after the element type, found " +
                         describe(cur()));
    return nullptr;
  }
  if (!expect(Tok::LBracket, "before the extents"))
    return nullptr;
  while (!accept(Tok::RBracket)) {
    ExprPtr dim = parseExpr();
    if (!dim)
      return nullptr;
    type->dims.push_back(std::move(dim));
    if (accept(Tok::RBracket))
      break;
    if (!expect(Tok::Comma, "between extents"))
      return nullptr;
  }
  type->range = rangeFrom(begin);
  return type;
}

std::unique_ptr<Kernel> Parser::parseKernel() {
  take(); // kernel
  auto kernel = std::make_unique<Kernel>();
  if (!expectIdent(kernel->name, kernel->loc, "a kernel name") ||
      !parseTemplateParams(kernel->templateParams) ||
      !parseParams(kernel->params))
    return nullptr;
  kernel->gridLoc = cur().loc;
  if (!acceptIdent("grid")) {
    error(cur().loc, "expected 'grid [...]' after the parameters of kernel '" +
                         kernel->name + "', found " + describe(cur()));
    return nullptr;
  }
  if (!expect(Tok::LBracket, "after 'grid'"))
    return nullptr;
  while (!accept(Tok::RBracket)) {
    ExprPtr extent = parseExpr();
    if (!extent)
      return nullptr;
    kernel->grid.push_back(std::move(extent));
    if (accept(Tok::RBracket))
      break;
    if (!expect(Tok::Comma, "between grid extents"))
      return nullptr;
  }
  while (!at(Tok::LBrace)) {
    if (acceptIdent("warps")) {
      if (!(kernel->warps = parseExpr()))
        return nullptr;
    } else if (acceptIdent("requires")) {
      do {
        ExprPtr cond = parseExpr();
        if (!cond)
          return nullptr;
        kernel->requires_.push_back(std::move(cond));
      } while (accept(Tok::Comma));
    } else if (acceptIdent("flops")) {
      if (!(kernel->flops = parseExpr()))
        return nullptr;
    } else if (acceptIdent("bytes")) {
      if (!(kernel->bytes = parseExpr()))
        return nullptr;
    } else {
      error(cur().loc, "expected 'warps', 'requires', 'flops', 'bytes' or '{' "
                       "in the header of kernel '" + kernel->name +
                           "', found " + describe(cur()));
      return nullptr;
    }
  }
  if (!parseBlock(kernel->body))
    return nullptr;
  return kernel;
}

std::unique_ptr<Function> Parser::parseFunction() {
  take(); // fn
  auto fn = std::make_unique<Function>();
  if (!expectIdent(fn->name, fn->loc, "a function name") ||
      !parseTemplateParams(fn->templateParams) || !parseParams(fn->params))
    return nullptr;
  if (accept(Tok::Arrow)) {
    fn->result = parseType();
    if (!fn->result)
      return nullptr;
  }
  if (!parseBlock(fn->body))
    return nullptr;
  return fn;
}

bool Parser::parseBlock(std::vector<StmtPtr> &body) {
  DepthGuard guard(depth);
  if (depth > kMaxDepth) {
    error(cur().loc, "blocks nested too deeply");
    return false;
  }
  if (!expect(Tok::LBrace, "to open a block"))
    return false;
  while (!accept(Tok::RBrace)) {
    if (at(Tok::Eof)) {
      error(cur().loc, "expected '}' before end of file");
      return false;
    }
    size_t before = pos;
    StmtPtr stmt = parseStatement();
    if (stmt) {
      body.push_back(std::move(stmt));
      continue;
    }
    // Recover at the next statement so that later errors are reported too.
    skipStatement();
    panic = false;
    if (pos == before)
      take();
  }
  return true;
}

StmtPtr Parser::parseStatement() {
  SourceLoc begin = cur().loc;
  if (atIdent("let") || atIdent("var")) {
    bool isLet = take().text == "let";
    auto stmt = std::make_unique<Stmt>(isLet ? StmtKind::Let : StmtKind::Var,
                                       SourceRange{begin});
    if (isLet && accept(Tok::LParen)) {
      stmt->destructure = true;
      while (!accept(Tok::RParen)) {
        std::string name;
        SourceLoc loc;
        if (!expectIdent(name, loc, "a name to bind"))
          return nullptr;
        stmt->names.push_back(name);
        stmt->nameLocs.push_back(loc);
        if (accept(Tok::RParen))
          break;
        if (!expect(Tok::Comma, "between names"))
          return nullptr;
      }
    } else {
      std::string name;
      SourceLoc loc;
      if (!expectIdent(name, loc, "a name to bind"))
        return nullptr;
      stmt->names.push_back(name);
      stmt->nameLocs.push_back(loc);
      if (accept(Tok::Colon) && !(stmt->type = parseType()))
        return nullptr;
    }
    if (!expect(Tok::Assign, "in the binding"))
      return nullptr;
    if (!(stmt->value = parseExpr()) || !expect(Tok::Semi, "after the binding"))
      return nullptr;
    stmt->range = rangeFrom(begin);
    return stmt;
  }
  if (acceptIdent("for")) {
    auto stmt = std::make_unique<Stmt>(StmtKind::For, SourceRange{begin});
    std::string name;
    SourceLoc loc;
    if (!expectIdent(name, loc, "a loop variable"))
      return nullptr;
    stmt->names.push_back(name);
    stmt->nameLocs.push_back(loc);
    if (!acceptIdent("in") || !acceptIdent("range")) {
      error(cur().loc, "expected 'in range(...)' after the loop variable");
      return nullptr;
    }
    if (!expect(Tok::LParen, "after 'range'") || !(stmt->start = parseExpr()) ||
        !expect(Tok::Comma, "between the loop bounds") ||
        !(stmt->end = parseExpr()))
      return nullptr;
    if (accept(Tok::Comma) && !(stmt->step = parseExpr()))
      return nullptr;
    if (!expect(Tok::RParen, "after the loop bounds"))
      return nullptr;
    if (acceptIdent("pipelined")) {
      if (!expect(Tok::LParen, "after 'pipelined'") ||
          !(stmt->stages = parseExpr()) ||
          !expect(Tok::RParen, "after the stage count"))
        return nullptr;
    }
    stmt->range = rangeFrom(begin);
    if (!parseBlock(stmt->body))
      return nullptr;
    return stmt;
  }
  if (acceptIdent("if")) {
    auto stmt = std::make_unique<Stmt>(StmtKind::If, SourceRange{begin});
    if (!(stmt->value = parseExpr()))
      return nullptr;
    stmt->range = rangeFrom(begin);
    if (!parseBlock(stmt->body))
      return nullptr;
    if (acceptIdent("else")) {
      stmt->hasElse = true;
      if (atIdent("if")) {
        StmtPtr nested = parseStatement();
        if (!nested)
          return nullptr;
        stmt->elseBody.push_back(std::move(nested));
      } else if (!parseBlock(stmt->elseBody)) {
        return nullptr;
      }
    }
    return stmt;
  }
  if (acceptIdent("static_assert")) {
    auto stmt = std::make_unique<Stmt>(StmtKind::StaticAssert, SourceRange{begin});
    if (!expect(Tok::LParen, "after 'static_assert'") ||
        !(stmt->value = parseExpr()))
      return nullptr;
    if (accept(Tok::Comma)) {
      if (!at(Tok::String)) {
        error(cur().loc, "expected a message string, found " + describe(cur()));
        return nullptr;
      }
      llvm::StringRef text = take().text;
      stmt->message = text.substr(1, text.size() - 2).str();
    }
    if (!expect(Tok::RParen, "after the static_assert") ||
        !expect(Tok::Semi, "after the static_assert"))
      return nullptr;
    stmt->range = rangeFrom(begin);
    return stmt;
  }
  if (acceptIdent("return")) {
    auto stmt = std::make_unique<Stmt>(StmtKind::Return, SourceRange{begin});
    if (!at(Tok::Semi) && !(stmt->value = parseExpr()))
      return nullptr;
    if (!expect(Tok::Semi, "after the return value"))
      return nullptr;
    stmt->range = rangeFrom(begin);
    return stmt;
  }
  ExprPtr expr = parseExpr();
  if (!expr)
    return nullptr;
  Tok op = cur().kind;
  if (op == Tok::Assign || op == Tok::PlusEq || op == Tok::MinusEq ||
      op == Tok::StarEq || op == Tok::SlashEq) {
    SourceLoc opLoc = cur().loc;
    take();
    if (expr->kind != ExprKind::Name) {
      error(opLoc, "only a 'var' name can be assigned to");
      return nullptr;
    }
    auto stmt = std::make_unique<Stmt>(StmtKind::Assign, SourceRange{begin});
    stmt->names.push_back(expr->name);
    stmt->nameLocs.push_back(expr->loc());
    stmt->op = op;
    if (!(stmt->value = parseExpr()) || !expect(Tok::Semi, "after the assignment"))
      return nullptr;
    stmt->range = rangeFrom(begin);
    return stmt;
  }
  if (!expect(Tok::Semi, "after the expression"))
    return nullptr;
  auto stmt = std::make_unique<Stmt>(StmtKind::Expr, SourceRange{begin});
  stmt->value = std::move(expr);
  stmt->range = rangeFrom(begin);
  return stmt;
}

ExprPtr Parser::parseExpr() {
  DepthGuard guard(depth);
  if (depth > kMaxDepth) {
    error(cur().loc, "expression nested too deeply: more than " +
                         std::to_string(kMaxDepth) +
                         " operators and brackets deep; split it with 'let'");
    return nullptr;
  }
  return parseTernary();
}

ExprPtr Parser::parseTernary() {
  SourceLoc begin = cur().loc;
  ExprPtr cond = parseBinary(1);
  if (!cond || !accept(Tok::Question))
    return cond;
  ExprPtr a = parseExpr();
  if (!a || !expect(Tok::Colon, "in the conditional expression"))
    return nullptr;
  ExprPtr b = parseExpr();
  if (!b)
    return nullptr;
  auto expr = std::make_unique<Expr>(ExprKind::Ternary, SourceRange{begin});
  expr->operands.push_back(std::move(cond));
  expr->operands.push_back(std::move(a));
  expr->operands.push_back(std::move(b));
  expr->range = rangeFrom(begin);
  return expr;
}

ExprPtr Parser::parseBinary(int minPrec) {
  SourceLoc begin = cur().loc;
  unsigned outerDepth = depth;
  llvm::scope_exit restoreDepth([&] { depth = outerDepth; });
  ExprPtr lhs = parseUnary();
  while (lhs) {
    Tok op = cur().kind;
    int prec = binaryPrecedence(op);
    if (prec < minPrec)
      return lhs;
    SourceLoc opLoc = cur().loc;
    if (++depth > kMaxDepth) {
      error(opLoc, "expression nested too deeply: more than " +
                       std::to_string(kMaxDepth) +
                       " operators and brackets deep; split it with 'let'");
      return nullptr;
    }
    take();
    ExprPtr rhs = parseBinary(prec + 1);
    if (!rhs)
      return nullptr;
    auto expr = std::make_unique<Expr>(ExprKind::Binary, SourceRange{begin});
    expr->op = op;
    expr->range = rangeFrom(begin);
    // Operand errors point at the operator, as clang does.
    expr->opLoc = opLoc;
    expr->operands.push_back(std::move(lhs));
    expr->operands.push_back(std::move(rhs));
    lhs = std::move(expr);
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  SourceLoc begin = cur().loc;
  if (at(Tok::Minus) || at(Tok::Bang)) {
    DepthGuard guard(depth);
    if (depth > kMaxDepth) {
      error(cur().loc, "expression nested too deeply: more than " +
                         std::to_string(kMaxDepth) +
                         " operators and brackets deep; split it with 'let'");
      return nullptr;
    }
    Tok op = take().kind;
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    auto expr = std::make_unique<Expr>(ExprKind::Unary, SourceRange{begin});
    expr->op = op;
    expr->operands.push_back(std::move(operand));
    expr->range = rangeFrom(begin);
    return expr;
  }
  ExprPtr primary = parsePrimary();
  if (!primary)
    return nullptr;
  return parsePostfix(std::move(primary));
}

ExprPtr Parser::parseIndexItem() {
  SourceLoc begin = cur().loc;
  if (at(Tok::Colon) && (ahead(1).kind == Tok::Comma || ahead(1).kind == Tok::RBracket)) {
    take();
    auto expr = std::make_unique<Expr>(ExprKind::Slice, rangeFrom(begin));
    return expr;
  }
  if (atIdent("None")) {
    take();
    return std::make_unique<Expr>(ExprKind::NoneIndex, rangeFrom(begin));
  }
  ExprPtr start = parseExpr();
  if (!start || !accept(Tok::Colon))
    return start;
  ExprPtr end = parseExpr();
  if (!end)
    return nullptr;
  auto expr = std::make_unique<Expr>(ExprKind::Slice, SourceRange{begin});
  expr->operands.push_back(std::move(start));
  expr->operands.push_back(std::move(end));
  expr->range = rangeFrom(begin);
  return expr;
}

ExprPtr Parser::parsePostfix(ExprPtr base) {
  SourceLoc begin = base->loc();
  while (true) {
    if (accept(Tok::LBracket)) {
      auto expr = std::make_unique<Expr>(ExprKind::Index, SourceRange{begin});
      expr->operands.push_back(std::move(base));
      while (!accept(Tok::RBracket)) {
        ExprPtr item = parseIndexItem();
        if (!item)
          return nullptr;
        expr->operands.push_back(std::move(item));
        if (accept(Tok::RBracket))
          break;
        if (!expect(Tok::Comma, "between indices"))
          return nullptr;
      }
      expr->range = rangeFrom(begin);
      base = std::move(expr);
      continue;
    }
    if (at(Tok::Dot)) {
      take();
      auto expr = std::make_unique<Expr>(ExprKind::Method, SourceRange{begin});
      SourceLoc loc;
      if (!expectIdent(expr->name, loc, "a method name after '.'"))
        return nullptr;
      expr->operands.push_back(std::move(base));
      if (!parseCallArgs(*expr))
        return nullptr;
      expr->range = rangeFrom(begin);
      base = std::move(expr);
      continue;
    }
    return base;
  }
}

bool Parser::parseCallArgs(Expr &call) {
  if (!expect(Tok::LParen, "to open the argument list"))
    return false;
  call.hasCallArgs = true;
  while (!accept(Tok::RParen)) {
    if (at(Tok::Ident) && ahead(1).kind == Tok::Assign) {
      NamedArg arg;
      arg.loc = cur().loc;
      arg.name = take().text.str();
      take();
      if (!(arg.value = parseExpr()))
        return false;
      call.namedArgs.push_back(std::move(arg));
    } else {
      if (!call.namedArgs.empty()) {
        error(cur().loc, "positional argument after a named argument");
        return false;
      }
      ExprPtr arg = parseExpr();
      if (!arg)
        return false;
      call.operands.push_back(std::move(arg));
    }
    if (accept(Tok::RParen))
      break;
    if (!expect(Tok::Comma, "between arguments"))
      return false;
  }
  return true;
}

ExprPtr Parser::parsePrimary() {
  SourceLoc begin = cur().loc;
  const Token &t = cur();
  switch (t.kind) {
  case Tok::Int: {
    auto expr = std::make_unique<Expr>(ExprKind::Int, SourceRange{begin});
    uint64_t value = 0;
    if (t.text.getAsInteger(10, value)) {
      error(begin, "integer literal " + t.text + " does not fit in 64 bits");
      return nullptr;
    }
    expr->intValue = value;
    take();
    expr->range = rangeFrom(begin);
    return expr;
  }
  case Tok::Float: {
    auto expr = std::make_unique<Expr>(ExprKind::Float, SourceRange{begin});
    expr->floatValue = std::strtod(t.text.str().c_str(), nullptr);
    take();
    expr->range = rangeFrom(begin);
    return expr;
  }
  case Tok::LParen: {
    take();
    ExprPtr first = parseExpr();
    if (!first)
      return nullptr;
    if (accept(Tok::RParen))
      return first;
    auto tuple = std::make_unique<Expr>(ExprKind::Tuple, SourceRange{begin});
    tuple->operands.push_back(std::move(first));
    while (accept(Tok::Comma)) {
      if (at(Tok::RParen))
        break;
      ExprPtr element = parseExpr();
      if (!element)
        return nullptr;
      tuple->operands.push_back(std::move(element));
    }
    if (!expect(Tok::RParen, "to close the parenthesis"))
      return nullptr;
    tuple->range = rangeFrom(begin);
    return tuple;
  }
  case Tok::Ident:
    break;
  default:
    error(begin, "expected an expression, found " + describe(t));
    return nullptr;
  }
  llvm::StringRef name = t.text;
  take();
  if (name == "true" || name == "false") {
    auto expr = std::make_unique<Expr>(ExprKind::Bool, rangeFrom(begin));
    expr->boolValue = name == "true";
    return expr;
  }
  if (name == "inf") {
    auto expr = std::make_unique<Expr>(ExprKind::Float, rangeFrom(begin));
    expr->floatValue = HUGE_VAL;
    return expr;
  }
  bool templated = (isTemplateBuiltin(name) || fnNames.contains(name)) && at(Tok::Lt);
  bool callable = templated || at(Tok::LParen);
  if (!callable) {
    auto expr = std::make_unique<Expr>(ExprKind::Name, rangeFrom(begin));
    expr->name = name.str();
    return expr;
  }
  auto call = std::make_unique<Expr>(ExprKind::Call, SourceRange{begin});
  call->name = name.str();
  if (templated) {
    take();
    call->hasTemplateArgs = true;
    while (!acceptCloseAngle()) {
      ExprPtr arg = parseBinary(8);
      if (!arg)
        return nullptr;
      call->templateArgs.push_back(std::move(arg));
      if (acceptCloseAngle())
        break;
      if (!expect(Tok::Comma, "between template arguments"))
        return nullptr;
    }
    const BuiltinSignature *builtin = lookupBuiltin(name);
    if (builtin && builtin->templateArgs == BuiltinTemplate::DTypeShape &&
        accept(Tok::LBracket)) {
      call->hasShape = true;
      while (!accept(Tok::RBracket)) {
        ExprPtr dim = parseExpr();
        if (!dim)
          return nullptr;
        call->shape.push_back(std::move(dim));
        if (accept(Tok::RBracket))
          break;
        if (!expect(Tok::Comma, "between extents"))
          return nullptr;
      }
    }
  }
  if (at(Tok::LParen) && !parseCallArgs(*call))
    return nullptr;
  call->range = rangeFrom(begin);
  return call;
}

Program tegula::frontend::parseProgram(DiagEngine &diags) {
  Parser parser(diags);
  return parser.parse();
}
