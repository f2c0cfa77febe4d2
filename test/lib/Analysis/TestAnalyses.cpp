//===- TestAnalyses.cpp - Print the analyses' results for lit tests -------===//

#include "tegula/Analysis/AffineIndex.h"
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
#define GEN_PASS_DEF_TILETESTAFFINEINDEX
#define GEN_PASS_DEF_TILETESTAXISINFO
#define GEN_PASS_DEF_TILETESTGLOBALACCESSES
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
      auto access = cast<GlobalAccessOpInterface>(op);
      ValueRange indices = access.getAccessIndices();
      Value mask = access.getAccessMask();
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

/// One remark per global access: each index tile's split into a uniform
/// part (a constant plus factor x scalar terms) and coordinate
/// coefficients, or "not affine".
struct TestAffineIndexPass
    : public tegula::tile::impl::TileTestAffineIndexBase<TestAffineIndexPass> {
  void runOnOperation() override {
    getOperation().walk([](GlobalAccessOpInterface access) {
      std::string text;
      llvm::raw_string_ostream os(text);
      for (auto [dim, index] : llvm::enumerate(access.getAccessIndices())) {
        os << (dim ? "; " : "") << "index " << dim << ": ";
        std::optional<AffineIndex> affine = getAffineIndex(index);
        if (!affine) {
          os << "not affine";
          continue;
        }
        os << affine->constant;
        for (auto [scalar, factor] : affine->scalars)
          os << " + " << factor << " x scalar";
        os << ", coefficients = [";
        llvm::interleaveComma(affine->coefficients, os);
        os << "]";
      }
      access->emitRemark() << text;
    });
  }
};

/// The kernel parameter `tensor` is made from (its tile.name), else "?".
std::string parameterName(Value tensor) {
  auto make = tensor.getDefiningOp<MakeTensorOp>();
  auto arg = make ? dyn_cast<BlockArgument>(make.getBase()) : BlockArgument();
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  auto name = func ? func.getArgAttrOfType<StringAttr>(
                         arg.getArgNumber(), TileDialect::kArgNameAttrName)
                   : StringAttr();
  return name ? name.str() : "?";
}

/// One remark per global access: its GlobalAccessOpInterface answers.
struct TestGlobalAccessesPass
    : public tegula::tile::impl::TileTestGlobalAccessesBase<
          TestGlobalAccessesPass> {
  void runOnOperation() override {
    SmallVector<GlobalAccessOpInterface> earlier;
    getOperation().walk([&](GlobalAccessOpInterface access) {
      InFlightDiagnostic remark = access->emitRemark();
      size_t indices = access.getAccessIndices().size();
      remark << (access.writesTensor() ? "writes '" : "reads '")
             << parameterName(access.getAccessedTensor()) << "' through "
             << indices << (indices == 1 ? " index tile" : " index tiles")
             << (access.getAccessMask() ? ", masked" : "")
             << (access.readsAfterReturning() ? ", reads after returning" : "");
      SmallVector<unsigned> commuting;
      for (auto [position, other] : llvm::enumerate(earlier))
        if (access.commutesWith(other))
          commuting.push_back(position);
      if (!commuting.empty()) {
        remark << ", commutes with access ";
        llvm::interleaveComma(commuting, remark);
      }
      remark << (access.getVectorBlockType() ? ", vectors"
                                             : ", one element at a time");
      earlier.push_back(access);
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
      auto buffer = plan.sharedTileOffsets.find(op);
      if (ring != plan.pipelineOffsets.end())
        op->emitRemark() << "ring at " << ring->second;
      else if (buffer != plan.sharedTileOffsets.end())
        op->emitRemark() << "buffer at " << buffer->second
                         << (plan.sharedTileFollowers.contains(op)
                                 ? ", after a tile.to_shared"
                                 : "")
                         << (plan.sharedTileLeaders.contains(op)
                                 ? ", before a tile.to_shared"
                                 : "");
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
