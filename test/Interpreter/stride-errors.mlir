// Hand-written IR whose stride arguments do not match a strided tensor is
// reported, never run: a stride that is not i64 (when the bundle is
// described), one naming no tensor parameter (when arguments are bound).
// RUN: not tile-interp %s -k narrow --dims N=4 2>&1 | FileCheck %s --check-prefix=NARROW
// NARROW: error: kernel 'narrow' argument 2: a stride must be i64
// RUN: not tile-interp %s -k orphan --dims N=4 2>&1 | FileCheck %s --check-prefix=ORPHAN
// ORPHAN: error: argument 2 is a stride of 'y', which is not a strided tensor

func.func @narrow(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %n: i32 {tile.size_var = "N"},
    %s: i32 {tile.stride_of = "x"})
    attributes {tile.kernel} {
  return
}

func.func @orphan(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %n: i32 {tile.size_var = "N"},
    %s: i64 {tile.stride_of = "y"})
    attributes {tile.kernel} {
  return
}
