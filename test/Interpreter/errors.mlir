// Errors are reported, never crashes: launch-time checks (from the runtime,
// as tile-run words them), runtime errors with the op's location and
// program, unsupported ops before anything runs, kernel selection.
// RUN: not tile-interp %s 2>&1 | FileCheck %s --check-prefix=PICK
// PICK: error: '{{.*}}errors.mlir' has 3 tile.kernel functions (needs4, readonly, unsupported); pick one with -k
// RUN: not tile-interp %s -k nothere 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: '{{.*}}errors.mlir' has no function 'nothere'
// RUN: not tile-interp %s -k needs4 --dims N=6 2>&1 | FileCheck %s --check-prefix=REQ
// REQ: error: requires 'N % 4 == 0' does not hold: N = 6
// RUN: not tile-interp %s -k needs4 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: error: {{.*}}'N'
// RUN: not tile-interp %s -k readonly --dims N=4 2>&1 | FileCheck %s --check-prefix=RO
// RO: error: {{.*}}errors.mlir:[[@LINE+22]]:3: 'tile.store': stores into 'x', whose tile.access is "read" (program [0, 0, 0])
// RUN: not tile-interp %s -k unsupported --dims N=4 2>&1 | FileCheck %s --check-prefix=UNSUP
// UNSUP: error: {{.*}}errors.mlir:{{[0-9]+}}:{{[0-9]+}}: 'math.ctlz': is not supported by the interpreter
// RUN: not tile-interp %s -k needs4 --dims N=8 --check 2>&1 | FileCheck %s --check-prefix=NOREF
// NOREF: error: --check: no reference for any output; pass --reference NAME or --ref NAME=FILE.npy
// RUN: not tile-interp %s -k needs4 --dims N=8 --check --reference nosuch 2>&1 | FileCheck %s --check-prefix=BADREF
// BADREF: error: reference 'nosuch': unknown reference

func.func @needs4(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "readwrite"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.requires = ["N % 4 == 0"]} {
  return
}

func.func @readonly(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel} {
  %x = tile.make_tensor %xp[%n] : !tile.ptr<f32> -> !tile.tensor<?xf32, mut>
  %ar = tile.arange : tensor<4xi32>
  %v = arith.constant dense<1.0> : tensor<4xf32>
  tile.store %x[%ar], %v : !tile.tensor<?xf32, mut>[tensor<4xi32>], tensor<4xf32>
  return
}

func.func @unsupported(
    %xp: !tile.ptr<i32> {tile.name = "x", tile.dims = ["N"], tile.access = "readwrite"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel} {
  %c = math.ctlz %n : i32
  return
}
