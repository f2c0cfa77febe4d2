//===- TileDialect.td - The Tegula tile dialect ------------*- tablegen -*-===//
//
// The tile dialect is the first IR of the Tegula compiler: programs operate on
// blocks of values (tiles, as builtin ranked tensors) and address global
// memory through typed tensor handles with index tiles.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TILE_DIALECT
#define TEGULA_TILE_DIALECT

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tegula::tile";
  let summary = "Block-level programs over tiles of values";
  let description = [{
    The tile dialect describes one *program* of a kernel grid. Values are
    either scalars or *tiles*: builtin ranked tensors whose extents are
    compile-time powers of two. Global memory is reached only through
    `!tile.tensor` handles, indexed by integer tiles; every access outside a
    tensor's extents is masked, so no index can reach memory outside it.

    Elementwise arithmetic and math use the `arith` and `math` dialects on
    tiles directly; control flow uses `scf`. A kernel is a `func.func`
    carrying the `tile.kernel` unit attribute:

    ```mlir
    func.func @copy(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>, %n: i32)
        attributes {tile.kernel, tile.warps = 4 : i32} {
      %a = tile.make_tensor %src[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32>
      %b = tile.make_tensor %dst[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
      ...
    }
    ```
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    /// Registers the layout attributes (TileAttrs.cpp owns their storage).
    void registerAttributes();

    /// The module's GPU target (a TargetInfo name): set once by the frontend,
    /// read by every pass through tegula::tile::getTarget.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "tile.target";
    /// A unit attribute on the module: compile `tile.assert` into the GPU
    /// code (`tilec -g`); without it the lowering drops them.
    static constexpr ::llvm::StringLiteral kDebugAttrName = "tile.debug";

    /// Attribute names the dialect owns on kernel functions.
    static constexpr ::llvm::StringLiteral kKernelAttrName = "tile.kernel";
    static constexpr ::llvm::StringLiteral kWarpsAttrName = "tile.warps";
    /// `blocks_per_sm N` in a kernel's header: ptxas keeps the kernel's
    /// registers low enough for N blocks per multiprocessor
    /// (.minnctapersm), spilling if it must.
    static constexpr ::llvm::StringLiteral kBlocksPerSmAttrName =
        "tile.blocks_per_sm";
    /// What one multiprocessor holds at most (sm_80, sm_90): the bounds of
    /// `blocks_per_sm`, checked by Sema (per kernel's warps) and here.
    static constexpr int64_t kMaxBlocksPerSm = 32;
    static constexpr int64_t kMaxWarpsPerSm = 64;
    /// A unit attribute on a kernel (`exact_math` in its header): no
    /// flush-to-zero transcendentals and no FMA contraction in it.
    static constexpr ::llvm::StringLiteral kExactMathAttrName =
        "tile.exact_math";
    /// Marks an `scf.for` whose loads the compiler pipelines, S stages deep.
    static constexpr ::llvm::StringLiteral kPipelineStagesAttrName =
        "tile.pipeline_stages";

    /// Launch description a kernel carries for its bundle (tools.md): grid,
    /// requires, flops and bytes are integer expressions over size variables
    /// and scalar parameters with template parameters folded in.
    static constexpr ::llvm::StringLiteral kGridAttrName = "tile.grid";
    static constexpr ::llvm::StringLiteral kRequiresAttrName = "tile.requires";
    static constexpr ::llvm::StringLiteral kFlopsAttrName = "tile.flops";
    static constexpr ::llvm::StringLiteral kBytesAttrName = "tile.bytes";
    static constexpr ::llvm::StringLiteral kTemplateAttrName = "tile.template";
    /// Dynamic shared memory the lowered kernel needs, in bytes.
    static constexpr ::llvm::StringLiteral kSharedBytesAttrName =
        "tile.shared_bytes";

    /// Kernel argument attributes: the source name of every parameter, the
    /// declared dims and access of tensors, the size variable an i32 binds.
    static constexpr ::llvm::StringLiteral kArgNameAttrName = "tile.name";
    static constexpr ::llvm::StringLiteral kArgDimsAttrName = "tile.dims";
    static constexpr ::llvm::StringLiteral kArgAccessAttrName = "tile.access";
    static constexpr ::llvm::StringLiteral kSizeVarAttrName = "tile.size_var";
    /// An i64 stride of a `strided` tensor: the tensor's name; the stride's
    /// dimension is its position among that tensor's strides.
    static constexpr ::llvm::StringLiteral kStrideOfAttrName = "tile.stride_of";
    /// A power of two every value of a size variable is a multiple of: from
    /// `requires N % 16 == 0`, or assumed by a specialized variant that the
    /// launcher picks only when it holds.
    static constexpr ::llvm::StringLiteral kDivisibilityAttrName =
        "tile.divisibility";
    /// An integer argument a specialized variant assumes equal to this
    /// value (a strided tensor's last stride: 1); the launcher picks it only
    /// when it is, and the variant's uses of it are the constant.
    static constexpr ::llvm::StringLiteral kKnownValueAttrName =
        "tile.known_value";
    /// A power of two (bytes) a `!tile.ptr` argument's address is a
    /// multiple of: assumed by a variant for a strided tensor, which may
    /// otherwise start at any element (contiguous tensors: 16 by the ABI).
    static constexpr ::llvm::StringLiteral kAlignmentAttrName =
        "tile.alignment";
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TEGULA_TILE_DIALECT
