//===- Expr.h - Integer expressions of a kernel bundle ----------*- C++ -*-===//
//
// The `grid`, `requires`, `flops`, `bytes` and tensor-dim strings of a
// KERNEL.json: integers, names, + - * / % ( ), comparisons, && || !, unary
// minus, cdiv, min and max, evaluated in 64 bits with `/` and `%`
// truncating toward zero. Overflow and division by zero are errors.
//
// Two forms name a value of a strided tensor's view that the launcher
// binds: `stride(x, d)`, x's stride along dimension d in elements, and
// `align(x)`, the largest power of two (at most kMaxAlign) that divides
// x's device address. A variant's conditions use them (docs/runtime.md).
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

/// The environment's names of `stride(x, d)` and `align(x)`, as
/// Expr::names() lists them.
std::string strideName(const std::string &tensor, int64_t dim);
std::string alignName(const std::string &tensor);
/// Splits such a name: dim is -1 for align(x). False for any other name.
bool parseViewName(const std::string &name, std::string &tensor, int64_t &dim);
/// The largest align(x): an address that is a multiple of it, or none yet
/// (0), is aligned enough for any access.
constexpr int64_t kMaxAlign = 256;

/// Parses and evaluates in one step (for tests and --eval).
bool evalExpr(std::string_view text, const Env &env, int64_t &result,
              std::string &error);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_EXPR_H
