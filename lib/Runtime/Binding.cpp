//===- Binding.cpp - Size variables, scalars and launch-time checks -------===//

#include "tegula/Runtime/Binding.h"

#include "tegula/Runtime/Strides.h"

#include "tegula/Runtime/Tensor.h"
#include "tegula/Runtime/Text.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

namespace tegula::rt {

namespace {
std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Parses a decimal integer; `overflow` tells a well-formed one that does
/// not fit in 64 bits from text that is not an integer.
bool parseInt(const std::string &text, int64_t &value, bool &overflow) {
  std::string t = trim(text);
  overflow = false;
  if (t.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(t.c_str(), &end, 10);
  if (*end != '\0')
    return false;
  overflow = errno == ERANGE;
  value = v;
  return !overflow;
}

std::string joinNames(const std::vector<std::string> &names) {
  return names.empty() ? "none" : joinList(names);
}

/// "[T, R / 2]"
std::string formatDims(const std::vector<Expr> &dims) {
  std::vector<std::string> items;
  for (const Expr &d : dims)
    items.push_back(d.text());
  return "[" + joinList(items) + "]";
}

/// "N = 1000, D = 64" for the names an expression uses.
std::string formatValues(const Expr &e, const Env &env) {
  std::vector<std::string> items;
  for (const std::string &n : e.names()) {
    auto it = env.find(n);
    items.push_back(n + " = " +
                    (it == env.end() ? "?" : std::to_string(it->second)));
  }
  return joinList(items);
}
} // namespace

bool splitAssignment(const std::string &text, std::string &name,
                     std::string &value) {
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    return false;
  name = trim(text.substr(0, eq));
  value = trim(text.substr(eq + 1));
  return !name.empty() && !value.empty();
}

bool parseDimsArg(const std::string &text, std::map<std::string, int64_t> &dims,
                  std::string &error) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    std::string name, value;
    int64_t v;
    bool overflow = false;
    if (!splitAssignment(item, name, value) || !parseInt(value, v, overflow)) {
      error = overflow
                  ? "--dims " + abbreviate(trim(item)) +
                        ": the value does not fit in 64 bits"
                  : "--dims expects NAME=INTEGER[,NAME=INTEGER...], got '" +
                        abbreviate(trim(item)) + "'";
      return false;
    }
    if (!dims.emplace(name, v).second) {
      error = "--dims sets '" + name + "' twice";
      return false;
    }
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return true;
}

bool parseStridesArg(const std::string &text,
                     std::map<std::string, std::vector<int64_t>> &strides,
                     std::string &error) {
  std::string name, list;
  if (!splitAssignment(text, name, list)) {
    error = "--stride expects NAME=S0,S1,... (in elements), got '" +
            abbreviate(text) + "'";
    return false;
  }
  std::vector<int64_t> values;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma - start);
    int64_t value;
    bool overflow = false;
    if (!parseInt(item, value, overflow)) {
      error = "--stride " + name + ": '" + abbreviate(item) + "' is not " +
              (overflow ? "a 64-bit integer" : "an integer");
      return false;
    }
    values.push_back(value);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  strides[name] = std::move(values);
  return true;
}

bool parseScalar(const std::string &text, DType type, ScalarValue &value,
                 std::string &error) {
  value.dtype = type;
  std::string t = trim(text);
  if (type == DType::Bool) {
    if (t == "true" || t == "1")
      value.i = 1;
    else if (t == "false" || t == "0")
      value.i = 0;
    else
      return error = "expects true, false, 1 or 0, got '" + abbreviate(t) + "'",
             false;
    return true;
  }
  if (type == DType::F32) {
    errno = 0;
    char *end = nullptr;
    float f = std::strtof(t.c_str(), &end);
    if (t.empty() || *end != '\0')
      return error = "expects a number, got '" + abbreviate(t) + "'", false;
    // "inf" is infinite without ERANGE; "1e39" overflows with it.
    if (std::isinf(f) && errno == ERANGE)
      return error = "value " + abbreviate(t) + " does not fit in f32", false;
    value.f = f;
    return true;
  }
  int64_t v;
  bool overflow;
  bool ok = parseInt(t, v, overflow);
  if (!ok && !overflow)
    return error = "expects an integer, got '" + abbreviate(t) + "'", false;
  if (!ok || (type == DType::I32 && (v < INT32_MIN || v > INT32_MAX)))
    return error =
               "value " + abbreviate(t) + " does not fit in " + dtypeName(type),
           false;
  value.i = v;
  return true;
}

namespace {
/// Every strided tensor's strides: given, or row-major; then checked.
bool bindStrides(const Bundle &bundle, const BindingInputs &inputs,
                 LaunchPlan &p, std::string &error) {
  const bool tileRun = inputs.caller == BindingInputs::Caller::TileRun;
  for (const auto &[name, strides] : inputs.strides) {
    const Param *param = bundle.findParam(name);
    if (!param || !param->isTensor || !param->strided) {
      error = (tileRun ? "--stride sets '" : "strides for '") + name +
              "', which is not a strided tensor of '" + bundle.kernel +
              "' (only a tensor declared 'strided' takes strides)";
      return false;
    }
  }
  p.strides.assign(bundle.params.size(), {});
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &param = bundle.params[i];
    if (!param.strided)
      continue;
    auto given = inputs.strides.find(param.name);
    p.strides[i] = given != inputs.strides.end() ? given->second
                                                 : rowMajorStrides(p.shapes[i]);
    if (!checkView(param, p.shapes[i], p.strides[i], error))
      return false;
    // What a variant's conditions may ask of the view (Expr.h); the
    // address until the launcher knows it is assumed aligned (bindAddress).
    for (size_t d = 0; d < p.strides[i].size(); ++d)
      p.env[strideName(param.name, int64_t(d))] = p.strides[i][d];
    auto address = inputs.addresses.find(param.name);
    bindAddress(param, address == inputs.addresses.end() ? 0 : address->second,
                p);
  }
  return true;
}

/// The first variant of `config` whose conditions all hold under `env`, or
/// -1; one that fails to evaluate is skipped (the general code always
/// applies).
int chooseVariant(const Config &config, const Env &env) {
  for (size_t i = 0; i < config.variants.size(); ++i) {
    bool holds = true;
    for (const Expr &when : config.variants[i].when) {
      int64_t v;
      std::string err;
      holds = holds && when.eval(env, v, err) && v != 0;
    }
    if (holds)
      return int(i);
  }
  return -1;
}
} // namespace

int64_t addressAlign(uint64_t address) {
  int64_t align = kMaxAlign;
  while (address % uint64_t(align) != 0)
    align /= 2;
  return align;
}

void bindAddress(const Param &param, uint64_t address, LaunchPlan &plan) {
  if (!param.strided)
    return;
  plan.env[alignName(param.name)] = addressAlign(address);
}

bool updateAlignments(const Bundle &bundle,
                      const std::vector<unsigned long long> &pointers,
                      std::vector<int64_t> &aligns) {
  bool changed = aligns.size() != bundle.params.size();
  aligns.resize(bundle.params.size(), 0);
  for (size_t i = 0; i < bundle.params.size() && i < pointers.size(); ++i) {
    if (!bundle.params[i].strided)
      continue;
    int64_t align = addressAlign(pointers[i]);
    changed = changed || align != aligns[i];
    aligns[i] = align;
  }
  return changed;
}

bool bindAddresses(const Bundle &bundle,
                   const std::vector<unsigned long long> &pointers,
                   LaunchPlan &plan) {
  bool strided = false;
  for (size_t i = 0; i < bundle.params.size() && i < pointers.size(); ++i) {
    strided = strided || bundle.params[i].strided;
    bindAddress(bundle.params[i], pointers[i], plan);
  }
  // Only a view's address can change the choice.
  if (!strided)
    return true;
  int before = plan.variant;
  plan.variant = chooseVariant(bundle.configs[size_t(plan.config)], plan.env);
  return plan.variant == before;
}

bool bindAndCheck(const Bundle &bundle, const BindingInputs &inputs,
                  LaunchPlan &plan, std::string &error) {
  // Messages name tile-run's flags, or the C ABI's (and Python's) words.
  const bool tileRun = inputs.caller == BindingInputs::Caller::TileRun;
  LaunchPlan p;
  std::map<std::string, std::string> boundBy;
  for (const auto &[name, value] : inputs.dims) {
    if (!bundle.isSizeVar(name)) {
      error = std::string(tileRun ? "--dims sets '" : "dims sets '") + name +
              "', which is not a size variable of '" + bundle.kernel +
              "' (size variables: " + joinNames(bundle.sizeVars) + ")";
      return false;
    }
    p.env[name] = value;
    boundBy[name] = tileRun ? "--dims" : "dims";
  }
  for (const auto &[name, value] : inputs.scalars) {
    const Param *param = bundle.findParam(name);
    if (!param || param->isTensor) {
      error = (tileRun ? "--scalar sets '" + name + "', which"
                       : "scalar '" + name + "'") +
              " is not a scalar parameter of '" + bundle.kernel + "'";
      return false;
    }
  }
  for (const auto &[name, shape] : inputs.fileShapes) {
    const Param *param = bundle.findParam(name);
    if (!param || !param->isTensor) {
      error =
          "'" + name + "' is not a tensor parameter of '" + bundle.kernel + "'";
      return false;
    }
  }

  // Lone-name dims of --in files bind size variables not set by --dims.
  for (const Param &param : bundle.params) {
    auto file = inputs.fileShapes.find(param.name);
    if (!param.isTensor || file == inputs.fileShapes.end())
      continue;
    const std::vector<int64_t> &shape = file->second;
    if (shape.size() != param.dims.size()) {
      error = "argument '" + param.name + "' has shape " + formatShape(shape) +
              " (rank " + std::to_string(shape.size()) +
              ") but the kernel expects " + formatDims(param.dims) + " (rank " +
              std::to_string(param.dims.size()) + ")";
      return false;
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      const Expr &dim = param.dims[i];
      if (!dim.isName() || p.env.count(dim.names().front()))
        continue;
      p.env[dim.names().front()] = shape[i];
      boundBy[dim.names().front()] =
          "the shape of argument '" + param.name + "'";
    }
  }

  for (const std::string &var : bundle.sizeVars) {
    auto it = p.env.find(var);
    if (it == p.env.end()) {
      error =
          "size variable '" + var + "' has no value: " +
          (tileRun ? "pass --dims " + var + "=VALUE or an --in file for a tensor"
                   : "pass dims={'" + var +
                         "': VALUE} (tegula_rt_binding_set_dim) or a tensor") +
          " with " + var + " in its shape";
      return false;
    }
    // 0 is an empty launch (docs/runtime.md), as PyTorch ops take empty
    // tensors.
    if (it->second < 0 || it->second > INT32_MAX) {
      error = "size variable '" + var + "' = " + std::to_string(it->second) +
              " (from " + boundBy[var] + ") must be in [0, 2147483647]: " +
              "size variables are not negative and are passed as 32 bits";
      return false;
    }
    p.sizeVarValues.push_back(int32_t(it->second));
  }

  p.shapes.resize(bundle.params.size());
  p.scalars.resize(bundle.params.size());
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &param = bundle.params[i];
    if (param.isTensor)
      continue;
    auto given = inputs.scalars.find(param.name);
    if (given == inputs.scalars.end()) {
      error = "scalar '" + param.name + "' (" + dtypeName(param.dtype) +
              ") has no value: " +
              (tileRun ? "pass --scalar " + param.name + "=VALUE"
                       : "pass it (tegula_rt_binding_set_scalar_*)");
      return false;
    }
    std::string err;
    if (!parseScalar(given->second, param.dtype, p.scalars[i], err)) {
      error =
          (tileRun ? "--scalar " + param.name : "scalar '" + param.name + "'") +
          " (" + dtypeName(param.dtype) + "): " + err;
      return false;
    }
    if (param.dtype != DType::F32)
      p.env[param.name] = p.scalars[i].i;
  }

  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &param = bundle.params[i];
    if (!param.isTensor)
      continue;
    std::vector<int64_t> shape;
    int64_t bytes = int64_t(dtypeSize(param.dtype));
    for (const Expr &dim : param.dims) {
      int64_t v;
      std::string err;
      if (!dim.eval(p.env, v, err)) {
        error = "argument '" + param.name + "': " + err;
        return false;
      }
      shape.push_back(v);
      // Kernels index and bound-check every dim in 32 bits.
      if (v > INT32_MAX) {
        error = "argument '" + param.name + "' would have shape " +
                formatDims(param.dims) + " = " + formatShape(shape) +
                ", a dim over 2147483647 (kernels index in 32 bits)";
        return false;
      }
      if (v < 0 || __builtin_mul_overflow(bytes, v, &bytes) ||
          bytes > kMaxTensorBytes) {
        error = "argument '" + param.name + "' would have shape " +
                formatDims(param.dims) + " = " + formatShape(shape) +
                (v < 0 ? ", with a negative dim" : ", which is too large");
        return false;
      }
    }
    auto file = inputs.fileShapes.find(param.name);
    if (file != inputs.fileShapes.end() && file->second != shape) {
      error = "argument '" + param.name + "' has shape " +
              formatShape(file->second) + " but the kernel expects " +
              formatDims(param.dims) + " = " + formatShape(shape);
      return false;
    }
    p.shapes[i] = std::move(shape);
  }
  if (!bindStrides(bundle, inputs, p, error))
    return false;

  for (const Expr &req : bundle.requires_) {
    int64_t v;
    std::string err;
    if (!req.eval(p.env, v, err)) {
      error = "requires: " + err;
      return false;
    }
    if (v == 0) {
      error = "requires '" + abbreviate(req.text()) +
              "' does not hold: " + formatValues(req, p.env);
      return false;
    }
  }

  if (!applyConfig(bundle, 0, p, error))
    return false;

  for (auto [expr, out] : {std::pair{&bundle.flops, &p.flops},
                           std::pair{&bundle.bytes, &p.bytes}}) {
    if (!*expr)
      continue;
    int64_t v;
    std::string err;
    if (!(*expr)->eval(p.env, v, err)) {
      error = (expr == &bundle.flops ? "flops: " : "bytes: ") + err;
      return false;
    }
    *out = v;
  }
  plan = std::move(p);
  return true;
}

bool LaunchPlan::hasEmptyTensor() const {
  for (const std::vector<int64_t> &shape : shapes)
    for (int64_t d : shape)
      if (d == 0)
        return true;
  return false;
}

bool applyConfig(const Bundle &bundle, int index, LaunchPlan &p,
                 std::string &error) {
  const Config &config = bundle.configs[size_t(index)];
  p.config = index;
  static const int64_t gridLimit[3] = {INT32_MAX, 65535, 65535};
  for (int d = 0; d < 3; ++d) {
    std::string err;
    if (!config.grid[d].eval(p.env, p.grid[d], err)) {
      error = "grid[" + std::to_string(d) + "]: " + err;
      return false;
    }
    // An empty grid launches nothing: fine when a tensor is empty, a
    // mistake in the grid otherwise.
    const int64_t lowest = p.hasEmptyTensor() ? 0 : 1;
    if (p.grid[d] < lowest || p.grid[d] > gridLimit[d]) {
      error = "grid[" + std::to_string(d) + "] '" +
              abbreviate(config.grid[d].text()) +
              "' = " + std::to_string(p.grid[d]) + " is outside [" +
              std::to_string(lowest) + ", " + std::to_string(gridLimit[d]) +
              "] (" + formatValues(config.grid[d], p.env) + ")" +
              (p.grid[d] == 0 ? "; an empty grid needs an empty tensor" : "");
      return false;
    }
  }

  p.variant = chooseVariant(config, p.env);
  return true;
}

} // namespace tegula::rt
