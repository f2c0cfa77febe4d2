//===- Expr.cpp - Integer expressions of a kernel bundle ------------------===//

#include "tegula/Runtime/Expr.h"

#include <cctype>

namespace tegula::rt {

struct Expr::Node {
  enum Kind { Num, Name, Unary, Binary, Call } kind;
  int64_t value = 0;
  std::string text; // name, operator or function
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {
using NodePtr = std::shared_ptr<const Expr::Node>;

/// Recursive descent with C precedence: || && (== !=) (< <= > >=) (+ -)
/// (* / %) unary. Nesting is bounded, each operator of a chain such as
/// `a && b && c` counting one level, because evaluating and freeing the tree
/// recurse through every level: a bundle cannot exhaust the stack.
class Parser {
public:
  Parser(std::string_view text, std::vector<std::string> &names)
      : text(text), names(names) {}

  NodePtr parseAll(std::string &error) {
    NodePtr node = parseBinary(0);
    skipSpace();
    if (node && pos != text.size())
      fail("unexpected '" + std::string(1, text[pos]) + "'");
    if (!err.empty()) {
      // A long expression is quoted by its start, with its length.
      std::string quoted = text.size() <= 120
                               ? std::string(text)
                               : std::string(text.substr(0, 60)) + "... (" +
                                     std::to_string(text.size()) +
                                     " characters)";
      error = "in expression '" + quoted + "': " + err + " at column " +
              std::to_string(errPos + 1);
      return nullptr;
    }
    return node;
  }

private:
  std::string_view text;
  std::vector<std::string> &names;
  size_t pos = 0;
  std::string err;
  size_t errPos = 0;
  unsigned depth = 0;
  static constexpr unsigned kMaxDepth = 1000;

  /// Enters one more level of nesting; false (and an error) past the limit.
  bool deeper() {
    if (++depth <= kMaxDepth)
      return true;
    fail("nested too deeply (more than " + std::to_string(kMaxDepth) +
         " operators and brackets)");
    return false;
  }
  struct Restore {
    unsigned &depth;
    unsigned saved;
    ~Restore() { depth = saved; }
  };

  NodePtr fail(const std::string &message) {
    if (err.empty()) {
      err = message;
      errPos = pos;
    }
    return nullptr;
  }

  void skipSpace() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }

  bool accept(std::string_view token) {
    skipSpace();
    if (text.substr(pos, token.size()) != token)
      return false;
    pos += token.size();
    return true;
  }

  static int precedence(std::string_view op) {
    if (op == "||")
      return 1;
    if (op == "&&")
      return 2;
    if (op == "==" || op == "!=")
      return 3;
    if (op == "<" || op == "<=" || op == ">" || op == ">=")
      return 4;
    if (op == "+" || op == "-")
      return 5;
    if (op == "*" || op == "/" || op == "%")
      return 6;
    return 0;
  }

  /// Reads a binary operator without consuming it.
  std::string peekOperator() {
    skipSpace();
    static const char *ops[] = {"||", "&&", "==", "!=", "<=", ">=", "<",
                                ">",  "+",  "-",  "*",  "/",  "%"};
    for (const char *op : ops)
      if (text.substr(pos, std::string_view(op).size()) == op)
        return op;
    return "";
  }

  NodePtr parseBinary(int minPrec) {
    Restore restore{depth, depth};
    NodePtr lhs = parseUnary();
    while (lhs) {
      std::string op = peekOperator();
      int prec = precedence(op);
      if (prec == 0 || prec < minPrec)
        break;
      if (!deeper())
        return nullptr;
      pos += op.size();
      NodePtr rhs = parseBinary(prec + 1);
      if (!rhs)
        return nullptr;
      auto node = std::make_shared<Expr::Node>();
      node->kind = Expr::Node::Binary;
      node->text = op;
      node->args = {lhs, rhs};
      lhs = node;
    }
    return lhs;
  }

  NodePtr parseUnary() {
    skipSpace();
    for (const char *op : {"-", "!", "+"}) {
      // "!=" is not a prefix operator.
      if (text.substr(pos, 1) != op || text.substr(pos, 2) == "!=")
        continue;
      Restore restore{depth, depth};
      if (!deeper())
        return nullptr;
      ++pos;
      NodePtr operand = parseUnary();
      if (!operand)
        return nullptr;
      auto node = std::make_shared<Expr::Node>();
      node->kind = Expr::Node::Unary;
      node->text = op;
      node->args = {operand};
      return node;
    }
    return parsePrimary();
  }

  NodePtr parsePrimary() {
    skipSpace();
    if (pos >= text.size())
      return fail("expected an expression");
    char c = text[pos];
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
      auto node = std::make_shared<Expr::Node>();
      node->kind = Expr::Node::Num;
      node->value = value;
      return node;
    }
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t start = pos;
      while (pos < text.size() &&
             (std::isalnum((unsigned char)text[pos]) || text[pos] == '_'))
        ++pos;
      std::string name(text.substr(start, pos - start));
      skipSpace();
      if (pos < text.size() && text[pos] == '(')
        return parseCall(name, start);
      if (name == "true" || name == "false") {
        auto node = std::make_shared<Expr::Node>();
        node->kind = Expr::Node::Num;
        node->value = name == "true";
        return node;
      }
      bool seen = false;
      for (const std::string &n : names)
        seen |= n == name;
      if (!seen)
        names.push_back(name);
      auto node = std::make_shared<Expr::Node>();
      node->kind = Expr::Node::Name;
      node->text = name;
      return node;
    }
    if (accept("(")) {
      Restore restore{depth, depth};
      if (!deeper())
        return nullptr;
      NodePtr inner = parseBinary(0);
      if (!inner)
        return nullptr;
      if (!accept(")"))
        return fail("expected ')'");
      return inner;
    }
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  NodePtr parseCall(const std::string &name, size_t start) {
    if (name != "cdiv" && name != "min" && name != "max") {
      pos = start;
      return fail("unknown function '" + name +
                  "' (expected cdiv, min or max)");
    }
    accept("(");
    Restore restore{depth, depth};
    if (!deeper())
      return nullptr;
    auto node = std::make_shared<Expr::Node>();
    node->kind = Expr::Node::Call;
    node->text = name;
    for (;;) {
      NodePtr arg = parseBinary(0);
      if (!arg)
        return nullptr;
      node->args.push_back(arg);
      if (accept(","))
        continue;
      if (accept(")"))
        break;
      return fail("expected ',' or ')'");
    }
    if (node->args.size() != 2)
      return fail(name + " takes 2 arguments, got " +
                  std::to_string(node->args.size()));
    return node;
  }
};

bool evalNode(const Expr::Node &node, const Env &env, int64_t &result,
              std::string &error) {
  switch (node.kind) {
  case Expr::Node::Num:
    result = node.value;
    return true;
  case Expr::Node::Name: {
    auto it = env.find(node.text);
    if (it == env.end()) {
      error = "'" + node.text + "' has no value";
      return false;
    }
    result = it->second;
    return true;
  }
  default:
    break;
  }
  std::vector<int64_t> vals;
  for (const auto &arg : node.args) {
    int64_t v;
    if (!evalNode(*arg, env, v, error))
      return false;
    vals.push_back(v);
  }
  const std::string &op = node.text;
  if (node.kind == Expr::Node::Unary) {
    if (op == "!")
      result = vals[0] == 0;
    else if (op == "+")
      result = vals[0];
    else if (__builtin_sub_overflow(int64_t(0), vals[0], &result))
      return error = "64-bit overflow in unary '-'", false;
    return true;
  }
  int64_t a = vals[0], b = vals[1];
  auto overflow = [&](const std::string &what) {
    error = "64-bit overflow in " + what + " (" + std::to_string(a) + ", " +
            std::to_string(b) + ")";
    return false;
  };
  if (op == "+")
    return __builtin_add_overflow(a, b, &result) ? overflow("'+'") : true;
  if (op == "-")
    return __builtin_sub_overflow(a, b, &result) ? overflow("'-'") : true;
  if (op == "*")
    return __builtin_mul_overflow(a, b, &result) ? overflow("'*'") : true;
  if (op == "/" || op == "%" || op == "cdiv") {
    if (b == 0) {
      error = "division by zero in '" + op + "' (" + std::to_string(a) + " " +
              (op == "cdiv" ? "cdiv" : op) + " 0)";
      return false;
    }
    if (a == INT64_MIN && b == -1)
      return overflow("'" + op + "'");
    if (op == "/")
      result = a / b;
    else if (op == "%")
      result = a % b;
    else // Ceiling division on top of truncating division.
      result = a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
    return true;
  }
  if (op == "min")
    result = std::min(a, b);
  else if (op == "max")
    result = std::max(a, b);
  else if (op == "<")
    result = a < b;
  else if (op == "<=")
    result = a <= b;
  else if (op == ">")
    result = a > b;
  else if (op == ">=")
    result = a >= b;
  else if (op == "==")
    result = a == b;
  else if (op == "!=")
    result = a != b;
  else if (op == "&&")
    result = a != 0 && b != 0;
  else if (op == "||")
    result = a != 0 || b != 0;
  return true;
}
} // namespace

bool Expr::parse(std::string_view text, Expr &result, std::string &error) {
  Expr expr;
  expr.source = std::string(text);
  Parser parser(text, expr.nameList);
  NodePtr root = parser.parseAll(error);
  if (!root)
    return false;
  expr.root = root;
  result = std::move(expr);
  return true;
}

bool Expr::eval(const Env &env, int64_t &result, std::string &error) const {
  if (!root) {
    error = "empty expression";
    return false;
  }
  std::string inner;
  if (evalNode(*root, env, result, inner))
    return true;
  error = "cannot evaluate '" + source + "': " + inner;
  return false;
}

bool Expr::isName() const { return root && root->kind == Node::Name; }

bool Expr::isLiteral(int64_t *value) const {
  if (!root || root->kind != Node::Num)
    return false;
  if (value)
    *value = root->value;
  return true;
}

bool evalExpr(std::string_view text, const Env &env, int64_t &result,
              std::string &error) {
  Expr expr;
  return Expr::parse(text, expr, error) && expr.eval(env, result, error);
}

} // namespace tegula::rt
