//===- Expr.h - Integer expressions of a kernel bundle ----------*- C++ -*-===//
//
// The `grid`, `requires`, `flops`, `bytes` and tensor-dim strings of a
// KERNEL.json: integers, names, + - * / % ( ), comparisons, && || !, unary
// minus, cdiv, min and max, evaluated in 64 bits with `/` and `%`
// truncating toward zero. Overflow and division by zero are errors.
//
// An expression is kept as postfix code, parsed and evaluated with explicit
// stacks: no step recurses, so a bundle's 30,000-term chain or 50,000
// nested brackets cost memory in proportion to their length, never the
// call stack.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_EXPR_H
#define TEGULA_RUNTIME_EXPR_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tegula::rt {

using Env = std::map<std::string, int64_t, std::less<>>;

class Expr {
public:
  struct Code;

  /// Parses `text`; on failure returns false and sets `error` to a message
  /// naming the column.
  static bool parse(std::string_view text, Expr &result, std::string &error);

  /// Evaluates under `env`; an unbound name, overflow or a division by zero
  /// is an error, never a crash.
  bool eval(const Env &env, int64_t &result, std::string &error) const;

  const std::string &text() const { return source; }
  /// Names in order of first appearance.
  const std::vector<std::string> &names() const { return nameList; }
  /// True if the expression is a lone name (a dim that binds a size var).
  bool isName() const;
  /// True if the expression is a lone integer literal.
  bool isLiteral(int64_t *value = nullptr) const;

private:
  std::string source;
  std::vector<std::string> nameList;
  // Immutable after parsing, so copies share it.
  std::shared_ptr<const Code> code;
};

/// Parses and evaluates in one step (for tests and --eval).
bool evalExpr(std::string_view text, const Env &env, int64_t &result,
              std::string &error);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_EXPR_H
