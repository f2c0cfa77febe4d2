//===- Parser.h - The recursive-descent parser's state ----------*- C++ -*-===//
//
// One Parser class over three files: items (kernels, fns, parameters,
// types; error recovery) in Parser.cpp, statements in ParseStmt.cpp,
// expressions in ParseExpr.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_FRONTEND_PARSER_PARSER_H
#define TEGULA_LIB_FRONTEND_PARSER_PARSER_H

#include "tegula/Frontend/AST.h"

#include "../Builtins.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

namespace tegula::frontend::parser {

/// Nesting deeper than this is reported instead of recursed into, so that
/// malformed input cannot exhaust the stack. Each operator of a chain such as
/// `a + b + c` counts as one level, because it nests the tree one level deeper
/// and every later walk of the tree recurses through it.
inline constexpr unsigned kMaxDepth = 200;

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

inline bool isTemplateBuiltin(llvm::StringRef name) {
  const BuiltinSignature *builtin = lookupBuiltin(name);
  return builtin && builtin->templateArgs != BuiltinTemplate::None;
}

} // namespace tegula::frontend::parser

#endif // TEGULA_LIB_FRONTEND_PARSER_PARSER_H
