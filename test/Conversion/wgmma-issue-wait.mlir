// RUN: tile-opt %s -convert-tile-to-nvvm -canonicalize | FileCheck %s --enable-var-scope

// The two halves of a warpgroup dot (Wgmma.cpp): the issue fences the
// accumulator, issues one m64n64k16 per 16 of K (A and B both K-major: the
// last two immediates, A's and B's transpose bits, are 0) and commits
// them as one group; each wait lowers to wgmma.wait_group with its own
// count, the accumulator passed through.
// CHECK-LABEL: func.func @dot_issue_wait
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 2;
// CHECK: wgmma.wait_group.sync.aligned 0;
module attributes {tile.target = "sm_90a"} {
func.func @dot_issue_wait(%a: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>,
                          %b: tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>>,
                          %c: tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>) -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
    attributes {tile.warps = 4 : i32} {
  %d, %t = tile.dot_issue %a, %b, %c : tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [1, 0]>>, tensor<64x64xbf16, #tile.shared<swizzle = 128, order = [0, 1]>> -> tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %w = tile.dot_wait %d after %t pending = 2 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  %l = tile.dot_wait %w pending = 0 : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
  return %l : tensor<64x64xf32, #tile.mma<warpsPerCTA = [4, 1]>>
}
}
