// RUN: tile-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// tile.debug (tilec -g) is a unit attribute on the module; tile.assert
// takes a bool scalar or tile, a message and the condition's text.

// CHECK: module attributes {tile.debug}
// CHECK: tile.assert %{{.*}}, "m" text "c" : tensor<4xi1>
module attributes {tile.debug} {
  func.func @f(%c: tensor<4xi1>) {
    tile.assert %c, "m" text "c" : tensor<4xi1>
    return
  }
}

// -----

// expected-error @+1 {{'tile.debug' must be a unit attribute on a module}}
func.func @g() attributes {tile.debug} {
  return
}
