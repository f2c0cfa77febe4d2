//===- ElementOrder.h - Straight-line code element by element ---*- C++ -*-===//
//
// The lowering gives each thread its part of a tile as one LLVM vector
// (<64 x float> for a 128 x 128 block over 256 threads), and every
// elementwise operation as one vector instruction. The NVPTX back end splits
// those in place, so a chain over a block (an epilogue's bias, erf and cast)
// computes each operation for every element before the next one starts, and
// every intermediate tile is live at once: ptxas keeps that order and
// spills (a GEMM's exact-GELU epilogue at 128 x 128: 156 bytes). Splitting
// the vectors into scalars and computing each pure instruction just before
// its first user turns that into one chain per element.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TARGET_ELEMENTORDER_H
#define TEGULA_TARGET_ELEMENTORDER_H

namespace llvm {
class BasicBlock;
class Module;
} // namespace llvm

namespace tegula::target {

/// Splits vector arithmetic wider than 32 bits into scalars (loads, stores
/// and 32-bit vectors such as <2 x bfloat> stay whole), then reorders every
/// basic block outside loops with sinkToFirstUse. Loop bodies keep their
/// order: there the tile-at-a-time order gives ptxas independent work to
/// hide latency with, and their live tiles are the loop's state anyway.
void orderElementChains(llvm::Module &module);

/// Reorders `block`: an instruction that neither touches memory nor has side
/// effects, is not convergent, not a PHI and has a non-PHI user in the block
/// moves to just before its first user, its operands' trees first (depth
/// first); every other instruction keeps its relative order. Returns whether
/// anything moved.
bool sinkToFirstUse(llvm::BasicBlock &block);

} // namespace tegula::target

#endif // TEGULA_TARGET_ELEMENTORDER_H
