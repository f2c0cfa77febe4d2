//===- TestAnalyses.cpp - Print the analyses' results for lit tests -------===//

#include "tegula/Analysis/AxisInfo.h"
#include "tegula/Analysis/MemoryOrder.h"
#include "tegula/Analysis/PipelineSync.h"
#include "tegula/Analysis/SharedMemoryPlan.h"

#include "TestPasses.h"
#include "Tile/TileOps.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tegula::tile {
#define GEN_PASS_DEF_TILETESTAXISINFO
#define GEN_PASS_DEF_TILETESTSHAREDMEMORYPLAN
#define GEN_PASS_DEF_TILETESTPIPELINESYNC
#define GEN_PASS_DEF_TILETESTMEMORYORDER
#include "TestPasses.h.inc"
} // namespace tegula::tile

using namespace tegula::tile;

namespace {

std::string stepText(int64_t step) {
  return step == AxisFacts::kUnknownStep ? "?" : std::to_string(step);
}

void printSteps(llvm::raw_ostream &os, const AxisFacts &facts) {
  os << "steps = [";
  llvm::interleaveComma(facts.steps, os,
                        [&](int64_t step) { os << stepText(step); });
  os << "], divisor = " << facts.divisor;
}

/// One remark per load, store and push: what is known of each index tile
/// and the mask, and the vector width the lowering will use.
struct TestAxisInfoPass
    : public tegula::tile::impl::TileTestAxisInfoBase<TestAxisInfoPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      unsigned width = getAccessVectorWidth(op);
      if (!width)
        return;
      std::string text;
      llvm::raw_string_ostream os(text);
      ValueRange indices;
      Value mask;
      if (auto load = dyn_cast<LoadOp>(op)) {
        indices = load.getIndices();
        mask = load.getMask();
      } else if (auto store = dyn_cast<StoreOp>(op)) {
        indices = store.getIndices();
        mask = store.getMask();
      } else {
        auto push = cast<PipelinePushOp>(op);
        indices = push.getIndices();
        mask = push.getMask();
      }
      for (auto [dim, index] : llvm::enumerate(indices)) {
        os << "index " << dim << ": ";
        printSteps(os, getAxisFacts(index));
        os << "; ";
      }
      if (mask) {
        auto type = cast<RankedTensorType>(mask.getType());
        os << "mask constancy = [";
        llvm::interleaveComma(
            llvm::seq<unsigned>(0, type.getRank()), os,
            [&](unsigned dim) { os << getMaskConstancy(mask, dim); });
        os << "]; ";
      }
      os << "vector width = " << width;
      op->emitRemark() << text;
    });
  }
};

struct TestSharedMemoryPlanPass
    : public tegula::tile::impl::TileTestSharedMemoryPlanBase<
          TestSharedMemoryPlanPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    KernelPlan plan = planSharedMemory(func);
    func.emitRemark() << "shared bytes = " << plan.sharedBytes
                      << ", scratch at " << plan.scratchOffset << " ("
                      << plan.scratchBytes << " bytes)";
    func.walk([&](Operation *op) {
      auto ring = plan.pipelineOffsets.find(op);
      if (ring != plan.pipelineOffsets.end())
        op->emitRemark() << "ring at " << ring->second;
      else if (int64_t bytes = getScratchBytes(op))
        op->emitRemark() << op->getName() << " scratch = " << bytes
                         << (plan.scratchOverRings.contains(op)
                                 ? " over the rings"
                                 : "");
    });
  }
};

StringRef syncName(PipelineSync sync) {
  switch (sync) {
  case PipelineSync::Full:
    return "full";
  case PipelineSync::None:
    return "none";
  case PipelineSync::IfSameStage:
    return "if-same-stage";
  }
  llvm_unreachable("unknown pipeline sync");
}

struct TestPipelineSyncPass
    : public tegula::tile::impl::TileTestPipelineSyncBase<
          TestPipelineSyncPass> {
  void runOnOperation() override {
    llvm::DenseMap<Operation *, PipelineSync> sync;
    llvm::DenseMap<Operation *, int64_t> pending;
    if (failed(analyzePipelineSync(getOperation(), sync, pending)))
      return signalPassFailure();
    // Each remark names its ring and the op's place among the ring's pops
    // or pushes, so that no two read alike.
    llvm::MapVector<Value, std::pair<int, int>> counts;
    getOperation().walk([&](Operation *op) {
      if (!isa<PipelinePopOp, PipelinePushOp>(op))
        return;
      Value ring = getRing(op->getOperand(0));
      auto [it, inserted] = counts.try_emplace(ring, 0, 0);
      bool isPop = isa<PipelinePopOp>(op);
      int ordinal = isPop ? it->second.first++ : it->second.second++;
      PipelineSync kind = sync.lookup_or(op, PipelineSync::Full);
      InFlightDiagnostic remark = op->emitRemark();
      remark << "ring " << (it - counts.begin()) << (isPop ? " pop " : " push ")
             << ordinal << ": sync = " << syncName(kind);
      if (isPop && kind == PipelineSync::Full)
        remark << ", copy groups left in flight = " << pending.lookup(op);
    });
  }
};

struct TestMemoryOrderPass
    : public tegula::tile::impl::TileTestMemoryOrderBase<TestMemoryOrderPass> {
  void runOnOperation() override {
    llvm::DenseMap<Operation *, PipelineSync> sync;
    llvm::DenseMap<Operation *, int64_t> pending;
    if (failed(analyzePipelineSync(getOperation(), sync, pending)))
      return signalPassFailure();
    llvm::DenseMap<Operation *, MemoryBarrier> barriers;
    analyzeMemoryOrder(getOperation(), sync, barriers);
    getOperation().walk([&](Operation *op) {
      switch (barriers.lookup_or(op, MemoryBarrier::None)) {
      case MemoryBarrier::None:
        break;
      case MemoryBarrier::Barrier:
        op->emitRemark() << "barrier";
        break;
      case MemoryBarrier::WaitCopiesAndBarrier:
        op->emitRemark() << "wait for copies and barrier";
        break;
      }
    });
  }
};

} // namespace
