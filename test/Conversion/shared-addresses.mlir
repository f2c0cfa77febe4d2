// RUN: tile-opt %s -split-input-file -tile-test-shared-addresses -verify-diagnostics

// Every element of a shared tile lies where the hardware's swizzle mode of
// its rows reads it (address bits 4 and up XORed with bits 7 and up), over
// 64 rows: 128-byte rows (8 chunks, XORed with bits 7-9), 64-byte rows (4
// chunks, bits 7-8) and 32-byte rows (2 chunks, bit 7).
// expected-remark @+3 {{'tensor<64x64xbf16>': swizzle 128, 4096 elements where the hardware reads them}}
// expected-remark @+2 {{'tensor<64x32xbf16>': swizzle 64, 2048 elements where the hardware reads them}}
// expected-remark @+1 {{'tensor<64x16xbf16>': swizzle 32, 1024 elements where the hardware reads them}}
func.func @one_panel(%a: tensor<64x64xbf16>, %b: tensor<64x32xbf16>, %c: tensor<64x16xbf16>) {
  return
}

// -----

// Several panels: rows of 256 and 512 bytes are 128-byte panels (tile
// extents are powers of two, so only 128-byte swizzles have more than one).
// expected-remark @+2 {{'tensor<16x128xf16>': swizzle 128, 2048 elements where the hardware reads them}}
// expected-remark @+1 {{'tensor<8x128xf32>': swizzle 128, 1024 elements where the hardware reads them}}
func.func @panels(%a: tensor<16x128xf16>, %b: tensor<8x128xf32>) {
  return
}

// -----

// Other element sizes: 4-byte (8 a 32-byte row), 1-byte (64 a 64-byte row)
// and 8-byte elements.
// expected-remark @+3 {{'tensor<64x8xf32>': swizzle 32, 512 elements where the hardware reads them}}
// expected-remark @+2 {{'tensor<16x64xi8>': swizzle 64, 1024 elements where the hardware reads them}}
// expected-remark @+1 {{'tensor<8x16xf64>': swizzle 128, 128 elements where the hardware reads them}}
func.func @element_sizes(%a: tensor<64x8xf32>, %b: tensor<16x64xi8>, %c: tensor<8x16xf64>) {
  return
}

// -----

// Rows of less than 32 bytes take no swizzle: row-major.
// expected-remark @+2 {{'tensor<16x8xbf16>': swizzle 0, 128 elements where the hardware reads them}}
// expected-remark @+1 {{'tensor<8x8xi8>': swizzle 0, 64 elements where the hardware reads them}}
func.func @row_major(%a: tensor<16x8xbf16>, %b: tensor<8x8xi8>) {
  return
}
