//===- TileTypes.td - Types of the tile dialect -----------*- tablegen -*-===//

#ifndef TEGULA_TILE_TYPES
#define TEGULA_TILE_TYPES

include "Tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

/// Element types that a global tensor, a pipeline or a tile may hold.
def Tile_ElementType : AnyTypeOf<[I1, I32, I64, F16, BF16, F32]>;
def Tile_DotOperandElementType : AnyTypeOf<[F16, BF16]>;

def Tile_PtrType : Tile_Type<"Ptr", "ptr"> {
  let summary = "Address of a global-memory buffer";
  let description = [{
    The 64-bit address of the first element of a global buffer, as a kernel
    receives it. `tile.make_tensor` gives it a shape.

    ```mlir
    !tile.ptr<bf16>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
  let genVerifyDecl = 1;
}

def Tile_TensorType : Tile_Type<"GlobalTensor", "tensor"> {
  let summary = "A row-major or strided tensor in global memory";
  let description = [{
    A handle to a tensor in global memory: its element type, its extents
    (static, or `?` when bound at launch by a size variable), whether the
    kernel may store to it (`mut`) and whether its strides come at launch
    (`strided`; otherwise it is contiguous and row-major). Tensors are only
    ever accessed through `tile.load`, `tile.store`, `tile.atomic_rmw` and
    `tile.pipeline.push`.

    ```mlir
    !tile.tensor<?x?x?x128xbf16>        // read only
    !tile.tensor<?x128xf32, mut>        // loads and stores
    !tile.tensor<?x?xbf16, strided>     // a view: strides in elements
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    "bool":$isMutable,
    "bool":$isStrided
  );
  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     "::mlir::Type":$elementType, "bool":$isMutable,
                     CArg<"bool", "false">:$isStrided), [{
      return $_get($_ctxt, shape, elementType, isMutable, isStrided);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// Number of `?` extents, each bound by one `tile.make_tensor` operand.
    unsigned getNumDynamicDims() const;
  }];
}

def Tile_PipelineType : Tile_Type<"Pipeline", "pipeline"> {
  let summary = "A ring of asynchronous shared-memory tile buffers";
  let description = [{
    A handle to `stages` shared-memory buffers, each holding one block of the
    given shape and element type. `tile.pipeline.push` starts an asynchronous
    copy of a global block into the next free stage; `tile.pipeline.pop`
    waits for the oldest and yields it as a tile. Two pipelines of different
    block shapes are different types, so a K-tile ring never stands in for a
    V-tile ring.

    ```mlir
    !tile.pipeline<64x128xbf16, stages = 2>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    "unsigned":$stages
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The tile type a pop yields and a push must provide.
    ::mlir::RankedTensorType getTileType() const;
    /// Bytes of shared memory one stage occupies.
    int64_t getStageBytes() const;
  }];
}

def Tile_DotTokenType : Tile_Type<"DotToken", "dot_token"> {
  let summary = "A group of warpgroup dot instructions in flight";
  let description = [{
    What `tile.dot_issue` returns beside its accumulator: the group of
    wgmma instructions it committed, which a `tile.dot_wait` names. In the
    lowering it has no registers (wgmma.wait_group counts groups).
  }];
}

/// A tile: a ranked tensor of static extents. Extents are further checked to
/// be powers of two by the TileShapes trait, which prints the actual values.
def Tile_Tile : RankedTensorOf<[Tile_ElementType]>;
def Tile_IntTile : RankedTensorOf<[I32, I64]>;
def Tile_BoolTile : RankedTensorOf<[I1]>;
def Tile_FloatTile : RankedTensorOf<[F16, BF16, F32]>;
def Tile_DotOperand : RankedTensorOf<[F16, BF16, F32]>;
def Tile_Accumulator : RankedTensorOf<[F32]>;

#endif // TEGULA_TILE_TYPES
