//===- Parser.cpp - Recursive-descent parser of the tile language ---------===//
//
// Programs and their items: kernels, fns, parameters and types, and the
// recovery that skips to the next statement or item after an error.
//
//===----------------------------------------------------------------------===//

#include "Parser.h"

#include "llvm/ADT/ScopeExit.h"

#include <cmath>
#include <cstdlib>

using namespace tegula::frontend;
using namespace tegula::frontend::parser;

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
                       "template parameter '" +
                           param.name + "', found " + describe(cur()));
      return false;
    }
    if (accept(Tok::Assign)) {
      param.defaultValue = parseBinary(8); // stops before '>'
      if (!param.defaultValue)
        return false;
      // Below the shifts, '>' would close the list: such a default needs
      // parentheses, which the message says instead of "expected ','".
      if (Tok op = cur().kind;
          op == Tok::Lt || op == Tok::Le || op == Tok::Ge || op == Tok::EqEq ||
          op == Tok::Ne || op == Tok::AmpAmp || op == Tok::PipePipe ||
          op == Tok::Question || op == Tok::Amp || op == Tok::Pipe ||
          op == Tok::Caret) {
        error(cur().loc, "the default of template parameter '" + param.name +
                             "' continues with " + describe(cur()) +
                             ": put a default with comparisons, logic or "
                             "'?:' in parentheses ('>' closes the template "
                             "parameters), e.g. (K <= 64 ? 64 : 16)");
        return false;
      }
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
    type->dtype = std::make_unique<Expr>(
        ExprKind::Name,
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
    error(cur().loc,
          "expected '>' after the element type, found " + describe(cur()));
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
  SourceLoc stridedLoc = cur().loc;
  if (acceptIdent("strided")) {
    if (kind != TypeKind::Tensor) {
      error(stridedLoc, "'strided' applies only to tensor parameters");
      return nullptr;
    }
    type->isStrided = true;
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
    } else if (acceptIdent("blocks_per_sm")) {
      if (!(kernel->blocksPerSm = parseExpr()))
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
    } else if (SourceLoc exactLoc = cur().loc; acceptIdent("exact_math")) {
      if (kernel->exactMath) {
        error(exactLoc, "'exact_math' appears twice in the header of kernel '" +
                            kernel->name + "'");
        return nullptr;
      }
      kernel->exactMath = true;
    } else {
      error(cur().loc, "expected 'warps', 'blocks_per_sm', 'requires', "
                       "'flops', 'bytes', 'exact_math' or '{' in the header "
                       "of kernel '" +
                           kernel->name + "', found " + describe(cur()));
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

Program tegula::frontend::parseProgram(DiagEngine &diags) {
  Parser parser(diags);
  return parser.parse();
}
