//===- TestPasses.td - Passes that print analyses for lit --*- tablegen -*-===//
//
// Built only into tile-opt (test/lib, as MLIR's): the lit tests of the
// layouts and analyses read their remarks; tilec never links them.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TEST_PASSES
#define TEGULA_TEST_PASSES

include "mlir/Pass/PassBase.td"

def TileTestLinearLayout
    : Pass<"tile-test-linear-layout", "::mlir::func::FuncOp"> {
  let summary = "Print the linear layout of every tile result (for tests)";
  let description = [{
    Emits a remark on each op whose results carry layout encodings, giving
    the register, lane and warp bases of the linear layout. The lit tests of
    the layouts use it.
  }];
}

def TileTestAffineIndex
    : Pass<"tile-test-affine-index", "::mlir::func::FuncOp"> {
  let summary = "Print each access index's uniform and coordinate parts "
                "(for tests)";
  let description = [{
    Emits a remark on each global access giving, per index tile, the split
    that tegula/Analysis/AffineIndex.h finds (the constant, the factor of
    each uniform scalar, the coefficient of each block coordinate), or
    "not affine".
  }];
}

def TileTestAxisInfo : Pass<"tile-test-axis-info", "::mlir::func::FuncOp"> {
  let summary = "Print axis facts and access vector widths (for tests)";
  let description = [{
    Emits a remark on each integer tile result giving its steps and
    divisor, on each boolean tile result its constancy along each dimension,
    and on each load, store and push the registers one vector instruction
    moves. Needs laid-out IR for the widths.
  }];
}

def TileTestGlobalAccesses
    : Pass<"tile-test-global-accesses", "::mlir::func::FuncOp"> {
  let summary = "Print what each global access says of itself (for tests)";
  let description = [{
    Emits a remark on each op of GlobalAccessOpInterface: whether it reads
    or writes, the kernel parameter its tensor is made from, its index and
    mask tiles, whether it reads after returning, which earlier accesses of
    the function it commutes with, and whether it moves vectors.
  }];
}

def TileTestSharedMemoryPlan
    : Pass<"tile-test-shared-memory-plan", "::mlir::func::FuncOp"> {
  let summary = "Print the shared-memory plan of each kernel (for tests)";
  let description = [{
    Emits a remark on each function with its total, scratch offset and
    size, on each pipeline creation with its ring's offset, and on each op
    that needs scratch with its bytes. Needs laid-out IR.
  }];
}

def TileTestPipelineSync
    : Pass<"tile-test-pipeline-sync", "::mlir::ModuleOp"> {
  let summary = "Print the synchronization of each pipeline op (for tests)";
  let description = [{
    Emits a remark on each pipeline pop and push: `full`, `none` or
    `if-same-stage`, as the lowering will synchronize it.
  }];
}

def TileTestMemoryOrder : Pass<"tile-test-memory-order", "::mlir::ModuleOp"> {
  let summary = "Print the barriers before global accesses (for tests)";
  let description = [{
    Emits a remark on each load, store and push that needs a barrier before
    it (`barrier`, or `wait for copies and barrier`). Needs laid-out IR.
  }];
}

def TileTestSharedAddresses
    : Pass<"tile-test-shared-addresses", "::mlir::func::FuncOp"> {
  let summary = "Check shared-memory element addresses against the "
                "hardware's swizzle (for tests)";
  let description = [{
    For each 2-D tile type among the function's arguments, evaluates the
    address getSharedElementAddress gives every element of a tile of that
    shape stored at offset 0 and compares it with the address the hardware
    reads it at: for a tile of S-byte swizzle (getSwizzleBytes), element
    (r, c) at byte b = p * rows * S + r * S + (c * bytes) % S of panel
    p = c * bytes / S, with address bits 4 and up XORed with bits 7 and up
    (log2(S / 16) of each), as wgmma and TMA read the S-byte swizzle mode;
    otherwise row-major. Emits a remark with the swizzle and the number of
    elements checked, or an error at the first element out of place.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // TEGULA_TEST_PASSES
