// A small tile-dialect kernel: out[r, c] = exp2(x[r, c] * scale), row sums.
func.func @scale_rows(%x_base: !tile.ptr<bf16>, %out_base: !tile.ptr<f32>,
                      %scale: f32, %n: i32)
    attributes {tile.kernel, tile.warps = 4 : i32} {
  %x = tile.make_tensor %x_base[%n] : !tile.ptr<bf16> -> !tile.tensor<?x64xbf16>
  %out = tile.make_tensor %out_base[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
  %pid = tile.program_id 0
  %c32 = arith.constant 32 : i32
  %row0 = arith.muli %pid, %c32 : i32
  %r = tile.arange : tensor<32xi32>
  %row0s = tile.splat %row0 : tensor<32xi32>
  %rows = arith.addi %row0s, %r : tensor<32xi32>
  %rows2 = tile.expand_dims %rows, 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rowsb = tile.broadcast %rows2 : tensor<32x1xi32> -> tensor<32x64xi32>
  %c = tile.arange : tensor<64xi32>
  %c2 = tile.expand_dims %c, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cb = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<32x64xi32>
  %blk = tile.load %x[%rowsb, %cb] : !tile.tensor<?x64xbf16>[tensor<32x64xi32>, tensor<32x64xi32>] -> tensor<32x64xbf16>
  %f = arith.extf %blk : tensor<32x64xbf16> to tensor<32x64xf32>
  %s = tile.splat %scale : tensor<32x64xf32>
  %y = arith.mulf %f, %s : tensor<32x64xf32>
  %e = math.exp2 %y : tensor<32x64xf32>
  %sum = tile.reduce sum %e, 1 : tensor<32x64xf32> -> tensor<32xf32>
  tile.store %out[%rows], %sum : !tile.tensor<?xf32, mut>[tensor<32xi32>], tensor<32xf32>
  return
}
