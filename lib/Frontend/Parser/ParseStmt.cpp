//===- ParseStmt.cpp - Statements and blocks ------------------------------===//

#include "Parser.h"

#include "llvm/ADT/ScopeExit.h"

#include <cmath>
#include <cstdlib>

using namespace tegula::frontend;
using namespace tegula::frontend::parser;

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
  if (atIdent("static_assert") || atIdent("device_assert")) {
    bool device = take().text == "device_assert";
    auto stmt = std::make_unique<Stmt>(device ? StmtKind::DeviceAssert
                                              : StmtKind::StaticAssert,
                                       SourceRange{begin});
    if (!expect(Tok::LParen,
                device ? "after 'device_assert'" : "after 'static_assert'") ||
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
    const char *after =
        device ? "after the device_assert" : "after the static_assert";
    if (!expect(Tok::RParen, after) || !expect(Tok::Semi, after))
      return nullptr;
    stmt->range = rangeFrom(begin);
    return stmt;
  }
  // `break;` (a name `break` followed by anything else stays a name).
  if (atIdent("break") && ahead(1).kind == Tok::Semi) {
    take();
    take();
    auto stmt = std::make_unique<Stmt>(StmtKind::Break, SourceRange{begin});
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
    if (!(stmt->value = parseExpr()) ||
        !expect(Tok::Semi, "after the assignment"))
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
