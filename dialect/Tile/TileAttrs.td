//===- TileAttrs.td - Layout encodings of tiles -----------*- tablegen -*-===//
//
// A layout says which thread of which warp holds which elements of a tile.
// Layouts are encodings on the tiles' ranked tensor types, attached by the
// layout-assignment pass. Every layout converts to a LinearLayout (a map
// over GF(2) from register, lane and warp bits to tile coordinates), which
// is what the lowering works with.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TILE_ATTRS
#define TEGULA_TILE_ATTRS

include "Tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_LayoutAttrInterface : AttrInterface<"LayoutAttrInterface"> {
  let cppNamespace = "::tegula::tile";
  let description = [{
    A distribution of a tile's elements over registers, lanes and warps.
  }];
  let methods = [
    InterfaceMethod<[{
        The linear layout of a tile of `shape` (every extent a power of two),
        or failure with a message through `emitError` when `shape` cannot be
        spread this way.
      }], "::mlir::FailureOr<::tegula::tile::LinearLayout>", "toLinearLayout",
      (ins "::llvm::ArrayRef<int64_t>":$shape,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
    InterfaceMethod<"Number of warps the layout spreads a tile over.",
      "unsigned", "getNumWarps">,
  ];
}

class Tile_LayoutAttr<string name, string attrMnemonic>
    : AttrDef<Tile_Dialect, name, [
        DeclareAttrInterfaceMethods<Tile_LayoutAttrInterface>]> {
  let mnemonic = attrMnemonic;
}

def Tile_BlockedLayoutAttr : Tile_LayoutAttr<"BlockedLayout", "blocked"> {
  let summary = "Contiguous chunks per thread, threads and warps in a grid";
  let description = [{
    Each thread holds `sizePerThread` contiguous elements per dimension; a
    warp's 32 lanes form a `threadsPerWarp` grid, and the warps a
    `warpsPerCTA` grid. `order` lists dimensions fastest first. The pattern
    repeats over larger tiles (more registers) and wraps over smaller ones
    (replication). Loads and stores use it, with `sizePerThread` along the
    contiguous dimension set for 16-byte accesses.

    ```mlir
    tensor<64x128xbf16, #tile.blocked<sizePerThread = [1, 8],
        threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$sizePerThread,
                        ArrayRefParameter<"unsigned">:$threadsPerWarp,
                        ArrayRefParameter<"unsigned">:$warpsPerCTA,
                        ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,`
        `threadsPerWarp` `=` `[` $threadsPerWarp `]` `,`
        `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
}

def Tile_MmaLayoutAttr : Tile_LayoutAttr<"MmaLayout", "mma"> {
  let summary = "Accumulator fragments of mma.sync m16n8k16";
  let description = [{
    The [M, N] result of a tensor-core dot as `mma.sync.m16n8k16` leaves it:
    within one 16x8 block, lane `4 g + t` holds rows `g` and `g + 8`,
    columns `2 t` and `2 t + 1`. Warps form a `warpsPerCTA = [wm, wn]` grid,
    each owning a contiguous [M / wm, N / wn] block that its registers
    cover in 16x8 steps.

    ```mlir
    tensor<128x64xf32, #tile.mma<warpsPerCTA = [8, 1]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$warpsPerCTA);
  let assemblyFormat = "`<` `warpsPerCTA` `=` `[` $warpsPerCTA `]` `>`";
  let genVerifyDecl = 1;
}

def Tile_DotOperandLayoutAttr
    : Tile_LayoutAttr<"DotOperandLayout", "dot_operand"> {
  let summary = "A or B fragments of mma.sync m16n8k16";
  let description = [{
    Operand `opIdx` (0 for A [M, K], 1 for B [K, N]) of a dot whose result
    has the `parent` mma layout, as `ldmatrix` leaves it in registers. Warps
    that share rows of A (or columns of B) hold the same fragments.

    ```mlir
    tensor<128x64xbf16, #tile.dot_operand<opIdx = 0, parent = #tile.mma<warpsPerCTA = [8, 1]>>>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `opIdx` `=` $opIdx `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

def Tile_SliceLayoutAttr : Tile_LayoutAttr<"SliceLayout", "slice"> {
  let summary = "A parent layout with one dimension projected away";
  let description = [{
    The layout of a reduction's result, or of a tile about to gain a unit
    dimension at `dim`: the `parent` layout with dimension `dim` removed.
    Threads that differed only along `dim` hold the same elements.

    ```mlir
    tensor<128xf32, #tile.slice<dim = 1, parent = #tile.mma<warpsPerCTA = [8, 1]>>>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `dim` `=` $dim `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

def Tile_SharedLayoutAttr : AttrDef<Tile_Dialect, "SharedLayout"> {
  let mnemonic = "shared";
  let summary = "A tile a warpgroup dot reads in place from shared memory";
  let description = [{
    The tile stays where a pipeline stage holds it (tile-plan-dots decides
    which tiles do), in the layout every shared tile has
    (getSharedElementAddress): column panels of `swizzle` bytes (128, 64 or
    32: the widest that divides the stored rows' bytes, getSwizzleBytes),
    each row's 16-byte chunks XOR-swizzled by its address bits 7 and up,
    which is the swizzle mode wgmma's matrix descriptors read. `order`
    lists the tile's dimensions fastest first, as for `#tile.blocked`:
    `[1, 0]` is the stage as pushed (rows contiguous), `[0, 1]` the stage
    seen through a transpose (the stored rows are the tile's columns). As a
    dot operand, A [M, K] with `order = [1, 0]` and B [K, N] with
    `order = [0, 1]` are K-major; B with `order = [1, 0]` is N-major. It
    has no registers: in the lowering it is the stage's byte offset.

    ```mlir
    tensor<64x128xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
    tensor<64x32xbf16, #tile.shared<swizzle = 64, order = [1, 0]>>
    ```
  }];
  let parameters = (ins "int64_t":$swizzle, ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `swizzle` `=` $swizzle `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the tile, read as dot operand `opIdx` (0 for A [M, K], 1 for
    /// B [K, N]), runs along K in memory.
    bool isKMajor(unsigned opIdx) const {
      return getOrder().front() == (opIdx == 0 ? 1u : 0u);
    }
    /// The rows and columns of the buffer that holds a tile of `shape` in
    /// this layout: the tile's, transposed where its columns are contiguous
    /// (::tegula::tile::getStoredShape of this layout's order).
    ::llvm::SmallVector<int64_t, 2>
    getStoredShape(::llvm::ArrayRef<int64_t> shape) const;
    /// The same stage seen through a transpose.
    SharedLayoutAttr transposed() const {
      return get(getContext(), getSwizzle(),
                 {getOrder().back(), getOrder().front()});
    }
  }];
}

//===----------------------------------------------------------------------===//
// Dot plans (tile-plan-dots)
//===----------------------------------------------------------------------===//

def Tile_DotFamily : I32EnumAttr<"DotFamily", "tensor-core instruction family", [
    I32EnumAttrCase<"MmaSync", 0, "mma_sync">,
    I32EnumAttrCase<"Wgmma", 1, "wgmma">
  ]> {
  let cppNamespace = "::tegula::tile";
  let genSpecializedAttr = 0;
}

def Tile_OperandSource : I32EnumAttr<"OperandSource", "where a dot reads an operand", [
    I32EnumAttrCase<"Registers", 0, "registers">,
    I32EnumAttrCase<"Stage", 1, "stage">,
    I32EnumAttrCase<"StagedCopy", 2, "staged_copy">
  ]> {
  let cppNamespace = "::tegula::tile";
  let genSpecializedAttr = 0;
}

def Tile_DotPlanAttr : AttrDef<Tile_Dialect, "DotPlan"> {
  let mnemonic = "dot_plan";
  let summary = "Which instructions a dot becomes and where they read it";
  let description = [{
    Set on every `tile.dot` by tile-plan-dots, read by layout assignment,
    the split of asynchronous dots and the lowering:

    - `family`: `mma_sync` (warp-level m16n8k16, synchronous) or `wgmma`
      (warpgroup-level m64nNk16, asynchronous on sm_90a).
    - `warps`: how the kernel's warps split the [M, N] result (the
      `warpsPerCTA` of its `#tile.mma` layout; TargetInfo::dotWarpSplit).
    - `a`, `b`: where each operand is read: `registers` (fragments loaded
      or computed in registers), `stage` (in place, where a pipeline stage
      holds it; the operand's type then has a `#tile.shared` encoding) or
      `staged_copy` (registers loaded from a stage that stays in shared
      memory because another dot reads it in place).

    mma.sync reads no operand in place; wgmma reads B in place.

    ```mlir
    #tile.dot_plan<wgmma, warps = [8, 1], a = stage, b = stage>
    ```
  }];
  let parameters = (ins EnumParameter<Tile_DotFamily>:$family,
                        ArrayRefParameter<"unsigned">:$warps,
                        EnumParameter<Tile_OperandSource>:$a,
                        EnumParameter<Tile_OperandSource>:$b);
  let assemblyFormat = [{
    `<` $family `,` `warps` `=` `[` $warps `]` `,` `a` `=` $a `,` `b` `=` $b `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The source of operand `index` (0 for A, 1 for B).
    OperandSource getSource(unsigned index) const {
      return index == 0 ? getA() : getB();
    }
  }];
}

#endif // TEGULA_TILE_ATTRS
