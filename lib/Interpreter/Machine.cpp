//===- Machine.cpp - Running a kernel over its grid -----------------------===//
//
// A tree-walking interpreter over tile, arith, math, scf and func ops: it
// binds the kernel's arguments, runs every program of the grid in turn and
// hands each op to its handler in the op table (the Exec*.cpp files).
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "tegula/Interpreter/Interpreter.h"

#include "Tile/TileDialect.h"

#include "llvm/Support/ErrorHandling.h"

#include <map>

using namespace mlir;

namespace tegula::interp {

void OpTable::insert(TypeID id, StringRef name, Handler handler) {
  if (!handlers.try_emplace(id, std::move(handler)).second)
    llvm::report_fatal_error("interpreter: two handlers for '" + name + "'");
}

const Handler *OpTable::lookup(Operation &op) const {
  auto it = handlers.find(op.getName().getTypeID());
  return it == handlers.end() ? nullptr : &it->second;
}

/// Every family's ops, registered once.
static const OpTable &opTable() {
  static const OpTable table = [] {
    OpTable t;
    registerArithOps(t);
    registerControlOps(t);
    registerMemoryOps(t);
    registerTileOps(t);
    return t;
  }();
  return table;
}

bool Machine::fail(Operation *op, const Twine &message) {
  if (error.empty())
    error = (locationText(op->getLoc()) + ": '" + op->getName().getStringRef() +
             "': " + message + " (program [" + Twine(pid[0]) + ", " +
             Twine(pid[1]) + ", " + Twine(pid[2]) + "])")
                .str();
  return false;
}

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

/// What a specialized variant assumes of an integer argument (divisible,
/// or equal to a value) must hold for the values it runs on: the launcher
/// picks a variant only where its conditions say so, and this catches a
/// condition that says less than the IR assumes. An address's alignment
/// (tile.alignment) has no meaning here: tensors are host buffers.
static bool checkAssumptions(func::FuncOp kernel, unsigned a, int64_t value,
                             std::string &error) {
  auto divisor = kernel.getArgAttrOfType<IntegerAttr>(
      a, tile::TileDialect::kDivisibilityAttrName);
  auto known = kernel.getArgAttrOfType<IntegerAttr>(
      a, tile::TileDialect::kKnownValueAttrName);
  std::string what;
  if (divisor && value % divisor.getInt() != 0)
    what = "a multiple of " + std::to_string(divisor.getInt());
  else if (known && value != known.getInt())
    what = std::to_string(known.getInt());
  if (what.empty())
    return true;
  error = "kernel '" + kernel.getSymName().str() + "' assumes argument " +
          std::to_string(a) + " is " + what + ", but it is " +
          std::to_string(value);
  return false;
}

bool Machine::bindArguments() {
  // Function arguments are the bundle's parameters in order, with the size
  // variables (tile.size_var) and strides (tile.stride_of) taken out.
  size_t param = 0;
  std::map<std::string, size_t> stridesTaken;
  for (unsigned a = 0, e = kernel.getNumArguments(); a < e; ++a) {
    BlockArgument arg = kernel.getArgument(a);
    RtValue v;
    if (auto sv = kernel.getArgAttrOfType<StringAttr>(
            a, tile::TileDialect::kSizeVarAttrName)) {
      Data d;
      d.i = {wrapInt(plan.env.at(sv.getValue().str()), 32)};
      if (!checkAssumptions(kernel, a, d.i[0], error))
        return false;
      setData(arg, std::move(d));
      continue;
    }
    // The interpreter addresses a strided tensor by its logical index, as
    // its host tensor holds it; the strides only need a value.
    if (auto of = kernel.getArgAttrOfType<StringAttr>(
            a, tile::TileDialect::kStrideOfAttrName)) {
      const rt::Param *p = bundle.findParam(of.getValue().str());
      if (!p || !p->strided) {
        error = "argument " + std::to_string(a) + " is a stride of '" +
                of.getValue().str() + "', which is not a strided tensor";
        return false;
      }
      size_t dim = stridesTaken[of.getValue().str()]++;
      const auto &strides = plan.strides[size_t(p - bundle.params.data())];
      Data d;
      d.i = {dim < strides.size() ? strides[dim] : 0};
      if (!checkAssumptions(kernel, a, d.i[0], error))
        return false;
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
      set(arg, v);
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

bool Machine::execOp(Operation &op) {
  if (const Handler *handler = opTable().lookup(op))
    return (*handler)(*this, op);
  return fail(&op, "is not supported by the interpreter");
}

bool executeGrid(func::FuncOp kernel, const rt::Bundle &bundle,
                 const rt::LaunchPlan &plan,
                 std::vector<rt::HostTensor> &tensors, std::string &error) {
  Machine machine(kernel, bundle, plan, tensors);
  return machine.run(error);
}

} // namespace tegula::interp
