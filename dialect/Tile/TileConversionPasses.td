//===- TileConversionPasses.td - Lowering of tile IR -------*- tablegen -*-===//
//
// The conversion out of the tile dialect (as MLIR's Conversion/Passes.td);
// the transforms before it are in TilePasses.td.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TILE_CONVERSION_PASSES
#define TEGULA_TILE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileToNVVM : Pass<"convert-tile-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower laid-out tiles to per-thread vectors and NVVM";
  let description = [{
    Every tile becomes one vector per thread holding its registers in the
    order of its linear layout. Thread coordinates come from the layout's
    lane and warp bases; memory accesses compute 64-bit addresses and masks
    from the tensors' extents; dots become `mma.sync.m16n8k16` over the
    fragments; reductions combine registers, then lanes with butterfly
    shuffles, then warps through shared memory; layout conversions permute
    registers where lanes and warps agree and go through shared memory
    otherwise. Shared memory is planned statically: pipeline rings first,
    then one scratch area reused by conversions and reductions. The total is
    recorded on the kernel as `tile.shared_bytes` and checked against the
    target's limit. Kernels become `func.func`s over LLVM types, marked for
    NVVM; scf, arith and vector ops remain for the standard LLVM lowering.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // TEGULA_TILE_CONVERSION_PASSES
