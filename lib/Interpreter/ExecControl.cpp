//===- ExecControl.cpp - Regions, loops, branches and calls ---------------===//
//
// scf.for, scf.while, scf.if and func.call run their regions through
// Machine::execRegion, whose terminator (scf.yield, scf.condition,
// func.return) hands back the region's results.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include "Tile/TileOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace tegula::interp {

bool Machine::execRegion(Region &region, ArrayRef<RtValue> args,
                         SmallVectorImpl<RtValue> &results) {
  results.clear();
  if (region.empty())
    return true;
  Block &block = region.front();
  for (auto [arg, v] : llvm::zip(block.getArguments(), args))
    set(arg, v);
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

namespace {

bool execFor(Machine &m, scf::ForOp op) {
  Type ivType = op.getInductionVar().getType();
  unsigned w = intWidth(ivType);
  bool isUnsigned = op.getUnsignedCmp();
  int64_t lb = m.data(op.getLowerBound()).i[0],
          ub = m.data(op.getUpperBound()).i[0],
          step = m.data(op.getStep()).i[0];
  if (asSigned(step, w) <= 0 && !isUnsigned)
    return m.fail(op,
                  "the step " + Twine(asSigned(step, w)) + " is not positive");
  SmallVector<RtValue> iter, results;
  for (Value v : op.getInitArgs())
    iter.push_back(m.get(v));
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
    if (!m.execRegion(op.getRegion(), args, results))
      return false;
    iter.assign(results.begin(), results.end());
    int64_t next = wrapInt(int64_t(uint64_t(iv) + uint64_t(step)), w);
    // Stop instead of wrapping around past the top of the type.
    if (isUnsigned ? asUnsigned(next, w) <= asUnsigned(iv, w)
                   : asSigned(next, w) <= asSigned(iv, w))
      break;
    iv = next;
  }
  m.setResults(op.getResults(), iter);
  return true;
}

bool execWhile(Machine &m, scf::WhileOp op) {
  SmallVector<RtValue> args, results;
  for (Value v : op.getInits())
    args.push_back(m.get(v));
  for (;;) {
    if (!m.execRegion(op.getBefore(), args, results))
      return false;
    bool cond = results.front().data->i[0] != 0;
    SmallVector<RtValue> forwarded(results.begin() + 1, results.end());
    if (!cond) {
      m.setResults(op.getResults(), forwarded);
      return true;
    }
    if (!m.execRegion(op.getAfter(), forwarded, results))
      return false;
    args.assign(results.begin(), results.end());
  }
}

bool execIf(Machine &m, scf::IfOp op) {
  bool cond = m.data(op.getCondition()).i[0] != 0;
  SmallVector<RtValue> results;
  if (!m.execRegion(cond ? op.getThenRegion() : op.getElseRegion(), {},
                    results))
    return false;
  m.setResults(op.getResults(), results);
  return true;
}

bool execCall(Machine &m, func::CallOp op) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!callee || callee.isExternal())
    return m.fail(op, "calls '" + op.getCallee() + "', which has no body here");
  if (m.callDepth > 64)
    return m.fail(op, "calls nest deeper than 64 (recursion?)");
  if (!m.checkSupported(callee))
    return false;
  SmallVector<RtValue> args, results;
  for (Value v : op.getOperands())
    args.push_back(m.get(v));
  ++m.callDepth;
  bool ok = m.execRegion(callee.getBody(), args, results);
  --m.callDepth;
  if (!ok)
    return false;
  m.setResults(op.getResults(), results);
  return true;
}

/// device_assert: fails on the first false element, naming it in a tile.
bool execAssert(Machine &m, tile::AssertOp op) {
  const Data &c = m.data(op.getCondition());
  for (size_t e = 0; e < c.i.size(); ++e) {
    if (c.i[e] != 0)
      continue;
    std::string where;
    if (!c.shape.empty()) {
      where = " at element [";
      int64_t rest = int64_t(e);
      std::vector<int64_t> index(c.shape.size());
      for (size_t d = c.shape.size(); d-- > 0;) {
        index[d] = rest % c.shape[d];
        rest /= c.shape[d];
      }
      for (size_t d = 0; d < index.size(); ++d)
        where += (d ? ", " : "") + std::to_string(index[d]);
      where += "]";
    }
    std::string message = op.getMessage().str();
    return m.fail(op, "device_assert failed: " +
                          (message.empty()
                               ? op.getText().str()
                               : message + " (" + op.getText().str() + ")") +
                          " is false" + where);
  }
  return true;
}

} // namespace

void registerControlOps(OpTable &table) {
  table.add<tile::AssertOp>(execAssert);
  table.add<scf::ForOp>(execFor);
  table.add<scf::WhileOp>(execWhile);
  table.add<scf::IfOp>(execIf);
  table.add<func::CallOp>(execCall);
}

} // namespace tegula::interp
