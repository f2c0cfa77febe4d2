// RUN: tile-opt %s -tile-test-affine-index -verify-diagnostics -o /dev/null
// How each access index splits into a uniform part and coordinate
// coefficients (tegula/Analysis/AffineIndex.h), written as in a .tile file:
//   rows = program_id(0) * 32 + arange(32); cols = arange(64)
//   load(x[rows, cols])                       -> 1 scalar term, [1, 0]; [0, 1]
//   store(y[rows - 1, cols * 2 + 3], t)       -> constant -1; 3, [0, 2]
//   load(x[rows, 64 - cols])                  -> not affine (coordinates subtracted)
//   load(x[t, cols])                          -> not affine (a loaded index)
//   load(x[rows, cols * 2^26])                -> not affine (coordinates pass 2^31)

module attributes {tile.target = "sm_90a"} {
  func.func @indices(%xp: !tile.ptr<i32>, %yp: !tile.ptr<i32>, %m: i32) attributes {tile.kernel, tile.warps = 4 : i32} {
    %x = tile.make_tensor %xp[%m] : !tile.ptr<i32> -> !tile.tensor<?x64xi32>
    %y = tile.make_tensor %yp[%m] : !tile.ptr<i32> -> !tile.tensor<?x128xi32, mut>
    %pid = tile.program_id 0
    %c32 = arith.constant 32 : i32
    %row0 = arith.muli %pid, %c32 : i32
    %ar32 = tile.arange : tensor<32xi32>
    %s = tile.splat %row0 : tensor<32xi32>
    %rows1 = arith.addi %s, %ar32 : tensor<32xi32>
    %rows2 = tile.expand_dims %rows1, 1 : tensor<32xi32> -> tensor<32x1xi32>
    %rows = tile.broadcast %rows2 : tensor<32x1xi32> -> tensor<32x64xi32>
    %ar64 = tile.arange : tensor<64xi32>
    %cols1 = tile.expand_dims %ar64, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cols = tile.broadcast %cols1 : tensor<1x64xi32> -> tensor<32x64xi32>
    // expected-remark @+1 {{index 0: 0 + 1 x scalar, coefficients = [1, 0]; index 1: 0, coefficients = [0, 1]}}
    %t = tile.load %x[%rows, %cols] : !tile.tensor<?x64xi32>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xi32>

    %one = arith.constant dense<1> : tensor<32x64xi32>
    %two = arith.constant dense<2> : tensor<32x64xi32>
    %three = arith.constant dense<3> : tensor<32x64xi32>
    %up = arith.subi %rows, %one : tensor<32x64xi32>
    %c2 = arith.muli %cols, %two : tensor<32x64xi32>
    %c23 = arith.addi %c2, %three : tensor<32x64xi32>
    // expected-remark @+1 {{index 0: -1 + 1 x scalar, coefficients = [1, 0]; index 1: 3, coefficients = [0, 2]}}
    tile.store %y[%up, %c23], %t : !tile.tensor<?x128xi32, mut>[tensor<32x64xi32>, tensor<32x64xi32>], tensor<32x64xi32>

    %c64 = arith.constant dense<64> : tensor<32x64xi32>
    %flipped = arith.subi %c64, %cols : tensor<32x64xi32>
    // expected-remark @+1 {{index 0: 0 + 1 x scalar, coefficients = [1, 0]; index 1: not affine}}
    %u = tile.load %x[%rows, %flipped] : !tile.tensor<?x64xi32>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xi32>

    // expected-remark @+1 {{index 0: not affine; index 1: 0, coefficients = [0, 1]}}
    %v = tile.load %x[%t, %cols] : !tile.tensor<?x64xi32>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xi32>

    %huge = arith.constant dense<67108864> : tensor<32x64xi32>
    %far = arith.muli %cols, %huge : tensor<32x64xi32>
    // expected-remark @+1 {{index 0: 0 + 1 x scalar, coefficients = [1, 0]; index 1: not affine}}
    %w = tile.load %x[%rows, %far] : !tile.tensor<?x64xi32>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xi32>
    return
  }
}
