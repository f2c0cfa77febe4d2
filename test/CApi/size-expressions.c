/* The C ABI on a compiled kernel whose dimensions are size expressions
 * (test/Frontend/size-expressions.tile, `halves`: x [M, N * 2], o [M, N],
 * s [M + 1, N]), run by size-expressions.test with no GPU: the dims as the
 * bundle writes them, a good binding (o left out, its shape computed), and
 * each expression's shape check. */
#include "tegula/tegula_rt.h"

#include <stdint.h>
#include <stdio.h>

static void report(const char *what, int status) {
  printf("%s: status %d: %s\n", what, status, tegula_rt_last_error());
}

static void bind(tegula_rt_binding *b, int64_t xCols, int64_t sRows) {
  int64_t x[2] = {5, xCols}, s[2] = {sRows, 19};
  tegula_rt_binding_set_tensor(b, "x", TEGULA_RT_F32, 2, x, NULL, 0x1000);
  tegula_rt_binding_set_tensor(b, "s", TEGULA_RT_F32, 2, s, NULL, 0x2000);
}

int main(int argc, char **argv) {
  tegula_rt_library *library = NULL;
  if (argc != 2 || tegula_rt_library_load(argv[1], &library) != TEGULA_RT_OK) {
    report("load", 1);
    return 1;
  }
  tegula_rt_kernel *kernel = tegula_rt_library_find(library, "halves");
  for (int dim = 0; dim < 2; ++dim)
    printf("x dim %d: %s\n", dim, tegula_rt_kernel_param_dim(kernel, 0, dim));
  tegula_rt_binding *b = NULL;
  tegula_rt_binding_create(kernel, &b);
  bind(b, 38, 6);
  report("good", tegula_rt_binding_check(b));
  int64_t shape[2] = {0, 0};
  tegula_rt_binding_param_shape(b, 1, shape, 2);
  printf("o: [%lld, %lld]\n", (long long)shape[0], (long long)shape[1]);
  bind(b, 37, 6);
  report("x", tegula_rt_binding_check(b));
  bind(b, 38, 5);
  report("s", tegula_rt_binding_check(b));
  tegula_rt_binding_free(b);
  tegula_rt_library_free(library);
  return 0;
}
