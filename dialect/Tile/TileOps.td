//===- TileOps.td - Operations of the tile dialect --------*- tablegen -*-===//

#ifndef TEGULA_TILE_OPS
#define TEGULA_TILE_OPS

include "Tile/TileDialect.td"
include "Tile/TileTypes.td"
include "Tile/TileAttrs.td"
include "Tile/TileInterfaces.td"
include "mlir/Dialect/Arith/IR/ArithOpsInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// Verifies that every tile an op touches has power-of-two extents and at
/// most 2^20 elements, with a message that names the offending extent.
def Tile_TileShapes : NativeOpTrait<"TileShapes"> {
  let cppNamespace = "::tegula::tile";
}

class Tile_TileOp<string mnemonic, list<Trait> traits = []>
    : Tile_Op<mnemonic, !listconcat(traits, [Tile_TileShapes])>;

//===----------------------------------------------------------------------===//
// Program identity
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "Index of this program along one grid axis";
  let description = [{
    ```mlir
    %pid = tile.program_id 0
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "Extent of the launch grid along one axis";
  let description = [{
    ```mlir
    %n = tile.num_programs 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

//===----------------------------------------------------------------------===//
// Tile construction and shape manipulation
//===----------------------------------------------------------------------===//

def Tile_ArangeOp : Tile_TileOp<"arange", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["inferResultLayout"]>]> {
  let summary = "The tile 0, 1, ..., N-1";
  let description = [{
    ```mlir
    %r = tile.arange : tensor<64xi32>
    ```
  }];
  let results = (outs 1DTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tile_SplatOp : Tile_TileOp<"splat", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["inferResultLayout"]>,
    TypesMatchWith<"result element type matches the scalar",
                   "result", "value",
                   "::llvm::cast<::mlir::ShapedType>($_self).getElementType()">]> {
  let summary = "A tile whose every element is one scalar";
  let description = [{
    ```mlir
    %t = tile.splat %x : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[I1, I32, I64, F16, BF16, F32]>:$value);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def Tile_BroadcastOp : Tile_TileOp<"broadcast", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["inferResultLayout"]>,
    AllElementTypesMatch<["source", "result"]>,
    AllRanksMatch<["source", "result"]>]> {
  let summary = "Repeat a tile along its unit dimensions";
  let description = [{
    Every extent of the source is either 1 or equal to the result's.

    ```mlir
    %b = tile.broadcast %x : tensor<64x1xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ExpandDimsOp : Tile_TileOp<"expand_dims", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
        ["inferResultLayout", "getRequiredOperandLayout"]>,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "Insert a unit dimension";
  let description = [{
    ```mlir
    %c = tile.expand_dims %x, 1 : tensor<64xf32> -> tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$source, I32Attr:$axis);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat =
      "$source `,` $axis attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_TransOp : Tile_TileOp<"trans", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
        ["inferResultLayout", "getRequiredOperandLayout"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "Transpose a 2-D tile";
  let description = [{
    ```mlir
    %t = tile.trans %k : tensor<64x128xbf16> -> tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins 2DTensorOf<[Tile_ElementType]>:$source);
  let results = (outs 2DTensorOf<[Tile_ElementType]>:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tile_PermuteOp : Tile_TileOp<"permute", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
        ["inferResultLayout", "getRequiredOperandLayout"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "Reorder the dimensions of a tile";
  let description = [{
    Result dimension `i` is source dimension `order[i]`: element
    `r[c0, ..., cn]` is `s` at the coordinates that put `ci` on dimension
    `order[i]`. `tile.trans` is the 2-D case `order = [1, 0]`.

    ```mlir
    %p = tile.permute %x, [2, 0, 1] : tensor<4x8x16xf32> -> tensor<16x4x8xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$source, DenseI32ArrayAttr:$order);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat =
      "$source `,` $order attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The result's layout in the source's coordinates (both laid out).
    ::tegula::tile::LinearLayout getResultLayoutInSource();
  }];
}

def Tile_ReshapeOp : Tile_TileOp<"reshape", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
        ["inferResultLayout", "getRequiredOperandLayout"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "The same elements, in row-major order, in another shape";
  let description = [{
    The element count is unchanged; the element at row-major position `p`
    of the source is the element at row-major position `p` of the result.

    ```mlir
    %r = tile.reshape %x : tensor<16x64xf32> -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The result's layout in the source's coordinates (both laid out).
    ::tegula::tile::LinearLayout getResultLayoutInSource();
  }];
}

def Tile_ConvertLayoutOp : Tile_TileOp<"convert_layout", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
        ["inferResultLayout", "getRequiredOperandLayout"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "Move a tile's elements to another layout";
  let description = [{
    The same tile, held by other threads or registers. The layout pass
    inserts these where a producer's layout differs from what a consumer
    needs; the lowering moves data through registers, warp shuffles or
    shared memory, whichever the two layouts allow.

    ```mlir
    %b = tile.convert_layout %a
        : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
        -> tensor<64x64xf32, #tile.blocked<sizePerThread = [1, 4],
               threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tile_ToSharedOp : Tile_TileOp<"to_shared", [
    SameOperandsAndResultShape, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["getRequiredOperandLayout"]>]> {
  let summary = "Write a register tile where warpgroup dots read it in place";
  let description = [{
    The same tile, written from registers into a shared buffer of its own
    (SharedMemoryPlan allocates one per op) in the swizzled layout its
    `#tile.shared` encoding names, so that wgmma reads it through matrix
    descriptors (tile-plan-dots stages a computed or loaded B, or an A, this
    way). `order = [1, 0]` stores the tile's rows contiguous, `[0, 1]` its
    columns. The lowering meets the block before the writes (a write in
    the next loop iteration follows every warp's wait for the dots that
    read the buffer), fences them for the async proxy and meets the block
    again.

    ```mlir
    %s = tile.to_shared %v : tensor<64x64xbf16, #blocked>
        -> tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>
    ```
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The buffer's rows and columns: the tile's, or transposed when its
    /// columns are stored contiguous.
    ::llvm::SmallVector<int64_t, 2> getStoredShape();
  }];
}

//===----------------------------------------------------------------------===//
// Global tensors and memory access
//===----------------------------------------------------------------------===//

def Tile_MakeTensorOp : Tile_Op<"make_tensor", [Pure, AttrSizedOperandSegments]> {
  let summary = "Give a global address a shape (and strides)";
  let description = [{
    Binds each `?` extent of the result type to one `i32` operand, in order.
    Kernels receive tensors as an address plus their size variables; this op
    joins them so that every access below can mask against the extents. A
    `strided` tensor also takes one `i64` stride per dimension, in elements;
    any other tensor is row-major.

    ```mlir
    %q = tile.make_tensor %qptr[%z, %n] : !tile.ptr<bf16> -> !tile.tensor<?x8x?x64xbf16>
    %w = tile.make_tensor %wptr[%k, %n] strides [%s0, %s1]
        : !tile.ptr<bf16> -> !tile.tensor<?x?xbf16, strided>
    ```
  }];
  let arguments = (ins Tile_PtrType:$base, Variadic<I32>:$dynamicDims,
                   Variadic<I64>:$strides);
  let results = (outs Tile_TensorType:$result);
  let assemblyFormat = [{
    $base `[` $dynamicDims `]` (`strides` `[` $strides^ `]`)? attr-dict `:`
    qualified(type($base)) `->` qualified(type($result))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$base,
                   "::mlir::ValueRange":$dynamicDims), [{
      build($_builder, $_state, result, base, dynamicDims, ::mlir::ValueRange());
    }]>
  ];
  let hasVerifier = 1;
}

def Tile_DimOp : Tile_Op<"dim", [Pure]> {
  let summary = "One extent of a global tensor";
  let description = [{
    ```mlir
    %n = tile.dim %q, 2 : !tile.tensor<?x8x?x64xbf16>
    ```
  }];
  let arguments = (ins Tile_TensorType:$tensor, I32Attr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$tensor `,` $dim attr-dict `:` qualified(type($tensor))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_LoadOp : Tile_TileOp<"load", [
    OptionalTypesMatchWith<"mask is an i1 tile of the result shape",
                           "result", "mask", "::tegula::tile::getI1SameShape($_self)">,
    OptionalTypesMatchWith<"other has the result type", "result", "other",
                           "$_self">,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Tile_GlobalAccessOpInterface>,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["inferResultLayout"]>]> {
  let summary = "Gather a block from a global tensor";
  let description = [{
    One index tile per tensor dimension, each of the result's shape, gives
    the coordinates of every element. Elements whose coordinates lie outside
    the tensor, or whose `mask` is false, read `other` (zero by default)
    instead of memory.

    ```mlir
    %blk = tile.load %q[%i0, %i1] mask %m other %o
        : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>]
        -> tensor<32x64xbf16>
    ```
  }];
  let arguments = (ins Tile_TensorType:$tensor, Variadic<Tile_IntTile>:$indices,
                   Optional<Tile_BoolTile>:$mask, Optional<Tile_Tile>:$other);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $tensor `[` $indices `]` (`mask` $mask^)? (`other` $other^)? attr-dict
    `:` qualified(type($tensor)) `[` type($indices) `]` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_TileOp<"store", [
    OptionalTypesMatchWith<"mask is an i1 tile of the value's shape",
                           "value", "mask", "::tegula::tile::getI1SameShape($_self)">,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Tile_GlobalAccessOpInterface, ["writesTensor"]>,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["getRequiredOperandLayout"]>]> {
  let summary = "Scatter a block into a mutable global tensor";
  let description = [{
    Index tiles as for `tile.load`; elements outside the tensor, or whose
    `mask` is false, are not written.

    ```mlir
    tile.store %o[%i0, %i1], %val mask %m
        : !tile.tensor<?x64xbf16, mut>[tensor<32x64xi32>, tensor<32x64xi32>],
          tensor<32x64xbf16>
    ```
  }];
  let arguments = (ins Tile_TensorType:$tensor, Variadic<Tile_IntTile>:$indices,
                   Tile_Tile:$value, Optional<Tile_BoolTile>:$mask);
  let assemblyFormat = [{
    $tensor `[` $indices `]` `,` $value (`mask` $mask^)? attr-dict
    `:` qualified(type($tensor)) `[` type($indices) `]` `,` type($value)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicKindAttr : I32EnumAttr<"AtomicKind", "atomic update", [
    I32EnumAttrCase<"Add", 0, "add">,
    I32EnumAttrCase<"Max", 1, "max">
  ]> {
  let cppNamespace = "::tegula::tile";
}

def Tile_AtomicRMWOp : Tile_TileOp<"atomic_rmw", [
    OptionalTypesMatchWith<"mask is an i1 tile of the value's shape",
                           "value", "mask", "::tegula::tile::getI1SameShape($_self)">,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Tile_GlobalAccessOpInterface,
                              ["writesTensor", "commutesWith"]>,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["getRequiredOperandLayout"]>]> {
  let summary = "Atomically combine a block into a mutable global tensor";
  let description = [{
    Index tiles as for `tile.store`; every element whose coordinates lie
    inside the tensor and whose `mask` holds is combined into memory with
    one relaxed, GPU-scope atomic (`add`: f32, i32, f16, bf16; `max`: f32,
    i32). Elements that name one address more than once are all applied.
    The old values are not returned.

    ```mlir
    tile.atomic_rmw add %h[%i], %ones mask %m
        : !tile.tensor<?xf32, mut>[tensor<128xi32>], tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_AtomicKindAttr:$kind, Tile_TensorType:$tensor,
                   Variadic<Tile_IntTile>:$indices, Tile_Tile:$value,
                   Optional<Tile_BoolTile>:$mask);
  let assemblyFormat = [{
    $kind $tensor `[` $indices `]` `,` $value (`mask` $mask^)? attr-dict
    `:` qualified(type($tensor)) `[` type($indices) `]` `,` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_TileOp<"dot", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "Matrix product on tensor cores: acc + a @ b";
  let description = [{
    `a` is [M, K], `b` is [K, N], both f16, both bf16 or both f32, and
    the f32 accumulator and result are [M, N]. Tensor cores need M, N and K
    of at least 16. f32 operands are rounded to tf32 (cvt.rna: to nearest,
    ties away from zero, 10 mantissa bits) and multiplied on tf32 tensor
    cores (mma.sync m16n8k8); f16 and bf16 products are exact. With `ieee`
    (f32 operands only) each element is instead a chain of f32 FMAs in
    order of k, without tensor cores.

    tile-plan-dots gives every dot a `plan` (#tile.dot_plan): its
    instruction family, warp split and where it reads each operand. A
    `wgmma` dot is split into `tile.dot_issue` and `tile.dot_wait` before
    the lowering (tile-split-async-dots); an `mma_sync` dot stays one op.

    ```mlir
    %s = tile.dot %q, %kt, %acc
        : tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<64x64xf32>
    %e = tile.dot %x, %y, %acc ieee
        : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
    %p = tile.dot %x, %y, %acc
        {plan = #tile.dot_plan<mma_sync, warps = [4, 1], a = registers, b = registers>}
        : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_DotOperand:$a, Tile_DotOperand:$b,
                   Tile_Accumulator:$acc, UnitAttr:$ieee,
                   OptionalAttr<Tile_DotPlanAttr>:$plan);
  let results = (outs Tile_Accumulator:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc (`ieee` $ieee^)? attr-dict `:` type($a) `,` type($b)
    `->` type($result)
  }];
  let builders = [
    // Before tile-plan-dots: no plan yet.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$a,
                   "::mlir::Value":$b, "::mlir::Value":$acc, "bool":$ieee), [{
      build($_builder, $_state, result, a, b, acc, ieee, DotPlanAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def Tile_DotIssueOp : Tile_TileOp<"dot_issue", [
    AllTypesMatch<["acc", "result"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Start a warpgroup dot: acc + a @ b, complete after a wait";
  let description = [{
    The first half of a `wgmma` dot (tile-split-async-dots): fences the
    accumulator, issues one wgmma.mma_async per 16 of K and commits them
    as one group, returned as `token`. `result` holds acc + a @ b only
    once a `tile.dot_wait` has waited for the group. `b`, and `a` when it
    is read in place, have `#tile.shared` encodings; a register `a` has a
    `#tile.dot_operand` one. Operands are f16 or bf16.

    ```mlir
    %d, %t = tile.dot_issue %a, %b, %acc
        : tensor<128x64xbf16, #shared>, tensor<64x128xbf16, #shared1>
        -> tensor<128x128xf32, #mma>
    ```
  }];
  let arguments = (ins Tile_DotOperand:$a, Tile_DotOperand:$b,
                   Tile_Accumulator:$acc);
  let results = (outs Tile_Accumulator:$result, Tile_DotTokenType:$token);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_DotWaitOp : Tile_TileOp<"dot_wait", [
    AllTypesMatch<["acc", "result"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Wait until at most `pending` warpgroup dot groups run";
  let description = [{
    Waits until at most `pending` groups of this warp's warpgroup dots are
    in flight (wgmma.wait_group), then returns `acc`. `token`, when given,
    is the group of the `tile.dot_issue` that computed `acc`. With
    `pending = 0` every group has completed and `result` may be read; with
    `pending = 1` (tile-defer-dot-waits) the group just issued runs on
    while the loop goes to its next iteration, and a `pending = 0` wait
    after the loop collects it. `acc` passes through so that nothing
    touches its registers while a group computes them.

    ```mlir
    %r = tile.dot_wait %d after %t pending = 0 : tensor<128x128xf32, #mma>
    %last = tile.dot_wait %loop pending = 0 : tensor<128x128xf32, #mma>
    ```
  }];
  let arguments = (ins Tile_Accumulator:$acc,
                   Optional<Tile_DotTokenType>:$token,
                   ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let results = (outs Tile_Accumulator:$result);
  let assemblyFormat = [{
    $acc (`after` $token^)? `pending` `=` $pending attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

// arith's fast-math flags (ArithBase.td itself would redefine arith's enums
// in this dialect's generated enums).
def Tile_FastMathAttr : Attr<
    CPred<"::llvm::isa<::mlir::arith::FastMathFlagsAttr>($_self)">,
    "arith fast-math flags"> {
  let storageType = "::mlir::arith::FastMathFlagsAttr";
  let returnType = "::mlir::arith::FastMathFlags";
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall =
      "::mlir::arith::FastMathFlagsAttr::get($_builder.getContext(), $0)";
}

def Tile_SigmoidOp : Tile_Op<"sigmoid", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<ArithFastMathInterface>]> {
  let summary = "The logistic function 1 / (1 + exp(-x)), elementwise";
  let description = [{
    A float scalar or tile. The math dialect has no logistic function, and
    composing it from `math.exp` would round (and approximate) the
    exponential before the division. `fastmath<afn>` (from
    `sigmoid(x, precision = fast)`) asks for the f32 form of 2 ulp instead
    of the correctly rounded one, as on `math.erf` and `math.tanh`.

    ```mlir
    %s = tile.sigmoid %x : tensor<64xf32>
    %f = tile.sigmoid %x fastmath<afn> : tensor<64xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[F16, BF16, F32, RankedTensorOf<[F16, BF16, F32]>]>:$x,
                   DefaultValuedAttr<Tile_FastMathAttr,
                       "::mlir::arith::FastMathFlags::none">:$fastmath);
  let results = (outs AnyTypeOf<[F16, BF16, F32, RankedTensorOf<[F16, BF16, F32]>]>:$result);
  let assemblyFormat = "$x (`fastmath` `` $fastmath^)? attr-dict `:` type($result)";
}

def Tile_AssertOp : Tile_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "device_assert: stop the launch when a condition is false";
  let description = [{
    A bool scalar or tile; the assertion fails when any element is false.
    `message` is the user's message and `text` the condition's source
    text. The interpreter always checks it; the GPU lowering compiles it
    (a call of `__assertfail`, which the driver reports with the block and
    thread) only in a module marked `tile.debug`, and drops it otherwise.

    ```mlir
    tile.assert %ok, "n fits" text "i < N" : tensor<64xi1>
    ```
  }];
  let arguments = (ins AnyTypeOf<[I1, Tile_BoolTile]>:$condition,
                   StrAttr:$message, StrAttr:$text);
  let assemblyFormat = [{
    $condition `,` $message `text` $text attr-dict `:` type($condition)
  }];
}

def Tile_CumsumOp : Tile_TileOp<"cumsum", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["inferResultLayout"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>,
    AllTypesMatch<["source", "result"]>]> {
  let summary = "Inclusive prefix sum along one axis of a tile";
  let description = [{
    `r[..., i, ...] = s[..., 0, ...] + ... + s[..., i, ...]` along `axis`,
    for f32 and i32 tiles (i32 sums wrap). The interpreter adds in index
    order; the GPU in a scan tree over the axis index's bits, so f32
    results may differ by rounding.

    ```mlir
    %c = tile.cumsum %x, 1 : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, I32]>:$source, I32Attr:$axis);
  let results = (outs RankedTensorOf<[F32, I32]>:$result);
  let assemblyFormat = "$source `,` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_ReduceKindAttr : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">
  ]> {
  let cppNamespace = "::tegula::tile";
}

def Tile_ReduceOp : Tile_TileOp<"reduce", [Pure,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
        ["inferResultLayout", "getRequiredOperandLayout"]>,
    DeclareOpInterfaceMethods<Tile_ScratchOpInterface>,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "Reduce one axis of a tile away";
  let description = [{
    ```mlir
    %m = tile.reduce max %s, 1 : tensor<64x64xf32> -> tensor<64xf32>
    ```
    Reducing a 1-D tile gives a scalar:
    ```mlir
    %t = tile.reduce sum %v, 0 : tensor<64xf32> -> f32
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind, Tile_Tile:$source,
                   I32Attr:$axis);
  let results = (outs AnyTypeOf<[Tile_Tile, I1, I32, I64, F16, BF16, F32]>:$result);
  let assemblyFormat = [{
    $kind $source `,` $axis attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

def Tile_PipelineCreateOp : Tile_Op<"pipeline.create", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Allocate a ring of shared-memory stages";
  let description = [{
    ```mlir
    %kp = tile.pipeline.create : !tile.pipeline<64x128xbf16, stages = 2>
    ```
  }];
  let results = (outs Tile_PipelineType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Tile_PipelinePushOp : Tile_TileOp<"pipeline.push", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Tile_GlobalAccessOpInterface,
                              ["readsAfterReturning"]>,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["getRequiredOperandLayout"]>]> {
  let summary = "Start copying a global block into the next free stage";
  let description = [{
    The block is addressed as for `tile.load` and must have exactly the
    pipeline's element type and shape. A mask and an `other` value carry
    their types: after layout assignment they hold a layout the pipeline
    type does not. With `inside` (set by loop versioning), every element
    the mask allows lies within the tensor, so the copies skip their bounds
    checks; the interpreter fails a push that breaks this.

    ```mlir
    tile.pipeline.push %kp, %k[%r, %c] mask(%m : tensor<64x128xi1>)
        : !tile.pipeline<64x128xbf16, stages = 2>,
          !tile.tensor<?x128xbf16>[tensor<64x128xi32>, tensor<64x128xi32>]
    ```
  }];
  let arguments = (ins Tile_PipelineType:$pipeline, Tile_TensorType:$tensor,
                   Variadic<Tile_IntTile>:$indices,
                   Optional<Tile_BoolTile>:$mask, Optional<Tile_Tile>:$other,
                   UnitAttr:$inside);
  let assemblyFormat = [{
    $pipeline `,` $tensor `[` $indices `]`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`other` `(` $other^ `:` type($other) `)`)? (`inside` $inside^)? attr-dict `:` qualified(type($pipeline)) `,` qualified(type($tensor))
    `[` type($indices) `]`
  }];
  let hasVerifier = 1;
}

def Tile_PipelinePopOp : Tile_TileOp<"pipeline.pop", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<Tile_LayoutRuleOpInterface,
                              ["inferResultLayout"]>]> {
  let summary = "Wait for the oldest stage and read it as a tile";
  let description = [{
    With `transpose`, the 2-D stage is read transposed: the same as
    `tile.trans` of the popped tile, without the round trip through
    registers (canonicalization folds `trans(pop)` into it).

    ```mlir
    %k = tile.pipeline.pop %kp : !tile.pipeline<64x128xbf16, stages = 2>
        -> tensor<64x128xbf16>
    %kt = tile.pipeline.pop %kp transpose : !tile.pipeline<64x128xbf16, stages = 2>
        -> tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins Tile_PipelineType:$pipeline, UnitAttr:$transpose);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $pipeline (`transpose` $transpose^)? attr-dict `:` qualified(type($pipeline))
    `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TEGULA_TILE_OPS
