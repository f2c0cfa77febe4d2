// RUN: tile-opt %s -tile-test-shared-memory-plan -verify-diagnostics
// Each tile.to_shared gets a buffer of its own, allocated as rings are,
// where a swizzle atom (1024 bytes) starts: a 16 KiB ring, then 64x128,
// 64x64 and 32x64 bf16 buffers (16384, 8192 and 4096 bytes); the scratch
// area (none here) follows. A run of them (adjacent in a block: the first
// two) shares the barriers around the writes; the transpose between the
// second and third ends the run.

#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.shared<swizzle = 128, order = [1, 0]>
#cols = #tile.shared<swizzle = 128, order = [0, 1]>
module attributes {tile.target = "sm_90a"} {
  // expected-remark @+1 {{shared bytes = 45056, scratch at 45056 (0 bytes)}}
  func.func @buffers(%a: tensor<64x128xbf16, #blocked>, %b: tensor<64x64xbf16, #blocked>, %c: tensor<32x64xbf16, #blocked>) attributes {tile.warps = 4 : i32} {
    // expected-remark @+1 {{ring at 0}}
    %r = tile.pipeline.create : !tile.pipeline<64x64xbf16, stages = 2>
    // expected-remark @+1 {{buffer at 16384, before a tile.to_shared}}
    %0 = tile.to_shared %a : tensor<64x128xbf16, #blocked> -> tensor<64x128xbf16, #rows>
    // expected-remark @+1 {{buffer at 32768, after a tile.to_shared}}
    %1 = tile.to_shared %b : tensor<64x64xbf16, #blocked> -> tensor<64x64xbf16, #cols>
    %2 = tile.trans %0 : tensor<64x128xbf16, #rows> -> tensor<128x64xbf16, #cols>
    // expected-remark @+1 {{buffer at 40960}}
    %3 = tile.to_shared %c : tensor<32x64xbf16, #blocked> -> tensor<32x64xbf16, #rows>
    return
  }
}
