//===- ElementOrder.cpp - Straight-line code element by element -----------===//

#include "tegula/Target/ElementOrder.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/DCE.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"

using namespace llvm;

namespace {
/// Whether `inst` may move within its block: it neither reads nor writes
/// memory, has no other side effect and does not depend on which threads
/// run it with it (shuffles, votes and barriers are convergent).
bool isMovable(const Instruction &inst) {
  if (isa<PHINode>(inst) || inst.isTerminator() || inst.isEHPad() ||
      isa<AllocaInst>(inst) || inst.mayReadOrWriteMemory() ||
      inst.mayHaveSideEffects())
    return false;
  if (const auto *call = dyn_cast<CallBase>(&inst))
    if (call->isConvergent() || call->isInlineAsm())
      return false;
  return true;
}

/// Whether a movable `inst` is placed by its users: it has a user in its own
/// block and none of them is a PHI there (a PHI reads it on the way round a
/// loop, after every other user).
bool isPlacedByUsers(const Instruction &inst) {
  bool hasUser = false;
  for (const User *user : inst.users()) {
    const auto *userInst = cast<Instruction>(user);
    if (userInst->getParent() != inst.getParent())
      continue;
    if (isa<PHINode>(userInst))
      return false;
    hasUser = true;
  }
  return hasUser;
}
} // namespace

bool tegula::target::sinkToFirstUse(BasicBlock &block) {
  SmallVector<Instruction *> original;
  DenseSet<Instruction *> deferred; // movable, placed by their users
  for (Instruction &inst : block) {
    original.push_back(&inst);
    if (isMovable(inst) && isPlacedByUsers(inst))
      deferred.insert(&inst);
  }
  if (deferred.empty())
    return false;

  // Each anchor (an instruction that keeps its place) is preceded by the
  // deferred instructions it needs that are not placed yet, operands before
  // users, found depth first with an explicit stack (reduction chains can be
  // thousands deep).
  SmallVector<Instruction *> order;
  order.reserve(original.size());
  DenseSet<Instruction *> placed;
  SmallVector<std::pair<Instruction *, unsigned>> stack;
  auto place = [&](Instruction *root) {
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto &[inst, next] = stack.back();
      if (next < inst->getNumOperands()) {
        auto *operand = dyn_cast<Instruction>(inst->getOperand(next++));
        if (operand && deferred.contains(operand) && !placed.contains(operand))
          stack.push_back({operand, 0});
        continue;
      }
      Instruction *done = inst;
      stack.pop_back();
      if (placed.insert(done).second)
        order.push_back(done);
    }
  };
  for (Instruction *inst : original)
    if (!deferred.contains(inst))
      place(inst);
  // Every user of a deferred instruction in the block is an anchor or
  // deferred itself, so each was reached from an anchor.
  assert(order.size() == original.size() && "an instruction was not placed");

  if (std::equal(order.begin(), order.end(), original.begin()))
    return false;
  for (Instruction *inst : order)
    inst->moveBeforePreserving(block, block.end());
  return true;
}

void tegula::target::orderElementChains(Module &module) {
  LoopAnalysisManager loops;
  FunctionAnalysisManager functions;
  CGSCCAnalysisManager cgscc;
  ModuleAnalysisManager modules;
  PassBuilder builder;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);

  ScalarizerPassOptions scalarize;
  scalarize.ScalarizeMinBits = 32;
  FunctionPassManager split;
  split.addPass(ScalarizerPass(scalarize));
  split.addPass(InstCombinePass()); // folds the scalarizer's extracts
  split.addPass(DCEPass());
  ModulePassManager passes;
  passes.addPass(createModuleToFunctionPassAdaptor(std::move(split)));
  passes.run(module, modules);

  for (Function &function : module) {
    if (function.isDeclaration())
      continue;
    DominatorTree dominators(function);
    LoopInfo loopInfo(dominators);
    for (BasicBlock &block : function)
      if (!loopInfo.getLoopFor(&block))
        sinkToFirstUse(block);
  }
}
