//===- TileInterfaces.td - What passes ask of tile ops ----*- tablegen -*-===//
//
// The facts about an op that the analyses and transforms act on, answered
// by the op itself instead of by a dyn_cast chain in every pass: which
// global tensor it reads or writes and through which indices (MemoryOrder,
// PipelineLoops, AxisInfo), how its result's layout follows from its
// operands' (AssignLayouts), and the shared-memory scratch its lowering
// needs (SharedMemoryPlan, and through it MemoryOrder's barriers).
// A new op states these beside its definition in TileOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_TILE_INTERFACES
#define TEGULA_TILE_INTERFACES

include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Global memory access
//===----------------------------------------------------------------------===//

// MemoryEffectOpInterface (which the access ops also implement, for MLIR's
// own passes) says that an op reads or writes global memory, and could even
// name the tensor value. It cannot say what the barrier placement and the
// vector widths turn on: the index tiles (which elements, held by which
// threads), the mask, whether the op still reads after it returns (a push's
// copies), which accesses commute (atomics of one kind), and which layout a
// vector instruction follows. Hence an interface of our own, whose view is
// the !tile.tensor value (the kernel parameter, sized by tile.make_tensor)
// that tile::mayAlias compares.
def Tile_GlobalAccessOpInterface : OpInterface<"GlobalAccessOpInterface"> {
  let cppNamespace = "::tegula::tile";
  let description = [{
    An op that reads or writes elements of a global tensor, one element per
    element of its index tiles. The defaults read the op's `tensor`,
    `indices` and `mask` operands, which every access op names so.
  }];
  let methods = [
    InterfaceMethod<[{
        The global tensor (a `!tile.tensor` value) the op accesses: the view
        through which it reaches memory.
      }], "::mlir::TypedValue<::tegula::tile::GlobalTensorType>",
      "getAccessedTensor", (ins), [{}], [{ return $_op.getTensor(); }]>,
    InterfaceMethod<[{
        One integer tile per tensor dimension: the coordinates of every
        element accessed.
      }], "::mlir::ValueRange", "getAccessIndices", (ins), [{}],
      [{ return $_op.getIndices(); }]>,
    InterfaceMethod<"The boolean tile of elements accessed, or null for all.",
      "::mlir::Value", "getAccessMask", (ins), [{}],
      [{ return $_op.getMask(); }]>,
    InterfaceMethod<"Whether the op writes (or updates) the tensor.",
      "bool", "writesTensor", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Whether the op goes on reading the tensor after it returns (a
        pipeline push's asynchronous copies): a later store must wait for
        those reads, not only meet the block at a barrier.
      }], "bool", "readsAfterReturning", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        Whether this access and the access `other` leave memory the same
        whichever of their elements land first (two atomic adds): no barrier
        between them.
      }], "bool", "commutesWith", (ins "::mlir::Operation *":$other), [{}],
      [{ return false; }]>,
    InterfaceMethod<[{
        The laid-out tile whose registers the lowering may move in vector
        instructions (AxisInfo decides how many at a time), or null when the
        op moves one element per instruction.
      }], "::mlir::RankedTensorType", "getVectorBlockType">,
  ];
}

//===----------------------------------------------------------------------===//
// Layout inference
//===----------------------------------------------------------------------===//

def Tile_LayoutRuleOpInterface : OpInterface<"LayoutRuleOpInterface"> {
  let cppNamespace = "::tegula::tile";
  let description = [{
    How the layout pass (tile-assign-layouts) lays out an op with one tile
    result: the layout of the result, and the layout each tile operand must
    be converted to. `query` answers what the pass knows (the layout it gave
    a value) and what it prefers (its default blocked layout for a type).
    Ops without this interface are elementwise: their result follows an
    operand (a dot's layout first) and their operands follow the result.
    An op overrides the method whose default does not fit it.
  }];
  let methods = [
    InterfaceMethod<[{
        The layout of the op's tile result, or null where it follows the
        operands as an elementwise op's does (the default).
      }], "::mlir::Attribute", "inferResultLayout",
      (ins "::tegula::tile::LayoutQuery &":$query), [{}],
      [{ return {}; }]>,
    InterfaceMethod<[{
        The layout tile operand `index` must have, or null where any will
        do. By default an operand takes the result's layout.
      }], "::mlir::Attribute", "getRequiredOperandLayout",
      (ins "unsigned":$index, "::tegula::tile::LayoutQuery &":$query), [{}],
      [{ return ::tegula::tile::followResultLayout($_op, query); }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Shared-memory scratch
//===----------------------------------------------------------------------===//

def Tile_ScratchOpInterface : OpInterface<"ScratchOpInterface"> {
  let cppNamespace = "::tegula::tile";
  let description = [{
    An op whose lowering may exchange values between threads through shared
    memory. The shared-memory plan gives every such op one scratch region
    after the pipeline rings, and an op that uses it meets the block at a
    barrier while it runs (which MemoryOrder counts on).
  }];
  let methods = [
    InterfaceMethod<[{
        Bytes of shared scratch the op needs while it runs, 0 if none. On
        tile IR not laid out yet, the most it may need where that depends
        on the layout (reductions: 0, as none is known to cross warps).
      }], "int64_t", "getScratchBytes">,
  ];
}

#endif // TEGULA_TILE_INTERFACES
