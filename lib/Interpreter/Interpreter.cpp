//===- Interpreter.cpp - Executing tile-dialect kernels on the host -------===//
//
// A tree-walking interpreter over tile, arith, math, scf and func ops. Every
// SSA value maps to an RtValue: a block of numbers (a scalar has rank 0), a
// global tensor (parameter index and extents), a pointer argument or a
// pipeline. Float values are held as doubles already rounded to their
// element type, integers as int64 sign-extended from their width (i1 as
// 0/1), so every op computes in double or 64 bits and rounds or wraps its
// result to the type it produces, as the GPU code does with f32 arithmetic
// on f16/bf16 values.
//
//===----------------------------------------------------------------------===//

#include "tegula/Interpreter/Interpreter.h"

#include "Tile/TileDialect.h"
#include "Tile/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>

using namespace mlir;

namespace tegula::interp {
namespace {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// A block of numbers; rank 0 is a scalar.
struct Data {
  std::vector<int64_t> shape;
  bool isFloat = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t size() const { return isFloat ? f.size() : i.size(); }
};
using DataP = std::shared_ptr<const Data>;

/// The transpose of a 2-D tile.
Data transposeData(const Data &a) {
  Data d;
  d.shape = {a.shape[1], a.shape[0]};
  d.isFloat = a.isFloat;
  for (int64_t i = 0; i < a.shape[1]; ++i)
    for (int64_t j = 0; j < a.shape[0]; ++j) {
      size_t src = size_t(j * a.shape[1] + i);
      if (d.isFloat)
        d.f.push_back(a.f[src]);
      else
        d.i.push_back(a.i[src]);
    }
  return d;
}

struct RtValue {
  enum Kind { Unset, Numbers, Ptr, Tensor, Pipeline } kind = Unset;
  DataP data;
  int param = -1;               // Ptr, Tensor: the kernel parameter
  std::vector<int64_t> extents; // Tensor
  int pipeline = -1;            // Pipeline: index into the program's rings
};

std::vector<int64_t> shapeOf(Type type) {
  if (auto t = dyn_cast<ShapedType>(type))
    return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
  return {};
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

unsigned intWidth(Type type) {
  if (auto i = dyn_cast<IntegerType>(type))
    return i.getWidth();
  return 64; // index
}

/// Wraps to `width` bits: sign-extended, except i1 which is 0 or 1.
int64_t wrapInt(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  if (width == 1)
    return v & 1;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (u >> (width - 1))
    u |= ~mask;
  return int64_t(u);
}
int64_t asSigned(int64_t v, unsigned width) {
  return width == 1 ? (v ? -1 : 0) : v;
}
uint64_t asUnsigned(int64_t v, unsigned width) {
  return width >= 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << width) - 1);
}

/// Rounds a value computed in double to a float element type.
double roundFloat(double v, Type type) {
  if (type.isF32())
    return double(float(v));
  if (type.isF16())
    return rt::roundToDType(v, rt::DType::F16);
  if (type.isBF16())
    return rt::roundToDType(v, rt::DType::BF16);
  return v;
}

/// A float to an integer of `width` bits, truncating and saturating (as
/// cvt.rzi does); NaN gives 0.
int64_t floatToInt(double v, unsigned width, bool isUnsigned) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (width == 1)
    return v != 0;
  if (isUnsigned) {
    double hi = std::ldexp(1.0, int(width)) - 1;
    if (v <= 0)
      return 0;
    if (v >= hi)
      return wrapInt(int64_t(uint64_t(hi)), width);
    return wrapInt(int64_t(uint64_t(v)), width);
  }
  double hi = std::ldexp(1.0, int(width) - 1);
  if (v >= hi)
    return width >= 64 ? std::numeric_limits<int64_t>::max() : int64_t(hi) - 1;
  if (v <= -hi)
    return width >= 64 ? std::numeric_limits<int64_t>::min() : -int64_t(hi);
  return int64_t(v);
}

double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

std::string locationText(Location loc) {
  if (auto fl = dyn_cast<FileLineColLoc>(loc))
    return (fl.getFilename().getValue() + ":" + Twine(fl.getLine()) + ":" +
            Twine(fl.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Host memory
//===----------------------------------------------------------------------===//

double readFloat(const rt::HostTensor &t, int64_t index) {
  return t.get(index);
}

int64_t readInt(const rt::HostTensor &t, int64_t index) {
  const uint8_t *p = t.bytes.data() + size_t(index) * rt::dtypeSize(t.dtype);
  switch (t.dtype) {
  case rt::DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case rt::DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case rt::DType::Bool:
    return *p != 0;
  default:
    return int64_t(t.get(index));
  }
}

void writeInt(rt::HostTensor &t, int64_t index, int64_t v) {
  uint8_t *p = t.bytes.data() + size_t(index) * rt::dtypeSize(t.dtype);
  switch (t.dtype) {
  case rt::DType::I32: {
    int32_t w = int32_t(v);
    std::memcpy(p, &w, 4);
    return;
  }
  case rt::DType::I64:
    std::memcpy(p, &v, 8);
    return;
  case rt::DType::Bool:
    *p = v != 0;
    return;
  default:
    t.set(index, double(v));
  }
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

class Machine {
public:
  Machine(func::FuncOp kernel, const rt::Bundle &bundle,
          const rt::LaunchPlan &plan, std::vector<rt::HostTensor> &tensors)
      : kernel(kernel), bundle(bundle), plan(plan), tensors(tensors) {}

  bool run(std::string &error);

private:
  bool fail(Operation *op, const Twine &message) {
    if (error.empty())
      error =
          (locationText(op->getLoc()) + ": '" + op->getName().getStringRef() +
           "': " + message + " (program [" + Twine(pid[0]) + ", " +
           Twine(pid[1]) + ", " + Twine(pid[2]) + "])")
              .str();
    return false;
  }

  bool fail(Operation &op, const Twine &message) { return fail(&op, message); }

  bool bindArguments();
  bool checkSupported(Operation *root);
  bool execRegion(Region &region, ArrayRef<RtValue> args,
                  SmallVectorImpl<RtValue> &results);
  bool execOp(Operation &op);

  /// Lookups never insert: a reference into `env` stays valid until the
  /// next value is set, and a value read before it is set is an interpreter
  /// bug, not an empty entry.
  const RtValue &get(Value v) const {
    auto it = env.find(v);
    assert(it != env.end() && "value read before it was set");
    return it->second;
  }
  const Data &data(Value v) const {
    const RtValue &r = get(v);
    assert(r.data && "numbers read from a tensor, pointer or pipeline");
    return *r.data;
  }
  void setData(Value v, Data d) {
    RtValue r;
    r.kind = RtValue::Numbers;
    r.data = std::make_shared<const Data>(std::move(d));
    env[v] = std::move(r);
  }

  // Op groups.
  bool execConstant(arith::ConstantOp op);
  bool execElementwise(Operation &op, bool &handled);
  bool execCast(Operation &op, bool &handled);
  bool execFor(scf::ForOp op);
  bool execWhile(scf::WhileOp op);
  bool gather(Operation *op, Value tensor, ValueRange indices, Value mask,
              Value other, Type resultType, Data &out);
  bool execStore(tile::StoreOp op);
  bool execReduce(tile::ReduceOp op);
  bool execDot(tile::DotOp op);
  bool execBroadcast(tile::BroadcastOp op);

  func::FuncOp kernel;
  const rt::Bundle &bundle;
  const rt::LaunchPlan &plan;
  std::vector<rt::HostTensor> &tensors;
  llvm::DenseMap<Value, RtValue> env;
  std::vector<std::deque<DataP>> rings;
  std::vector<unsigned> ringStages;
  std::array<int64_t, 3> pid{};
  std::string error;
  int callDepth = 0;
};

bool Machine::checkSupported(Operation *root) {
  bool ok = true;
  root->walk([&](Operation *op) {
    if (!ok || op == root)
      return;
    StringRef name = op->getName().getStringRef();
    StringRef dialect = op->getName().getDialectNamespace();
    bool known = dialect == "tile" || dialect == "arith" || dialect == "math" ||
                 name == "scf.for" || name == "scf.if" || name == "scf.yield" ||
                 name == "scf.while" || name == "scf.condition" ||
                 name == "func.return" || name == "func.call";
    if (!known) {
      error = (locationText(op->getLoc()) + ": '" + name +
               "' is not supported by the interpreter")
                  .str();
      ok = false;
    }
  });
  return ok;
}

bool Machine::bindArguments() {
  // Function arguments are the bundle's parameters in order, with the size
  // variables (tile.size_var) taken out.
  size_t param = 0;
  for (unsigned a = 0, e = kernel.getNumArguments(); a < e; ++a) {
    BlockArgument arg = kernel.getArgument(a);
    RtValue v;
    if (auto sv = kernel.getArgAttrOfType<StringAttr>(
            a, tile::TileDialect::kSizeVarAttrName)) {
      Data d;
      d.i = {wrapInt(plan.env.at(sv.getValue().str()), 32)};
      setData(arg, std::move(d));
      continue;
    }
    if (param >= bundle.params.size()) {
      error = "kernel arguments do not match the bundle's parameters";
      return false;
    }
    const rt::Param &p = bundle.params[param];
    if (p.isTensor) {
      v.kind = RtValue::Ptr;
      v.param = int(param);
      env[arg] = v;
    } else {
      const rt::ScalarValue &s = plan.scalars[param];
      Data d;
      if (p.dtype == rt::DType::F32) {
        d.isFloat = true;
        d.f = {double(s.f)};
      } else {
        d.i = {wrapInt(s.i, intWidth(arg.getType()))};
      }
      setData(arg, std::move(d));
    }
    ++param;
  }
  return true;
}

bool Machine::run(std::string &errorOut) {
  if (kernel.isExternal()) {
    errorOut = "kernel '" + kernel.getSymName().str() + "' has no body";
    return false;
  }
  if (!checkSupported(kernel)) {
    errorOut = error;
    return false;
  }
  // Programs run one after another, x fastest (the CUDA block order); a
  // program sees the stores of the programs before it.
  for (pid[2] = 0; pid[2] < plan.grid[2]; ++pid[2])
    for (pid[1] = 0; pid[1] < plan.grid[1]; ++pid[1])
      for (pid[0] = 0; pid[0] < plan.grid[0]; ++pid[0]) {
        env.clear();
        rings.clear();
        ringStages.clear();
        if (!bindArguments()) {
          errorOut = error;
          return false;
        }
        SmallVector<RtValue> args, results;
        for (BlockArgument a : kernel.getArguments())
          args.push_back(get(a));
        if (!execRegion(kernel.getBody(), args, results)) {
          errorOut = error;
          return false;
        }
      }
  return true;
}

bool Machine::execRegion(Region &region, ArrayRef<RtValue> args,
                         SmallVectorImpl<RtValue> &results) {
  results.clear();
  if (region.empty())
    return true;
  Block &block = region.front();
  for (auto [arg, v] : llvm::zip(block.getArguments(), args))
    env[arg] = v;
  for (Operation &op : block) {
    StringRef name = op.getName().getStringRef();
    if (name == "scf.yield" || name == "func.return" ||
        name == "scf.condition") {
      for (Value v : op.getOperands())
        results.push_back(get(v));
      return true;
    }
    if (!execOp(op))
      return false;
  }
  return true;
}

bool Machine::execConstant(arith::ConstantOp op) {
  Attribute value = op.getValue();
  Type type = op.getType();
  Type elt = getElementTypeOrSelf(type);
  Data d;
  d.shape = shapeOf(type);
  d.isFloat = isa<FloatType>(elt);
  if (auto f = dyn_cast<FloatAttr>(value)) {
    d.f = {roundFloat(f.getValueAsDouble(), elt)};
  } else if (auto i = dyn_cast<IntegerAttr>(value)) {
    d.i = {wrapInt(i.getValue().getSExtValue(), intWidth(elt))};
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (d.isFloat)
      for (APFloat v : dense.getValues<APFloat>())
        d.f.push_back(roundFloat(v.convertToDouble(), elt));
    else
      for (APInt v : dense.getValues<APInt>())
        d.i.push_back(wrapInt(v.getBitWidth() == 1 ? int64_t(v.getZExtValue())
                                                   : v.getSExtValue(),
                              intWidth(elt)));
  } else {
    return fail(op, "unsupported constant");
  }
  setData(op.getResult(), std::move(d));
  return true;
}

bool Machine::execElementwise(Operation &op, bool &handled) {
  handled = true;
  StringRef name = op.getName().getStringRef();
  if (op.getNumResults() != 1)
    return handled = false, true;
  Value result = op.getResult(0);
  Type elt = getElementTypeOrSelf(result.getType());
  auto withShape = [&](Data d) {
    d.shape = shapeOf(result.getType());
    setData(result, std::move(d));
    return true;
  };

  // Float unary.
  using F1 = double (*)(double);
  F1 unary =
      llvm::StringSwitch<F1>(name)
          .Case("arith.negf", [](double x) { return -x; })
          .Case("math.absf", [](double x) { return std::fabs(x); })
          .Case("math.exp", [](double x) { return std::exp(x); })
          .Case("math.exp2", [](double x) { return std::exp2(x); })
          .Case("math.expm1", [](double x) { return std::expm1(x); })
          .Case("math.log", [](double x) { return std::log(x); })
          .Case("math.log2", [](double x) { return std::log2(x); })
          .Case("math.log10", [](double x) { return std::log10(x); })
          .Case("math.log1p", [](double x) { return std::log1p(x); })
          .Case("math.sqrt", [](double x) { return std::sqrt(x); })
          .Case("math.rsqrt", [](double x) { return 1 / std::sqrt(x); })
          .Case("math.sin", [](double x) { return std::sin(x); })
          .Case("math.cos", [](double x) { return std::cos(x); })
          .Case("math.tan", [](double x) { return std::tan(x); })
          .Case("math.tanh", [](double x) { return std::tanh(x); })
          .Case("math.atan", [](double x) { return std::atan(x); })
          .Case("math.erf", [](double x) { return std::erf(x); })
          .Case("math.floor", [](double x) { return std::floor(x); })
          .Case("math.ceil", [](double x) { return std::ceil(x); })
          .Case("math.round", [](double x) { return std::round(x); })
          .Case("math.roundeven", [](double x) { return std::nearbyint(x); })
          .Case("math.trunc", [](double x) { return std::trunc(x); })
          .Default(nullptr);
  if (unary) {
    const Data &a = data(op.getOperand(0));
    Data d;
    d.isFloat = true;
    d.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k)
      d.f[k] = roundFloat(unary(a.f[k]), elt);
    return withShape(std::move(d));
  }

  // Float binary.
  using F2 = double (*)(double, double);
  F2 binary =
      llvm::StringSwitch<F2>(name)
          .Case("arith.addf", [](double a, double b) { return a + b; })
          .Case("arith.subf", [](double a, double b) { return a - b; })
          .Case("arith.mulf", [](double a, double b) { return a * b; })
          .Case("arith.divf", [](double a, double b) { return a / b; })
          .Case("arith.remf",
                [](double a, double b) { return std::fmod(a, b); })
          .Case("arith.maximumf", maximumF)
          .Case("arith.minimumf", minimumF)
          .Case("arith.maxnumf",
                [](double a, double b) { return std::fmax(a, b); })
          .Case("arith.minnumf",
                [](double a, double b) { return std::fmin(a, b); })
          .Case("math.powf", [](double a, double b) { return std::pow(a, b); })
          .Case("math.atan2",
                [](double a, double b) { return std::atan2(a, b); })
          .Case("math.copysign",
                [](double a, double b) { return std::copysign(a, b); })
          .Default(nullptr);
  if (binary) {
    const Data &a = data(op.getOperand(0)), &b = data(op.getOperand(1));
    Data d;
    d.isFloat = true;
    d.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k)
      d.f[k] = roundFloat(binary(a.f[k], b.f[k]), elt);
    return withShape(std::move(d));
  }
  if (name == "math.fma") {
    const Data &a = data(op.getOperand(0)), &b = data(op.getOperand(1)),
               &c = data(op.getOperand(2));
    Data d;
    d.isFloat = true;
    d.f.resize(a.f.size());
    for (size_t k = 0; k < a.f.size(); ++k)
      d.f[k] = roundFloat(std::fma(a.f[k], b.f[k], c.f[k]), elt);
    return withShape(std::move(d));
  }

  // Integer binary: operands and result share one type.
  enum IntOp {
    None,
    Add,
    Sub,
    Mul,
    DivS,
    DivU,
    RemS,
    RemU,
    CeilDivS,
    CeilDivU,
    FloorDivS,
    And,
    Or,
    Xor,
    Shl,
    ShrS,
    ShrU,
    MaxS,
    MinS,
    MaxU,
    MinU
  };
  IntOp iop = llvm::StringSwitch<IntOp>(name)
                  .Case("arith.addi", Add)
                  .Case("arith.subi", Sub)
                  .Case("arith.muli", Mul)
                  .Case("arith.divsi", DivS)
                  .Case("arith.divui", DivU)
                  .Case("arith.remsi", RemS)
                  .Case("arith.remui", RemU)
                  .Case("arith.ceildivsi", CeilDivS)
                  .Case("arith.ceildivui", CeilDivU)
                  .Case("arith.floordivsi", FloorDivS)
                  .Case("arith.andi", And)
                  .Case("arith.ori", Or)
                  .Case("arith.xori", Xor)
                  .Case("arith.shli", Shl)
                  .Case("arith.shrsi", ShrS)
                  .Case("arith.shrui", ShrU)
                  .Case("arith.maxsi", MaxS)
                  .Case("arith.minsi", MinS)
                  .Case("arith.maxui", MaxU)
                  .Case("arith.minui", MinU)
                  .Default(None);
  if (iop != None) {
    unsigned w = intWidth(elt);
    const Data &a = data(op.getOperand(0)), &b = data(op.getOperand(1));
    Data d;
    d.i.resize(a.i.size());
    for (size_t k = 0; k < a.i.size(); ++k) {
      int64_t x = asSigned(a.i[k], w), y = asSigned(b.i[k], w);
      uint64_t ux = asUnsigned(a.i[k], w), uy = asUnsigned(b.i[k], w);
      bool isDiv = iop == DivS || iop == DivU || iop == RemS || iop == RemU ||
                   iop == CeilDivS || iop == CeilDivU || iop == FloorDivS;
      if (isDiv && uy == 0)
        return fail(&op, "integer division by zero");
      // INT_MIN / -1 wraps (the GPU's result) instead of trapping.
      bool minOverNeg1 =
          y == -1 && x == wrapInt(int64_t(uint64_t(1) << (w - 1)), w) && w > 1;
      int64_t r = 0;
      switch (iop) {
      case Add:
        r = int64_t(ux + uy);
        break;
      case Sub:
        r = int64_t(ux - uy);
        break;
      case Mul:
        r = int64_t(ux * uy);
        break;
      case DivS:
        r = minOverNeg1 ? x : x / y;
        break;
      case DivU:
        r = int64_t(ux / uy);
        break;
      case RemS:
        r = minOverNeg1 ? 0 : x % y;
        break;
      case RemU:
        r = int64_t(ux % uy);
        break;
      case CeilDivS:
        if (minOverNeg1) {
          r = x;
          break;
        }
        r = x / y + ((x % y != 0) && ((x < 0) == (y < 0)) ? 1 : 0);
        break;
      case CeilDivU:
        r = int64_t(ux / uy + (ux % uy != 0));
        break;
      case FloorDivS:
        if (minOverNeg1) {
          r = x;
          break;
        }
        r = x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
        break;
      case And:
        r = int64_t(ux & uy);
        break;
      case Or:
        r = int64_t(ux | uy);
        break;
      case Xor:
        r = int64_t(ux ^ uy);
        break;
      case Shl:
        r = uy >= w ? 0 : int64_t(ux << uy);
        break;
      case ShrS:
        r = uy >= w ? (x < 0 ? -1 : 0) : (x >> uy);
        break;
      case ShrU:
        r = uy >= w ? 0 : int64_t(ux >> uy);
        break;
      case MaxS:
        r = std::max(x, y);
        break;
      case MinS:
        r = std::min(x, y);
        break;
      case MaxU:
        r = int64_t(std::max(ux, uy));
        break;
      case MinU:
        r = int64_t(std::min(ux, uy));
        break;
      case None:
        break;
      }
      d.i[k] = wrapInt(r, w);
    }
    return withShape(std::move(d));
  }
  if (name == "math.absi") {
    unsigned w = intWidth(elt);
    const Data &a = data(op.getOperand(0));
    Data d;
    d.i.resize(a.i.size());
    for (size_t k = 0; k < a.i.size(); ++k)
      d.i[k] = wrapInt(asSigned(a.i[k], w) < 0
                           ? int64_t(uint64_t(0) - uint64_t(a.i[k]))
                           : a.i[k],
                       w);
    return withShape(std::move(d));
  }

  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    unsigned w = intWidth(getElementTypeOrSelf(cmp.getLhs().getType()));
    const Data &a = data(cmp.getLhs()), &b = data(cmp.getRhs());
    Data d;
    d.i.resize(a.i.size());
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    for (size_t k = 0; k < a.i.size(); ++k) {
      int64_t x = asSigned(a.i[k], w), y = asSigned(b.i[k], w);
      uint64_t ux = asUnsigned(a.i[k], w), uy = asUnsigned(b.i[k], w);
      bool r = false;
      switch (pred) {
      case P::eq:
        r = ux == uy;
        break;
      case P::ne:
        r = ux != uy;
        break;
      case P::slt:
        r = x < y;
        break;
      case P::sle:
        r = x <= y;
        break;
      case P::sgt:
        r = x > y;
        break;
      case P::sge:
        r = x >= y;
        break;
      case P::ult:
        r = ux < uy;
        break;
      case P::ule:
        r = ux <= uy;
        break;
      case P::ugt:
        r = ux > uy;
        break;
      case P::uge:
        r = ux >= uy;
        break;
      }
      d.i[k] = r;
    }
    return withShape(std::move(d));
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    const Data &a = data(cmp.getLhs()), &b = data(cmp.getRhs());
    Data d;
    d.i.resize(a.f.size());
    using P = arith::CmpFPredicate;
    P pred = cmp.getPredicate();
    for (size_t k = 0; k < a.f.size(); ++k) {
      double x = a.f[k], y = b.f[k];
      bool unordered = std::isnan(x) || std::isnan(y);
      bool r = false;
      switch (pred) {
      case P::AlwaysFalse:
        r = false;
        break;
      case P::OEQ:
        r = !unordered && x == y;
        break;
      case P::OGT:
        r = !unordered && x > y;
        break;
      case P::OGE:
        r = !unordered && x >= y;
        break;
      case P::OLT:
        r = !unordered && x < y;
        break;
      case P::OLE:
        r = !unordered && x <= y;
        break;
      case P::ONE:
        r = !unordered && x != y;
        break;
      case P::ORD:
        r = !unordered;
        break;
      case P::UEQ:
        r = unordered || x == y;
        break;
      case P::UGT:
        r = unordered || x > y;
        break;
      case P::UGE:
        r = unordered || x >= y;
        break;
      case P::ULT:
        r = unordered || x < y;
        break;
      case P::ULE:
        r = unordered || x <= y;
        break;
      case P::UNE:
        r = unordered || x != y;
        break;
      case P::UNO:
        r = unordered;
        break;
      case P::AlwaysTrue:
        r = true;
        break;
      }
      d.i[k] = r;
    }
    return withShape(std::move(d));
  }
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    const Data &c = data(sel.getCondition()), &a = data(sel.getTrueValue()),
               &b = data(sel.getFalseValue());
    Data d;
    d.isFloat = a.isFloat;
    size_t n = a.size();
    if (d.isFloat)
      d.f.resize(n);
    else
      d.i.resize(n);
    for (size_t k = 0; k < n; ++k) {
      bool take = c.i[c.i.size() == 1 ? 0 : k] != 0;
      if (d.isFloat)
        d.f[k] = take ? a.f[k] : b.f[k];
      else
        d.i[k] = take ? a.i[k] : b.i[k];
    }
    return withShape(std::move(d));
  }
  handled = false;
  return true;
}

bool Machine::execCast(Operation &op, bool &handled) {
  handled = true;
  StringRef name = op.getName().getStringRef();
  if (op.getNumOperands() != 1 || op.getNumResults() != 1)
    return handled = false, true;
  // Only casts read their operand as numbers: other one-operand ops (a
  // pipeline pop, a tensor's extent) have none to read.
  if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
           arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp, arith::TruncIOp,
           arith::IndexCastOp, arith::ExtUIOp, arith::IndexCastUIOp,
           arith::BitcastOp>(op))
    return handled = false, true;
  Value in = op.getOperand(0), out = op.getResult(0);
  Type src = getElementTypeOrSelf(in.getType());
  Type dst = getElementTypeOrSelf(out.getType());
  const Data &a = data(in);
  Data d;
  d.shape = shapeOf(out.getType());
  d.isFloat = isa<FloatType>(dst);
  if (name == "arith.extf" || name == "arith.truncf") {
    for (double v : a.f)
      d.f.push_back(roundFloat(v, dst));
  } else if (name == "arith.sitofp" || name == "arith.uitofp") {
    unsigned w = intWidth(src);
    for (int64_t v : a.i)
      d.f.push_back(roundFloat(name == "arith.sitofp"
                                   ? double(asSigned(v, w))
                                   : double(asUnsigned(v, w)),
                               dst));
  } else if (name == "arith.fptosi" || name == "arith.fptoui") {
    for (double v : a.f)
      d.i.push_back(floatToInt(v, intWidth(dst), name == "arith.fptoui"));
  } else if (name == "arith.extsi" || name == "arith.trunci" ||
             name == "arith.index_cast") {
    unsigned w = intWidth(src);
    for (int64_t v : a.i)
      d.i.push_back(wrapInt(asSigned(v, w), intWidth(dst)));
  } else if (name == "arith.extui" || name == "arith.index_castui") {
    unsigned w = intWidth(src);
    for (int64_t v : a.i)
      d.i.push_back(wrapInt(int64_t(asUnsigned(v, w)), intWidth(dst)));
  } else if (name == "arith.bitcast") {
    if (src.isF32() && dst.isInteger(32)) {
      for (double v : a.f) {
        float f = float(v);
        int32_t bits;
        std::memcpy(&bits, &f, 4);
        d.i.push_back(bits);
      }
    } else if (src.isInteger(32) && dst.isF32()) {
      for (int64_t v : a.i) {
        int32_t bits = int32_t(v);
        float f;
        std::memcpy(&f, &bits, 4);
        d.f.push_back(f);
      }
    } else if (src == dst) {
      d = a;
      d.shape = shapeOf(out.getType());
    } else {
      return fail(&op, "only f32 <-> i32 bitcasts are supported");
    }
  } else {
    handled = false;
    return true;
  }
  setData(out, std::move(d));
  return true;
}

bool Machine::execFor(scf::ForOp op) {
  Type ivType = op.getInductionVar().getType();
  unsigned w = intWidth(ivType);
  bool isUnsigned = op.getUnsignedCmp();
  int64_t lb = data(op.getLowerBound()).i[0],
          ub = data(op.getUpperBound()).i[0], step = data(op.getStep()).i[0];
  if (asSigned(step, w) <= 0 && !isUnsigned)
    return fail(op,
                "the step " + Twine(asSigned(step, w)) + " is not positive");
  SmallVector<RtValue> iter, results;
  for (Value v : op.getInitArgs())
    iter.push_back(get(v));
  int64_t iv = lb;
  while (isUnsigned ? asUnsigned(iv, w) < asUnsigned(ub, w)
                    : asSigned(iv, w) < asSigned(ub, w)) {
    SmallVector<RtValue> args;
    RtValue ivv;
    ivv.kind = RtValue::Numbers;
    Data d;
    d.i = {iv};
    ivv.data = std::make_shared<const Data>(std::move(d));
    args.push_back(ivv);
    args.append(iter.begin(), iter.end());
    if (!execRegion(op.getRegion(), args, results))
      return false;
    iter.assign(results.begin(), results.end());
    int64_t next = wrapInt(int64_t(uint64_t(iv) + uint64_t(step)), w);
    // Stop instead of wrapping around past the top of the type.
    if (isUnsigned ? asUnsigned(next, w) <= asUnsigned(iv, w)
                   : asSigned(next, w) <= asSigned(iv, w))
      break;
    iv = next;
  }
  for (auto [r, v] : llvm::zip(op.getResults(), iter))
    env[r] = v;
  return true;
}

bool Machine::execWhile(scf::WhileOp op) {
  SmallVector<RtValue> args, results;
  for (Value v : op.getInits())
    args.push_back(get(v));
  for (;;) {
    if (!execRegion(op.getBefore(), args, results))
      return false;
    bool cond = results.front().data->i[0] != 0;
    SmallVector<RtValue> forwarded(results.begin() + 1, results.end());
    if (!cond) {
      for (auto [r, v] : llvm::zip(op.getResults(), forwarded))
        env[r] = v;
      return true;
    }
    if (!execRegion(op.getAfter(), forwarded, results))
      return false;
    args.assign(results.begin(), results.end());
  }
}

bool Machine::gather(Operation *op, Value tensor, ValueRange indices,
                     Value mask, Value other, Type resultType, Data &out) {
  const RtValue &t = get(tensor);
  const rt::HostTensor &buf = tensors[size_t(t.param)];
  Type elt = getElementTypeOrSelf(resultType);
  out.shape = shapeOf(resultType);
  out.isFloat = isa<FloatType>(elt);
  int64_t n = product(out.shape);
  if (out.isFloat)
    out.f.assign(size_t(n), 0.0);
  else
    out.i.assign(size_t(n), 0);
  size_t rank = t.extents.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * t.extents[d];
  std::vector<const Data *> idx;
  std::vector<unsigned> widths;
  for (Value v : indices) {
    idx.push_back(&data(v));
    widths.push_back(intWidth(getElementTypeOrSelf(v.getType())));
  }
  const Data *m = mask ? &data(mask) : nullptr;
  const Data *o = other ? &data(other) : nullptr;
  for (int64_t e = 0; e < n; ++e) {
    bool in = !m || m->i[size_t(e)] != 0;
    int64_t offset = 0;
    for (size_t d = 0; d < rank && in; ++d) {
      int64_t x = asSigned(idx[d]->i[size_t(e)], widths[d]);
      if (x < 0 || x >= t.extents[d])
        in = false;
      offset += x * strides[d];
    }
    if (in) {
      if (out.isFloat)
        out.f[size_t(e)] = readFloat(buf, offset);
      else
        out.i[size_t(e)] = readInt(buf, offset);
    } else if (o) {
      if (out.isFloat)
        out.f[size_t(e)] = o->f[size_t(e)];
      else
        out.i[size_t(e)] = o->i[size_t(e)];
    }
  }
  (void)op;
  return true;
}

bool Machine::execStore(tile::StoreOp op) {
  const RtValue &t = get(op.getTensor());
  const rt::Param &p = bundle.params[size_t(t.param)];
  if (p.access == rt::Access::Read)
    return fail(op,
                "stores into '" + p.name + "', whose tile.access is \"read\"");
  rt::HostTensor &buf = tensors[size_t(t.param)];
  const Data &v = data(op.getValue());
  size_t rank = t.extents.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * t.extents[d];
  std::vector<const Data *> idx;
  std::vector<unsigned> widths;
  for (Value i : op.getIndices()) {
    idx.push_back(&data(i));
    widths.push_back(intWidth(getElementTypeOrSelf(i.getType())));
  }
  const Data *m = op.getMask() ? &data(op.getMask()) : nullptr;
  int64_t n = int64_t(v.size());
  for (int64_t e = 0; e < n; ++e) {
    if (m && m->i[size_t(e)] == 0)
      continue;
    int64_t offset = 0;
    bool in = true;
    for (size_t d = 0; d < rank && in; ++d) {
      int64_t x = asSigned(idx[d]->i[size_t(e)], widths[d]);
      if (x < 0 || x >= t.extents[d])
        in = false;
      offset += x * strides[d];
    }
    if (!in)
      continue;
    if (v.isFloat)
      buf.set(offset, v.f[size_t(e)]);
    else
      writeInt(buf, offset, v.i[size_t(e)]);
  }
  return true;
}

bool Machine::execReduce(tile::ReduceOp op) {
  const Data &a = data(op.getSource());
  Type elt = getElementTypeOrSelf(op.getSource().getType());
  unsigned axis = op.getAxis();
  int64_t outer = 1, inner = 1, len = a.shape[axis];
  for (unsigned d = 0; d < axis; ++d)
    outer *= a.shape[d];
  for (size_t d = axis + 1; d < a.shape.size(); ++d)
    inner *= a.shape[d];
  Data d;
  d.shape = shapeOf(op.getResult().getType());
  d.isFloat = a.isFloat;
  tile::ReduceKind kind = op.getKind();
  unsigned w = a.isFloat ? 0 : intWidth(elt);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return size_t((o * len + k) * inner + in); };
      if (a.isFloat) {
        double acc = a.f[at(0)];
        for (int64_t k = 1; k < len; ++k) {
          double x = a.f[at(k)];
          if (kind == tile::ReduceKind::Sum)
            acc += x;
          else if (kind == tile::ReduceKind::Max)
            acc = maximumF(acc, x);
          else
            acc = minimumF(acc, x);
        }
        d.f.push_back(roundFloat(acc, elt));
      } else {
        int64_t acc = asSigned(a.i[at(0)], w);
        for (int64_t k = 1; k < len; ++k) {
          int64_t x = asSigned(a.i[at(k)], w);
          if (kind == tile::ReduceKind::Sum)
            acc =
                wrapInt(int64_t(uint64_t(acc) + uint64_t(x)), w == 1 ? 64 : w);
          else if (kind == tile::ReduceKind::Max)
            acc = std::max(acc, x);
          else
            acc = std::min(acc, x);
        }
        d.i.push_back(wrapInt(acc, w));
      }
    }
  setData(op.getResult(), std::move(d));
  return true;
}

bool Machine::execDot(tile::DotOp op) {
  const Data &a = data(op.getA()), &b = data(op.getB()), &c = data(op.getAcc());
  int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  Data d;
  d.shape = {M, N};
  d.isFloat = true;
  d.f.resize(size_t(M * N));
  // f16/bf16 products are exact in f32; the sum accumulates in f32.
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = float(c.f[size_t(i * N + j)]);
      for (int64_t k = 0; k < K; ++k)
        acc += float(a.f[size_t(i * K + k)]) * float(b.f[size_t(k * N + j)]);
      d.f[size_t(i * N + j)] = acc;
    }
  setData(op.getResult(), std::move(d));
  return true;
}

bool Machine::execBroadcast(tile::BroadcastOp op) {
  const Data &a = data(op.getSource());
  Data d;
  d.shape = shapeOf(op.getResult().getType());
  d.isFloat = a.isFloat;
  size_t rank = d.shape.size();
  std::vector<int64_t> srcStride(rank, 0);
  int64_t s = 1;
  for (size_t k = rank; k-- > 0;) {
    srcStride[k] = a.shape[k] == 1 ? 0 : s;
    s *= a.shape[k];
  }
  int64_t n = product(d.shape);
  std::vector<int64_t> counter(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k)
      src += counter[k] * srcStride[k];
    if (d.isFloat)
      d.f.push_back(a.f[size_t(src)]);
    else
      d.i.push_back(a.i[size_t(src)]);
    for (size_t k = rank; k-- > 0;) {
      if (++counter[k] < d.shape[k])
        break;
      counter[k] = 0;
    }
  }
  setData(op.getResult(), std::move(d));
  return true;
}

bool Machine::execOp(Operation &op) {
  bool handled = false;
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return execConstant(c);
  if (!execElementwise(op, handled))
    return false;
  if (handled)
    return true;
  if (!execCast(op, handled))
    return false;
  if (handled)
    return true;

  // Program identity and tile construction.
  if (auto p = dyn_cast<tile::ProgramIdOp>(op)) {
    Data d;
    d.i = {pid[p.getAxis()]};
    setData(p.getResult(), std::move(d));
    return true;
  }
  if (auto p = dyn_cast<tile::NumProgramsOp>(op)) {
    Data d;
    d.i = {wrapInt(plan.grid[p.getAxis()], 32)};
    setData(p.getResult(), std::move(d));
    return true;
  }
  if (auto a = dyn_cast<tile::ArangeOp>(op)) {
    Data d;
    d.shape = shapeOf(a.getType());
    for (int64_t k = 0; k < d.shape[0]; ++k)
      d.i.push_back(k);
    setData(a.getResult(), std::move(d));
    return true;
  }
  if (auto s = dyn_cast<tile::SplatOp>(op)) {
    const Data &v = data(s.getValue());
    Data d;
    d.shape = shapeOf(s.getType());
    d.isFloat = v.isFloat;
    size_t n = size_t(product(d.shape));
    if (d.isFloat)
      d.f.assign(n, v.f[0]);
    else
      d.i.assign(n, v.i[0]);
    setData(s.getResult(), std::move(d));
    return true;
  }
  if (auto b = dyn_cast<tile::BroadcastOp>(op))
    return execBroadcast(b);
  if (isa<tile::ExpandDimsOp, tile::ConvertLayoutOp>(op)) {
    // Same elements in the same order; only the shape or layout changes.
    Data d = data(op.getOperand(0));
    d.shape = shapeOf(op.getResult(0).getType());
    setData(op.getResult(0), std::move(d));
    return true;
  }
  if (auto t = dyn_cast<tile::TransOp>(op)) {
    setData(t.getResult(), transposeData(data(t.getSource())));
    return true;
  }

  // Global tensors.
  if (auto m = dyn_cast<tile::MakeTensorOp>(op)) {
    const RtValue &base = get(m.getBase());
    RtValue v;
    v.kind = RtValue::Tensor;
    v.param = base.param;
    auto dyn = m.getDynamicDims().begin();
    for (int64_t e : m.getType().getShape()) {
      if (ShapedType::isDynamic(e))
        e = data(*dyn++).i[0];
      if (e < 0)
        return fail(op, "extent " + Twine(e) + " is negative");
      v.extents.push_back(e);
    }
    const rt::HostTensor &buf = tensors[size_t(v.param)];
    // The extents come from the IR; they must fit the buffer they view, so
    // that no in-bounds index can reach outside it.
    int64_t n = 1;
    for (int64_t e : v.extents)
      n = e > 0 && n > std::numeric_limits<int64_t>::max() / e ? -1 : n * e;
    if (n < 0 || n > buf.numel())
      return fail(op, "extents " + rt::formatShape(v.extents) +
                          " do not fit the buffer of '" +
                          bundle.params[size_t(v.param)].name + "' " +
                          rt::formatShape(buf.shape));
    env[m.getResult()] = std::move(v);
    return true;
  }
  if (auto d = dyn_cast<tile::DimOp>(op)) {
    Data r;
    r.i = {wrapInt(get(d.getTensor()).extents[d.getDim()], 32)};
    setData(d.getResult(), std::move(r));
    return true;
  }
  if (auto l = dyn_cast<tile::LoadOp>(op)) {
    Data d;
    if (!gather(&op, l.getTensor(), l.getIndices(), l.getMask(), l.getOther(),
                l.getType(), d))
      return false;
    setData(l.getResult(), std::move(d));
    return true;
  }
  if (auto s = dyn_cast<tile::StoreOp>(op))
    return execStore(s);

  // Compute.
  if (auto d = dyn_cast<tile::DotOp>(op))
    return execDot(d);
  if (auto r = dyn_cast<tile::ReduceOp>(op))
    return execReduce(r);

  // Pipelines: a FIFO of blocks per ring.
  if (auto c = dyn_cast<tile::PipelineCreateOp>(op)) {
    RtValue v;
    v.kind = RtValue::Pipeline;
    v.pipeline = int(rings.size());
    rings.emplace_back();
    ringStages.push_back(c.getType().getStages());
    env[c.getResult()] = v;
    return true;
  }
  if (auto p = dyn_cast<tile::PipelinePushOp>(op)) {
    int ring = get(p.getPipeline()).pipeline;
    if (rings[size_t(ring)].size() >= ringStages[size_t(ring)])
      return fail(op, "a push with all " + Twine(ringStages[size_t(ring)]) +
                          " stages already outstanding");
    Data d;
    auto type = cast<tile::PipelineType>(p.getPipeline().getType());
    if (!gather(&op, p.getTensor(), p.getIndices(), p.getMask(), p.getOther(),
                type.getTileType(), d))
      return false;
    rings[size_t(ring)].push_back(std::make_shared<const Data>(std::move(d)));
    return true;
  }
  if (auto p = dyn_cast<tile::PipelinePopOp>(op)) {
    auto &ring = rings[size_t(get(p.getPipeline()).pipeline)];
    if (ring.empty())
      return fail(op, "pop with no push outstanding");
    RtValue v;
    v.kind = RtValue::Numbers;
    v.data = ring.front();
    ring.pop_front();
    // A transposed pop reads the stage as tile.trans of the popped tile.
    if (p.getTranspose())
      v.data = std::make_shared<const Data>(transposeData(*v.data));
    env[p.getResult()] = std::move(v);
    return true;
  }

  // Control flow.
  if (auto f = dyn_cast<scf::ForOp>(op))
    return execFor(f);
  if (auto w = dyn_cast<scf::WhileOp>(op))
    return execWhile(w);
  if (auto i = dyn_cast<scf::IfOp>(op)) {
    bool cond = data(i.getCondition()).i[0] != 0;
    SmallVector<RtValue> results;
    if (!execRegion(cond ? i.getThenRegion() : i.getElseRegion(), {}, results))
      return false;
    for (auto [r, v] : llvm::zip(i.getResults(), results))
      env[r] = v;
    return true;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return fail(op,
                  "calls '" + call.getCallee() + "', which has no body here");
    if (callDepth > 64)
      return fail(op, "calls nest deeper than 64 (recursion?)");
    if (!checkSupported(callee))
      return false;
    SmallVector<RtValue> args, results;
    for (Value v : call.getOperands())
      args.push_back(get(v));
    ++callDepth;
    bool ok = execRegion(callee.getBody(), args, results);
    --callDepth;
    if (!ok)
      return false;
    for (auto [r, v] : llvm::zip(call.getResults(), results))
      env[r] = v;
    return true;
  }
  return fail(&op, "is not supported by the interpreter");
}

} // namespace

bool executeGrid(func::FuncOp kernel, const rt::Bundle &bundle,
                 const rt::LaunchPlan &plan,
                 std::vector<rt::HostTensor> &tensors, std::string &error) {
  Machine machine(kernel, bundle, plan, tensors);
  return machine.run(error);
}

} // namespace tegula::interp
