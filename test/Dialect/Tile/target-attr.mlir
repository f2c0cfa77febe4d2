// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// The module's target is one of TargetInfo's names, on a module only.
// expected-error @+1 {{unknown target 'sm_70'; expected one of sm_90a, sm_80}}
module attributes {tile.target = "sm_70"} {
}

// -----

func.func @f() attributes {tile.kernel, tile.warps = 4 : i32} {
  // expected-error @+1 {{'tile.target' must be a string on a module}}
  "test.op"() {tile.target = "sm_80"} : () -> ()
  return
}

// -----

module attributes {tile.target = "sm_80"} {
}
