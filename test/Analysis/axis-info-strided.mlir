// RUN: tile-opt %s -tile-assign-layouts -tile-test-axis-info -verify-diagnostics
// Vector widths through strided views (lib/Analysis/AxisInfo.cpp,
// stridedRowDivisor): consecutive only where the last stride is the
// constant 1 (the div16_unit variant's, Variants.cpp); then as wide as
// the base's alignment (tile.alignment, bytes) and every other stride's
// divisibility (elements) let rows start aligned. f16 blocks of 16 x 64:
//  - base 16 bytes, row stride a multiple of 8: 8 elements (16 bytes);
//  - row stride a multiple of 4: 4 elements;
//  - base 8 bytes: 4 elements;
//  - nothing known of the base (a view may start at any element): 1;
//  - last stride not known: 1, as in the general code.

module attributes {tile.target = "sm_90a"} {
  func.func @views(%p: !tile.ptr<f16> {tile.access = "read", tile.alignment = 16 : i64, tile.dims = ["M", "K"], tile.name = "p"}, %q: !tile.ptr<f16> {tile.access = "read", tile.alignment = 8 : i64, tile.dims = ["M", "K"], tile.name = "q"}, %r: !tile.ptr<f16> {tile.access = "read", tile.dims = ["M", "K"], tile.name = "r"}, %y: !tile.ptr<f16> {tile.access = "write", tile.dims = ["M", "K"], tile.name = "y"}, %m: i32 {tile.divisibility = 16 : i64, tile.size_var = "M"}, %k: i32 {tile.divisibility = 16 : i64, tile.size_var = "K"}, %s8: i64 {tile.divisibility = 8 : i64, tile.stride_of = "p"}, %s4: i64 {tile.divisibility = 4 : i64, tile.stride_of = "p"}, %s: i64 {tile.stride_of = "p"}) attributes {tile.grid = ["1", "1", "1"], tile.kernel, tile.requires = [], tile.template = {}, tile.warps = 4 : i32} {
    %one = arith.constant 1 : i64
    %t0 = tile.make_tensor %p[%m, %k] strides[%s8, %one] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, strided>
    %t1 = tile.make_tensor %p[%m, %k] strides[%s4, %one] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, strided>
    %t2 = tile.make_tensor %q[%m, %k] strides[%s8, %one] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, strided>
    %t3 = tile.make_tensor %r[%m, %k] strides[%s8, %one] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, strided>
    %t4 = tile.make_tensor %p[%m, %k] strides[%s8, %s] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, strided>
    %out = tile.make_tensor %y[%m, %k] : !tile.ptr<f16> -> !tile.tensor<?x?xf16, mut>
    %a = tile.arange : tensor<16xi32>
    %b = tile.arange : tensor<64xi32>
    %ae = tile.expand_dims %a, 1 : tensor<16xi32> -> tensor<16x1xi32>
    %rows = tile.broadcast %ae : tensor<16x1xi32> -> tensor<16x64xi32>
    %be = tile.expand_dims %b, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cols = tile.broadcast %be : tensor<1x64xi32> -> tensor<16x64xi32>
    // expected-remark @+1 {{vector width = 8}}
    %l0 = tile.load %t0[%rows, %cols] : !tile.tensor<?x?xf16, strided>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
    // expected-remark @+1 {{vector width = 4}}
    %l1 = tile.load %t1[%rows, %cols] : !tile.tensor<?x?xf16, strided>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
    // expected-remark @+1 {{vector width = 4}}
    %l2 = tile.load %t2[%rows, %cols] : !tile.tensor<?x?xf16, strided>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
    // expected-remark @+1 {{vector width = 1}}
    %l3 = tile.load %t3[%rows, %cols] : !tile.tensor<?x?xf16, strided>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
    // expected-remark @+1 {{vector width = 1}}
    %l4 = tile.load %t4[%rows, %cols] : !tile.tensor<?x?xf16, strided>[tensor<16x64xi32>, tensor<16x64xi32>] -> tensor<16x64xf16>
    %s01 = arith.addf %l0, %l1 : tensor<16x64xf16>
    %s23 = arith.addf %l2, %l3 : tensor<16x64xf16>
    %s03 = arith.addf %s01, %s23 : tensor<16x64xf16>
    %sum = arith.addf %s03, %l4 : tensor<16x64xf16>
    // A contiguous tensor of K % 16 == 0 columns: 16 bytes.
    // expected-remark @+1 {{vector width = 8}}
    tile.store %out[%rows, %cols], %sum : !tile.tensor<?x?xf16, mut>[tensor<16x64xi32>, tensor<16x64xi32>], tensor<16x64xf16>
    return
  }
}
