//===- ParseExpr.cpp - Expressions: precedence climbing to primaries ------===//

#include "Parser.h"

#include "llvm/ADT/ScopeExit.h"

#include <cmath>
#include <cstdlib>

using namespace tegula::frontend;
using namespace tegula::frontend::parser;

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
    // Python's power operator lexes as '*' '*'.
    if (op == Tok::Star && (at(Tok::Star) || at(Tok::StarEq)) &&
        cur().loc.offset == opLoc.offset + 1) {
      error(opLoc, "'**' is not an operator; write pow(x, y) for x to the "
                   "power y (floats), or x * x for a square");
      return nullptr;
    }
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
  if (at(Tok::Colon) &&
      (ahead(1).kind == Tok::Comma || ahead(1).kind == Tok::RBracket)) {
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
  bool templated =
      (isTemplateBuiltin(name) || fnNames.contains(name)) && at(Tok::Lt);
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
