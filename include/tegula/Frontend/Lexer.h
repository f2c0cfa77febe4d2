//===- Lexer.h - Tokens of the tile language --------------------*- C++ -*-===//

#ifndef TEGULA_FRONTEND_LEXER_H
#define TEGULA_FRONTEND_LEXER_H

#include "tegula/Frontend/Diagnostics.h"

#include <vector>

namespace tegula::frontend {

enum class Tok {
  Eof,
  Ident,
  Int,
  Float,
  String,
  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Semi, Colon, Dot, Question, Arrow,
  Plus, Minus, Star, Slash, Percent,
  Amp, Pipe, Caret, Shl, Shr, AmpAmp, PipePipe, Bang,
  Lt, Gt, Le, Ge, EqEq, Ne, Assign,
  PlusEq, MinusEq, StarEq, SlashEq,
};

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text;
  SourceLoc loc;
};

/// Splits the whole buffer into tokens; reports bad characters and ends
/// with one Eof token.
std::vector<Token> lex(DiagEngine &diags);

const char *tokSpelling(Tok kind);

/// C's precedence of a binary operator (1: `||` ... 10: `* / %`), or -1
/// for a token that is not one.
int binaryPrecedence(Tok kind);

/// `== != < > <= >=`.
bool isComparison(Tok kind);

} // namespace tegula::frontend

#endif // TEGULA_FRONTEND_LEXER_H
