//===- Expr.cpp - Integer expressions of a kernel bundle ------------------===//

#include "tegula/Runtime/Expr.h"

#include "tegula/Runtime/Text.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>

namespace tegula::rt {

namespace {
enum class Op : uint8_t {
  Push, // value: the literal
  Load, // value: the index of the name in Expr::names()
  Neg,
  Not,
  Pos,
  Or,
  And,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  CDiv,
  Min,
  Max,
};

struct BinaryOp {
  const char *spelling;
  Op op;
  int precedence; // C's, higher binds tighter
};
// Longer spellings first, so "<=" is not read as "<".
constexpr BinaryOp kBinaryOps[] = {
    {"||", Op::Or, 1}, {"&&", Op::And, 2}, {"==", Op::Eq, 3}, {"!=", Op::Ne, 3},
    {"<=", Op::Le, 4}, {">=", Op::Ge, 4},  {"<", Op::Lt, 4},  {">", Op::Gt, 4},
    {"+", Op::Add, 5}, {"-", Op::Sub, 5},  {"*", Op::Mul, 6}, {"/", Op::Div, 6},
    {"%", Op::Mod, 6},
};

const char *spelling(Op op) {
  for (const BinaryOp &b : kBinaryOps)
    if (b.op == op)
      return b.spelling;
  switch (op) {
  case Op::CDiv:
    return "cdiv";
  case Op::Min:
    return "min";
  case Op::Max:
    return "max";
  default:
    return "?";
  }
}

struct Instr {
  Op op;
  int64_t value = 0;
};
} // namespace

struct Expr::Code {
  std::vector<Instr> instrs;
};

namespace {
/// Operator precedence with explicit stacks (shunting-yard), emitting
/// postfix code, with C precedence: || && (== !=) (< <= > >=) (+ -)
/// (* / %) prefix.
class Parser {
public:
  Parser(std::string_view text, std::vector<std::string> &names,
         std::vector<Instr> &out)
      : text(text), names(names), out(out) {}

  bool parse(std::string &error) {
    if (!run() && err.empty())
      fail("internal error");
    if (err.empty())
      return true;
    error = "in expression '" + abbreviate(text) + "': " + err + " at column " +
            std::to_string(errPos + 1);
    return false;
  }

private:
  /// What waits on the stack: an operator for its right operand, or an
  /// open bracket (a call's counts its arguments).
  struct Pending {
    enum Kind { Prefix, Binary, Paren, Call } kind;
    Op op = Op::Push;
    int precedence = 0;
    unsigned args = 0;
  };

  std::string_view text;
  std::vector<std::string> &names;
  std::vector<Instr> &out;
  std::vector<Pending> stack;
  std::map<std::string, size_t> nameIndex; // into `names`
  size_t pos = 0;
  std::string err;
  size_t errPos = 0;

  bool fail(const std::string &message) {
    if (err.empty()) {
      err = message;
      errPos = pos;
    }
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }

  /// The innermost open bracket, or null.
  const Pending *innermost() const {
    for (auto it = stack.rbegin(); it != stack.rend(); ++it)
      if (it->kind == Pending::Paren || it->kind == Pending::Call)
        return &*it;
    return nullptr;
  }

  /// Emits waiting operators that bind at least as tightly as
  /// `precedence`, stopping at an open bracket. Prefix operators bind
  /// tightest.
  void reduce(int precedence) {
    while (!stack.empty()) {
      const Pending &top = stack.back();
      if (top.kind == Pending::Paren || top.kind == Pending::Call)
        return;
      if (top.kind == Pending::Binary && top.precedence < precedence)
        return;
      out.push_back({top.op});
      stack.pop_back();
    }
  }

  /// "unexpected '$'", or the byte in hex if it is not printable ASCII.
  std::string unexpectedChar() const {
    unsigned char c = (unsigned char)text[pos];
    if (c >= 0x20 && c < 0x7f)
      return "unexpected '" + std::string(1, char(c)) + "'";
    const char *hex = "0123456789abcdef";
    return std::string("unexpected byte 0x") + hex[c >> 4] + hex[c & 15];
  }

  /// The message for an unexpected character where an operator may stand.
  bool unexpected() {
    const Pending *open = innermost();
    if (!open)
      return fail(unexpectedChar());
    return fail(open->kind == Pending::Paren ? "expected ')'"
                                             : "expected ',' or ')'");
  }

  bool run() {
    bool wantOperand = true;
    for (;;) {
      skipSpace();
      if (!wantOperand && pos == text.size())
        break;
      if (!(wantOperand ? operand(wantOperand) : afterOperand(wantOperand)))
        return false;
    }
    reduce(0);
    if (const Pending *open = innermost())
      return fail(open->kind == Pending::Paren ? "expected ')'"
                                               : "expected ',' or ')'");
    return true;
  }

  /// Reads a prefix operator, an opening bracket or a complete operand.
  bool operand(bool &wantOperand) {
    if (pos == text.size())
      return fail("expected an expression");
    char c = text[pos];
    if ((c == '-' || c == '!' || c == '+') && text.substr(pos, 2) != "!=") {
      Op op = c == '-' ? Op::Neg : c == '!' ? Op::Not : Op::Pos;
      stack.push_back({Pending::Prefix, op});
      ++pos;
      return true;
    }
    if (c == '(') {
      stack.push_back({Pending::Paren});
      ++pos;
      return true;
    }
    if (std::isdigit((unsigned char)c)) {
      int64_t value = 0;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[pos] - '0', &value))
          return fail("integer literal does not fit in 64 bits");
        ++pos;
      }
      if (pos < text.size() && (std::isalpha((unsigned char)text[pos]) ||
                                text[pos] == '_' || text[pos] == '.'))
        return fail("malformed integer literal");
      out.push_back({Op::Push, value});
      wantOperand = false;
      return true;
    }
    if (!std::isalpha((unsigned char)c) && c != '_')
      return fail(unexpectedChar());
    size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
      ++pos;
    std::string name(text.substr(start, pos - start));
    skipSpace();
    if (pos < text.size() && text[pos] == '(' &&
        (name == "stride" || name == "align"))
      return viewName(name, wantOperand);
    if (pos < text.size() && text[pos] == '(') {
      Op op = name == "cdiv"  ? Op::CDiv
              : name == "min" ? Op::Min
              : name == "max" ? Op::Max
                              : Op::Push;
      if (op == Op::Push) {
        pos = start;
        return fail("unknown function '" + name +
                    "' (expected cdiv, min, max, stride or align)");
      }
      ++pos;
      stack.push_back({Pending::Call, op, 0, 1});
      return true;
    }
    wantOperand = false;
    if (name == "true" || name == "false") {
      out.push_back({Op::Push, name == "true"});
      return true;
    }
    load(name);
    return true;
  }

  void load(const std::string &name) {
    auto [it, added] = nameIndex.try_emplace(name, names.size());
    if (added)
      names.push_back(name);
    out.push_back({Op::Load, int64_t(it->second)});
  }

  /// Reads an identifier at `pos` into `ident`.
  bool identifier(std::string &ident) {
    skipSpace();
    size_t start = pos;
    if (pos < text.size() &&
        (std::isalpha((unsigned char)text[pos]) || text[pos] == '_'))
      while (pos < text.size() &&
             (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
        ++pos;
    ident = std::string(text.substr(start, pos - start));
    return !ident.empty() || fail("expected a tensor name");
  }

  /// `stride(x, d)` or `align(x)` (at the '('): a value of tensor x's view
  /// that the launcher binds, loaded under its canonical spelling
  /// (strideName, alignName) so that every launcher's environment names it
  /// alike.
  bool viewName(const std::string &function, bool &wantOperand) {
    ++pos;
    std::string tensor;
    if (!identifier(tensor))
      return false;
    std::optional<int64_t> dim;
    skipSpace();
    if (function == "stride") {
      if (pos == text.size() || text[pos] != ',')
        return fail("expected ',' and a dimension");
      ++pos;
      skipSpace();
      int64_t value = 0;
      size_t digits = pos;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]) &&
             value < 1000)
        value = value * 10 + (text[pos++] - '0');
      if (pos == digits || value >= 1000)
        return fail("expected a dimension (an integer below 1000)");
      dim = value;
      skipSpace();
    }
    if (pos == text.size() || text[pos] != ')')
      return fail("expected ')'");
    ++pos;
    load(dim ? strideName(tensor, *dim) : alignName(tensor));
    wantOperand = false;
    return true;
  }

  /// Reads a binary operator, ',' or ')' after an operand.
  bool afterOperand(bool &wantOperand) {
    for (const BinaryOp &b : kBinaryOps) {
      std::string_view s = b.spelling;
      if (text.substr(pos, s.size()) != s)
        continue;
      // Left associative: an equal precedence on the stack goes first.
      reduce(b.precedence);
      stack.push_back({Pending::Binary, b.op, b.precedence});
      pos += s.size();
      wantOperand = true;
      return true;
    }
    char c = text[pos];
    if (c != ',' && c != ')')
      return unexpected();
    reduce(0);
    if (stack.empty())
      return unexpected();
    Pending &open = stack.back();
    if (c == ',') {
      if (open.kind != Pending::Call)
        return unexpected();
      ++open.args;
      ++pos;
      wantOperand = true;
      return true;
    }
    ++pos;
    if (open.kind == Pending::Call) {
      if (open.args != 2)
        return fail(std::string(spelling(open.op)) +
                    " takes 2 arguments, got " + std::to_string(open.args));
      out.push_back({open.op});
    }
    stack.pop_back();
    return true;
  }
};

bool apply(Op op, int64_t a, int64_t b, int64_t &result, std::string &error) {
  const char *name = spelling(op);
  auto overflow = [&] {
    error = std::string("64-bit overflow in '") + name + "' (" +
            std::to_string(a) + ", " + std::to_string(b) + ")";
    return false;
  };
  switch (op) {
  case Op::Add:
    return __builtin_add_overflow(a, b, &result) ? overflow() : true;
  case Op::Sub:
    return __builtin_sub_overflow(a, b, &result) ? overflow() : true;
  case Op::Mul:
    return __builtin_mul_overflow(a, b, &result) ? overflow() : true;
  case Op::Div:
  case Op::Mod:
  case Op::CDiv:
    if (b == 0) {
      error = std::string("division by zero in '") + name + "' (" +
              std::to_string(a) + " " + name + " 0)";
      return false;
    }
    if (a == INT64_MIN && b == -1)
      return overflow();
    if (op == Op::Div)
      result = a / b;
    else if (op == Op::Mod)
      result = a % b;
    else // Ceiling division on top of truncating division.
      result = a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
    return true;
  case Op::Min:
    result = std::min(a, b);
    return true;
  case Op::Max:
    result = std::max(a, b);
    return true;
  case Op::Lt:
    result = a < b;
    return true;
  case Op::Le:
    result = a <= b;
    return true;
  case Op::Gt:
    result = a > b;
    return true;
  case Op::Ge:
    result = a >= b;
    return true;
  case Op::Eq:
    result = a == b;
    return true;
  case Op::Ne:
    result = a != b;
    return true;
  case Op::And:
    result = a != 0 && b != 0;
    return true;
  case Op::Or:
    result = a != 0 || b != 0;
    return true;
  default:
    error = "internal error: not a binary operator";
    return false;
  }
}
} // namespace

bool Expr::parse(std::string_view text, Expr &result, std::string &error) {
  Expr expr;
  expr.source = std::string(text);
  auto code = std::make_shared<Code>();
  Parser parser(text, expr.nameList, code->instrs);
  if (!parser.parse(error))
    return false;
  expr.code = std::move(code);
  result = std::move(expr);
  return true;
}

bool Expr::eval(const Env &env, int64_t &result, std::string &error) const {
  if (!code) {
    error = "empty expression";
    return false;
  }
  auto fail = [&](const std::string &message) {
    error = "cannot evaluate '" + abbreviate(source) + "': " + message;
    return false;
  };
  std::vector<int64_t> stack;
  for (const Instr &in : code->instrs) {
    switch (in.op) {
    case Op::Push:
      stack.push_back(in.value);
      continue;
    case Op::Load: {
      const std::string &name = nameList[size_t(in.value)];
      auto it = env.find(name);
      if (it == env.end())
        return fail("'" + name + "' has no value");
      stack.push_back(it->second);
      continue;
    }
    case Op::Neg:
      if (stack.back() == INT64_MIN)
        return fail("64-bit overflow in unary '-'");
      stack.back() = -stack.back();
      continue;
    case Op::Not:
      stack.back() = stack.back() == 0;
      continue;
    case Op::Pos:
      continue;
    default:
      break;
    }
    int64_t b = stack.back();
    stack.pop_back();
    std::string message;
    if (!apply(in.op, stack.back(), b, stack.back(), message))
      return fail(message);
  }
  if (stack.size() != 1)
    return fail("internal error: malformed code");
  result = stack.back();
  return true;
}

bool Expr::isName() const {
  return code && code->instrs.size() == 1 && code->instrs[0].op == Op::Load;
}

bool Expr::isLiteral(int64_t *value) const {
  if (!code || code->instrs.size() != 1 || code->instrs[0].op != Op::Push)
    return false;
  if (value)
    *value = code->instrs[0].value;
  return true;
}

std::string strideName(const std::string &tensor, int64_t dim) {
  return "stride(" + tensor + ", " + std::to_string(dim) + ")";
}

std::string alignName(const std::string &tensor) {
  return "align(" + tensor + ")";
}

bool parseViewName(const std::string &name, std::string &tensor, int64_t &dim) {
  size_t open = name.find('(');
  if (open == std::string::npos || name.back() != ')')
    return false;
  std::string function = name.substr(0, open);
  std::string inside = name.substr(open + 1, name.size() - open - 2);
  size_t comma = inside.find(", ");
  if (function == "align" && comma == std::string::npos) {
    tensor = inside;
    dim = -1;
    return true;
  }
  if (function != "stride" || comma == std::string::npos)
    return false;
  tensor = inside.substr(0, comma);
  std::string digits = inside.substr(comma + 2);
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit((unsigned char)c); }))
    return false;
  dim = std::atoi(digits.c_str());
  return true;
}

bool evalExpr(std::string_view text, const Env &env, int64_t &result,
              std::string &error) {
  Expr expr;
  return Expr::parse(text, expr, error) && expr.eval(env, result, error);
}

} // namespace tegula::rt
