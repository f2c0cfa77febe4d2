// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'tile.kernel' must be a unit attribute}}
func.func @kernel_not_unit() attributes {tile.kernel = 1 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.kernel' may only mark a function, not 'builtin.module'}}
module attributes {tile.kernel} {
}

// -----

// expected-error @+1 {{'tile.warps' is 3; a kernel runs on 1, 2, 4, 8 or 16 warps}}
func.func @warps_value() attributes {tile.kernel, tile.warps = 3 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.warps' must be an i32 attribute}}
func.func @warps_type() attributes {tile.kernel, tile.warps = 4 : i64} {
  return
}

// -----

// expected-error @+1 {{'tile.blocks_per_sm' is 33; a multiprocessor runs 1 to 32 blocks}}
func.func @blocks_value() attributes {tile.kernel, tile.blocks_per_sm = 33 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.blocks_per_sm' must be an i32 attribute}}
func.func @blocks_type() attributes {tile.kernel, tile.blocks_per_sm = 2 : i64} {
  return
}

// -----

func.func @stages_value(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{'tile.pipeline_stages' is 0; a pipelined loop needs at least 1 stage}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {tile.pipeline_stages = 0 : i32}
  return
}

// -----

// expected-error @+1 {{'tile.pipeline_stages' may only mark an scf.for, not 'func.func'}}
func.func @stages_on_func() attributes {tile.pipeline_stages = 2 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.pipeline_stages' must be an i32 attribute}}
func.func @stages_type() attributes {tile.pipeline_stages = "two"} {
  return
}

// -----

// expected-error @+1 {{'tile.grid' has 2 extents; a bundle grid has exactly 3}}
func.func @grid_size() attributes {tile.kernel, tile.grid = ["1", "1"]} {
  return
}

// -----

// expected-error @+1 {{'tile.requires' must be an array of expression strings}}
func.func @requires_type() attributes {tile.kernel, tile.requires = [1]} {
  return
}

// -----

// expected-error @+1 {{'tile.flops' must be an expression string}}
func.func @flops_type() attributes {tile.kernel, tile.flops = 12 : i64} {
  return
}

// -----

// expected-error @+1 {{'tile.template' must be a dictionary}}
func.func @template_type() attributes {tile.kernel, tile.template = [1]} {
  return
}

// -----

// expected-error @+1 {{unknown tile dialect attribute 'tile.wraps'}}
func.func @unknown() attributes {tile.kernel, tile.wraps = 4 : i32} {
  return
}

// -----

// expected-error @+1 {{'tile.name' of argument 0 must be a string}}
func.func @arg_name(%a: !tile.ptr<f32> {tile.name = 1 : i32}) {
  return
}

// -----

// expected-error @+1 {{'tile.access' of argument 0 must be "read", "write" or "readwrite"}}
func.func @arg_access(%a: !tile.ptr<f32> {tile.access = "rw"}) {
  return
}

// -----

// expected-error @+1 {{'tile.dims' of argument 0 must list size-variable names and integers}}
func.func @arg_dims(%a: !tile.ptr<f32> {tile.dims = [1.0 : f32]}) {
  return
}

// -----

// expected-error @+1 {{'tile.divisibility' of argument 0 must be a power of two}}
func.func @arg_divisibility(%a: i32 {tile.divisibility = 12 : i64}) {
  return
}

// -----

// expected-error @+1 {{'tile.alignment' of argument 0 must be a power of two}}
func.func @arg_alignment(%a: !tile.ptr<f32> {tile.alignment = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'tile.known_value' of argument 1 must be an integer}}
func.func @arg_known_value(%a: !tile.ptr<f32>, %s: i64 {tile.known_value = "one"}) {
  return
}

// -----

// expected-error @+1 {{unknown tile dialect argument attribute 'tile.shape'}}
func.func @arg_unknown(%a: !tile.ptr<f32> {tile.shape = "N"}) {
  return
}

// -----

// Good: a kernel with every attribute the frontend attaches.
func.func @good(%a: !tile.ptr<f32> {tile.name = "a", tile.dims = ["N", 4], tile.access = "readwrite"},
                %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.warps = 16 : i32, tile.grid = ["N", "1", "1"],
                tile.requires = [], tile.flops = "N", tile.bytes = "8 * N",
                tile.template = {}} {
  return
}

// -----

// expected-error @+1 {{'tile.shared_bytes' must be a non-negative integer}}
func.func @shared_bytes() attributes {tile.kernel, tile.shared_bytes = -16 : i64} {
  return
}

// -----

// expected-error @+1 {{#tile.shared swizzle is 48 bytes; shared tiles have the 128-, 64- or 32-byte swizzle}}
func.func @shared_swizzle() attributes {s = #tile.shared<swizzle = 48, order = [1, 0]>} {
  return
}

// -----

// expected-error @+1 {{#tile.shared order must be [1, 0] or [0, 1], got [1, 1]}}
func.func @shared_order() attributes {s = #tile.shared<swizzle = 128, order = [1, 1]>} {
  return
}

// -----

// expected-error @+1 {{#tile.dot_plan warps must be two powers of two, got [3, 1]}}
func.func @plan_warps() attributes {p = #tile.dot_plan<mma_sync, warps = [3, 1], a = registers, b = registers>} {
  return
}

// -----

// expected-error @+1 {{#tile.dot_plan: mma_sync reads its operands from registers, not in place from a stage}}
func.func @plan_mma_stage() attributes {p = #tile.dot_plan<mma_sync, warps = [4, 1], a = registers, b = stage>} {
  return
}

// -----

// expected-error @+1 {{#tile.dot_plan: wgmma reads b in place from a stage, not from staged_copy}}
func.func @plan_wgmma_b() attributes {p = #tile.dot_plan<wgmma, warps = [4, 1], a = stage, b = staged_copy>} {
  return
}

// -----

// expected-error @+2 {{expected ::tegula::tile::DotFamily to be one of: mma_sync, wgmma}}
// expected-error @+1 {{failed to parse Tile_DotPlanAttr parameter 'family'}}
func.func @plan_family() attributes {p = #tile.dot_plan<tma, warps = [4, 1], a = stage, b = stage>} {
  return
}

// -----

func.func @shared_rank(%p: !tile.pipeline<64xbf16, stages = 2>) {
  // expected-error @+1 {{stays in shared memory but is not 2-D}}
  %t = tile.pipeline.pop %p : !tile.pipeline<64xbf16, stages = 2> -> tensor<64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  return
}

// -----

// A shared tile's swizzle is its stored rows' (getSwizzleBytes): 64-byte
// rows take the 64-byte swizzle, not the 128-byte one.
func.func @shared_swizzle_too_wide(%p: !tile.pipeline<64x32xbf16, stages = 2>) {
  // expected-error @+1 {{tile 'tensor<64x32xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>' is stored in rows of 64 bytes, whose swizzle is 64 bytes, not 128}}
  %t = tile.pipeline.pop %p : !tile.pipeline<64x32xbf16, stages = 2> -> tensor<64x32xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>
  return
}

// -----

// Seen transposed (order = [0, 1]), the stored rows are the tile's columns:
// [64, 16] is stored as 16 rows of 128 bytes.
func.func @shared_swizzle_transposed(%p: !tile.pipeline<16x64xbf16, stages = 2>) {
  // expected-error @+1 {{tile 'tensor<64x16xbf16, #tile.shared<swizzle = 32, order = [0, 1]>>' is stored in rows of 128 bytes, whose swizzle is 128 bytes, not 32}}
  %t = tile.pipeline.pop %p transpose : !tile.pipeline<16x64xbf16, stages = 2> -> tensor<64x16xbf16, #tile.shared<swizzle = 32, order = [0, 1]>>
  return
}

// -----

func.func @shared_no_swizzle(%p: !tile.pipeline<64x8xbf16, stages = 2>) {
  // expected-error @+1 {{tile 'tensor<64x8xbf16, #tile.shared<swizzle = 32, order = [1, 0]>>' is stored in rows of 16 bytes, which no swizzle fits (a multiple of 32 bytes)}}
  %t = tile.pipeline.pop %p : !tile.pipeline<64x8xbf16, stages = 2> -> tensor<64x8xbf16, #tile.shared<swizzle = 32, order = [1, 0]>>
  return
}
