//===- Lexer.cpp - Tokens of the tile language ----------------------------===//

#include "tegula/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

using namespace tegula::frontend;

int tegula::frontend::binaryPrecedence(Tok kind) {
  switch (kind) {
  case Tok::PipePipe: return 1;
  case Tok::AmpAmp: return 2;
  case Tok::Pipe: return 3;
  case Tok::Caret: return 4;
  case Tok::Amp: return 5;
  case Tok::EqEq: case Tok::Ne: return 6;
  case Tok::Lt: case Tok::Gt: case Tok::Le: case Tok::Ge: return 7;
  case Tok::Shl: case Tok::Shr: return 8;
  case Tok::Plus: case Tok::Minus: return 9;
  case Tok::Star: case Tok::Slash: case Tok::Percent: return 10;
  default: return -1;
  }
}

bool tegula::frontend::isComparison(Tok kind) {
  int prec = binaryPrecedence(kind);
  return prec == 6 || prec == 7;
}

const char *tegula::frontend::tokSpelling(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Ident: return "identifier";
  case Tok::Int: return "integer";
  case Tok::Float: return "number";
  case Tok::String: return "string";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Comma: return "','";
  case Tok::Semi: return "';'";
  case Tok::Colon: return "':'";
  case Tok::Dot: return "'.'";
  case Tok::Question: return "'?'";
  case Tok::Arrow: return "'->'";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::Percent: return "'%'";
  case Tok::Amp: return "'&'";
  case Tok::Pipe: return "'|'";
  case Tok::Caret: return "'^'";
  case Tok::Shl: return "'<<'";
  case Tok::Shr: return "'>>'";
  case Tok::AmpAmp: return "'&&'";
  case Tok::PipePipe: return "'||'";
  case Tok::Bang: return "'!'";
  case Tok::Lt: return "'<'";
  case Tok::Gt: return "'>'";
  case Tok::Le: return "'<='";
  case Tok::Ge: return "'>='";
  case Tok::EqEq: return "'=='";
  case Tok::Ne: return "'!='";
  case Tok::Assign: return "'='";
  case Tok::PlusEq: return "'+='";
  case Tok::MinusEq: return "'-='";
  case Tok::StarEq: return "'*='";
  case Tok::SlashEq: return "'/='";
  }
  return "token";
}

std::vector<Token> tegula::frontend::lex(DiagEngine &diags) {
  llvm::StringRef text = diags.getText();
  std::vector<Token> tokens;
  uint32_t pos = 0, line = 1, col = 1;
  auto advance = [&](uint32_t n) {
    for (uint32_t i = 0; i < n && pos < text.size(); ++i, ++pos) {
      if (text[pos] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto peek = [&](uint32_t ahead) -> char {
    return pos + ahead < text.size() ? text[pos + ahead] : '\0';
  };
  while (pos < text.size()) {
    char c = text[pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(1);
      continue;
    }
    if (c == '/' && peek(1) == '/') {
      while (pos < text.size() && text[pos] != '\n')
        advance(1);
      continue;
    }
    SourceLoc loc{pos, line, col};
    auto push = [&](Tok kind, uint32_t length) {
      tokens.push_back({kind, text.substr(pos, length), loc});
      advance(length);
    };
    if (llvm::isAlpha(c) || c == '_') {
      uint32_t n = 1;
      while (pos + n < text.size() &&
             (llvm::isAlnum(text[pos + n]) || text[pos + n] == '_'))
        ++n;
      push(Tok::Ident, n);
      continue;
    }
    if (llvm::isDigit(c) || (c == '.' && llvm::isDigit(peek(1)))) {
      uint32_t n = 0;
      bool isFloat = false;
      while (pos + n < text.size() && llvm::isDigit(text[pos + n]))
        ++n;
      if (pos + n < text.size() && text[pos + n] == '.' &&
          !(pos + n + 1 < text.size() && text[pos + n + 1] == '.')) {
        isFloat = true;
        ++n;
        while (pos + n < text.size() && llvm::isDigit(text[pos + n]))
          ++n;
      }
      if (pos + n < text.size() && (text[pos + n] == 'e' || text[pos + n] == 'E')) {
        uint32_t m = n + 1;
        if (pos + m < text.size() && (text[pos + m] == '+' || text[pos + m] == '-'))
          ++m;
        if (pos + m < text.size() && llvm::isDigit(text[pos + m])) {
          isFloat = true;
          n = m;
          while (pos + n < text.size() && llvm::isDigit(text[pos + n]))
            ++n;
        }
      }
      push(isFloat ? Tok::Float : Tok::Int, n);
      continue;
    }
    if (c == '"') {
      uint32_t n = 1;
      while (pos + n < text.size() && text[pos + n] != '"' && text[pos + n] != '\n')
        ++n;
      if (pos + n >= text.size() || text[pos + n] != '"') {
        diags.error(loc, "unterminated string literal");
        advance(n);
        continue;
      }
      push(Tok::String, n + 1);
      continue;
    }
    char d = peek(1);
    switch (c) {
    case '(': push(Tok::LParen, 1); continue;
    case ')': push(Tok::RParen, 1); continue;
    case '[': push(Tok::LBracket, 1); continue;
    case ']': push(Tok::RBracket, 1); continue;
    case '{': push(Tok::LBrace, 1); continue;
    case '}': push(Tok::RBrace, 1); continue;
    case ',': push(Tok::Comma, 1); continue;
    case ';': push(Tok::Semi, 1); continue;
    case ':': push(Tok::Colon, 1); continue;
    case '.': push(Tok::Dot, 1); continue;
    case '?': push(Tok::Question, 1); continue;
    case '^': push(Tok::Caret, 1); continue;
    case '%': push(Tok::Percent, 1); continue;
    case '+': d == '=' ? push(Tok::PlusEq, 2) : push(Tok::Plus, 1); continue;
    case '*': d == '=' ? push(Tok::StarEq, 2) : push(Tok::Star, 1); continue;
    case '/': d == '=' ? push(Tok::SlashEq, 2) : push(Tok::Slash, 1); continue;
    case '-':
      if (d == '>') push(Tok::Arrow, 2);
      else if (d == '=') push(Tok::MinusEq, 2);
      else push(Tok::Minus, 1);
      continue;
    case '&': d == '&' ? push(Tok::AmpAmp, 2) : push(Tok::Amp, 1); continue;
    case '|': d == '|' ? push(Tok::PipePipe, 2) : push(Tok::Pipe, 1); continue;
    case '!': d == '=' ? push(Tok::Ne, 2) : push(Tok::Bang, 1); continue;
    case '=': d == '=' ? push(Tok::EqEq, 2) : push(Tok::Assign, 1); continue;
    case '<':
      if (d == '<') push(Tok::Shl, 2);
      else if (d == '=') push(Tok::Le, 2);
      else push(Tok::Lt, 1);
      continue;
    case '>':
      if (d == '>') push(Tok::Shr, 2);
      else if (d == '=') push(Tok::Ge, 2);
      else push(Tok::Gt, 1);
      continue;
    default:
      break;
    }
    if (static_cast<unsigned char>(c) >= 32 && static_cast<unsigned char>(c) < 127)
      diags.error(loc, llvm::Twine("unexpected character '") + llvm::Twine(c) + "'");
    else
      diags.error(loc, "unexpected byte 0x" + llvm::utohexstr(static_cast<unsigned char>(c)));
    advance(1);
  }
  tokens.push_back({Tok::Eof, text.substr(text.size()), {pos, line, col}});
  return tokens;
}
