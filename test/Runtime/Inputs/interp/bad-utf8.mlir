// A grid expression whose bytes are not UTF-8 ("\FF").
func.func @k(
    %xp: !tile.ptr<f32> {tile.name = "x", tile.dims = ["N"], tile.access = "read"},
    %n: i32 {tile.size_var = "N"})
    attributes {tile.kernel, tile.grid = ["\FF", "1", "1"]} {
  return
}
