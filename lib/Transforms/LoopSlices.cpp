//===- LoopSlices.cpp - The ops of a loop body that compute a value -------===//

#include "LoopSlices.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

std::optional<SmallVector<Operation *>>
tegula::tile::backwardSlice(scf::ForOp loop, ValueRange values) {
  SetVector<Operation *> slice;
  SmallVector<Value> worklist(values.begin(), values.end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (value == loop.getInductionVar())
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner()->getParentOp() == loop ||
          loop->isAncestor(arg.getOwner()->getParentOp()))
        return std::nullopt; // loop-carried or nested
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!loop->isAncestor(def))
      continue;
    if (def->getBlock() != loop.getBody() || !isPure(def) ||
        def->getNumRegions() != 0)
      return std::nullopt;
    if (slice.insert(def))
      worklist.append(def->operand_begin(), def->operand_end());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

IRMapping tegula::tile::cloneSlice(OpBuilder &builder, scf::ForOp loop,
                                   ArrayRef<Operation *> slice, Value iv) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  for (Operation *op : slice)
    builder.clone(*op, mapping);
  return mapping;
}
