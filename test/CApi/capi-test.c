/* A C caller of libtegula_rt.so (include/tegula/tegula_rt.h), run by the
 * lit tests beside it with no GPU. Each mode prints what it sees, one fact
 * a line, for FileCheck:
 *   capi-test load PATH           kernels of a bundle or directory, or the
 * error capi-test signature PATH      each parameter, size variable and variant
 *   capi-test bind INPUTS_DIR     binding checks (test/Runtime/Inputs)
 *   capi-test cubin PATH MAJ MIN  which image each variant would load
 *   capi-test configs PATH        configs and the one each check chooses
 *   capi-test launch PATH N       scale(x, y, N) on a (stand-in) driver
 *   capi-test moved PATH N        pointers moved after a check, and an
 *                                 empty launch, on that driver
 *   capi-test absurd COPY DIR     absurd shapes and strides (copy, and
 *                                 scale2 in DIR)
 *   capi-test strided PATH        views of strided tensors (scale2 of
 *                                 test/Frontend/strided.tile)
 *   capi-test unit PATH           the unit-stride variant chosen by views
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "tegula/tegula_rt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "what: status N: message" (the thread's last error). */
static int report(const char *what, int status) {
  printf("%s: status %d: %s\n", what, status, tegula_rt_last_error());
  return status;
}

static tegula_rt_library *load(const char *path) {
  tegula_rt_library *library = NULL;
  if (report("load", tegula_rt_library_load(path, &library)) != TEGULA_RT_OK)
    return NULL;
  return library;
}

static int loadMode(const char *path) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  int count = tegula_rt_library_num_kernels(library);
  for (int i = 0; i < count; ++i) {
    tegula_rt_kernel *kernel = tegula_rt_library_kernel(library, i);
    printf("kernel %d: %s (%s, %d threads)\n", i, tegula_rt_kernel_name(kernel),
           tegula_rt_kernel_target(kernel), tegula_rt_kernel_threads(kernel));
  }
  /* Lookups by name, and the ones that fail. */
  if (count > 0) {
    const char *first =
        tegula_rt_kernel_name(tegula_rt_library_kernel(library, 0));
    printf("find %s: %s\n", first,
           tegula_rt_library_find(library, first) ? "found" : "missing");
  }
  printf("find nope: %s\n",
         tegula_rt_library_find(library, "nope") ? "found" : "missing");
  report("find nope", TEGULA_RT_ERROR_USAGE);
  printf("kernel %d: %s\n", count,
         tegula_rt_library_kernel(library, count) ? "found" : "missing");
  tegula_rt_library_free(library);
  return 0;
}

static const char *accessName(int access) {
  return access == TEGULA_RT_READ    ? "read"
         : access == TEGULA_RT_WRITE ? "write"
                                     : "readwrite";
}

static int signatureMode(const char *path) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *kernel = tegula_rt_library_kernel(library, 0);
  int params = tegula_rt_kernel_num_params(kernel);
  for (int p = 0; p < params; ++p) {
    printf("param %d: %s %s", p, tegula_rt_kernel_param_name(kernel, p),
           tegula_rt_dtype_name(tegula_rt_kernel_param_dtype(kernel, p)));
    if (tegula_rt_kernel_param_is_tensor(kernel, p)) {
      printf(" tensor %s [",
             accessName(tegula_rt_kernel_param_access(kernel, p)));
      int rank = tegula_rt_kernel_param_rank(kernel, p);
      for (int d = 0; d < rank; ++d)
        printf("%s%s", d ? ", " : "", tegula_rt_kernel_param_dim(kernel, p, d));
      printf("]");
    } else {
      printf(" scalar");
    }
    printf(" (index %d)\n",
           tegula_rt_kernel_param_index(
               kernel, tegula_rt_kernel_param_name(kernel, p)));
  }
  for (int s = 0; s < tegula_rt_kernel_num_size_vars(kernel); ++s)
    printf("size var: %s\n", tegula_rt_kernel_size_var(kernel, s));
  for (int v = 0; v < tegula_rt_kernel_num_variants(kernel); ++v)
    printf("variant: %s\n", tegula_rt_kernel_variant_name(kernel, v));
  /* Out of range: NULL or -1, and a message. */
  printf("param %d name: %s\n", params,
         tegula_rt_kernel_param_name(kernel, params) ? "?" : "null");
  report("bad param", TEGULA_RT_ERROR_USAGE);
  printf("dim 9 of param 0: %s\n",
         tegula_rt_kernel_param_dim(kernel, 0, 9) ? "?" : "null");
  report("bad dim", TEGULA_RT_ERROR_USAGE);
  printf("index of nope: %d\n", tegula_rt_kernel_param_index(kernel, "nope"));
  tegula_rt_library_free(library);
  return 0;
}

/*--- bind ----------------------------------------------------------------*/

static tegula_rt_binding *binding;

/* rotary(x: bf16[B, T, H, D], cos, sin: f32[T, R / 2], out: bf16[B, T, H, D])
 */
static void rotaryArgs(int xDType, const int64_t *xStrides, uint64_t xPtr,
                       int64_t cosCols, int cosRank, int64_t r) {
  int64_t x[4] = {2, 16, 4, 64}, cs[2] = {16, cosCols};
  tegula_rt_binding_set_tensor(binding, "x", xDType, 4, x, xStrides, xPtr);
  tegula_rt_binding_set_tensor(binding, "cos", TEGULA_RT_F32, cosRank, cs, NULL,
                               0x2000);
  tegula_rt_binding_set_tensor(binding, "sin", TEGULA_RT_F32, 2, cs, NULL,
                               0x3000);
  tegula_rt_binding_set_dim(binding, "R", r);
}

static int bindMode(const char *inputs) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/rotary/rotary.json", inputs);
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *rotary = tegula_rt_library_kernel(library, 0);
  report("create", tegula_rt_binding_create(rotary, &binding));

  /* A good launch: shapes bind B, T, H, D; R is explicit; `out` is left
   * out and its shape follows. */
  rotaryArgs(TEGULA_RT_BF16, NULL, 0x1000, 16, 2, 32);
  report("check", tegula_rt_binding_check(binding));
  int64_t shape[8], grid[3];
  int rank = tegula_rt_binding_param_shape(binding, 3, shape, 8);
  printf("out: rank %d [%lld, %lld, %lld, %lld]\n", rank, (long long)shape[0],
         (long long)shape[1], (long long)shape[2], (long long)shape[3]);
  tegula_rt_binding_grid(binding, grid);
  printf("grid: [%lld, %lld, %lld], variant %d\n", (long long)grid[0],
         (long long)grid[1], (long long)grid[2],
         tegula_rt_binding_variant(binding));
  report("pack without out", tegula_rt_binding_pack(binding));
  tegula_rt_binding_set_pointer(binding, "out", 0x4000);
  report("pack", tegula_rt_binding_pack(binding));
  int status = tegula_rt_launch(binding, NULL);
  printf("launch without a driver or context: %s\n",
         status == TEGULA_RT_ERROR_NO_DRIVER ||
                 status == TEGULA_RT_ERROR_NO_CONTEXT
             ? "refused"
             : "unexpected");
  uint64_t pointers[3] = {0x1000, 0x2000, 0x3000};
  report("launch_pointers",
         tegula_rt_launch_pointers(binding, pointers, 3, NULL));
  tegula_rt_binding_set_pointer(binding, "out", 0x4008);
  report("misaligned out", tegula_rt_binding_pack(binding));

  /* Each check, with tile-run's message where tile-run has the check. */
  int64_t transposed[4] = {16 * 4 * 64, 4 * 64, 1, 4};
  rotaryArgs(TEGULA_RT_F16, NULL, 0x1000, 16, 2, 32);
  report("dtype", tegula_rt_binding_check(binding));
  rotaryArgs(TEGULA_RT_BF16, transposed, 0x1000, 16, 2, 32);
  report("strides", tegula_rt_binding_check(binding));
  int64_t unitDims[4] = {999, 4 * 64, 64, 1}; /* dim 0 has extent 2: bad */
  rotaryArgs(TEGULA_RT_BF16, unitDims, 0x1000, 16, 2, 32);
  report("strides dim 0", tegula_rt_binding_check(binding));
  rotaryArgs(TEGULA_RT_BF16, NULL, 0x1002, 16, 2, 32);
  report("alignment", tegula_rt_binding_check(binding));
  rotaryArgs(TEGULA_RT_BF16, NULL, 0x1000, 8, 2, 32);
  report("shape", tegula_rt_binding_check(binding));
  rotaryArgs(TEGULA_RT_BF16, NULL, 0x1000, 16, 1, 32);
  report("rank", tegula_rt_binding_check(binding));
  rotaryArgs(TEGULA_RT_BF16, NULL, 0x1000, 40, 2, 80);
  report("requires", tegula_rt_binding_check(binding));
  int64_t one[1] = {4};
  report("unknown tensor", tegula_rt_binding_set_tensor(
                               binding, "y", TEGULA_RT_F32, 1, one, NULL, 0));
  report("unknown dtype",
         tegula_rt_binding_set_tensor(binding, "x", 42, 1, one, NULL, 0));
  tegula_rt_binding_free(binding);

  /* Size variables with no value, and scalars. */
  report("create", tegula_rt_binding_create(rotary, &binding));
  int64_t x[4] = {2, 16, 4, 64};
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_BF16, 4, x, NULL,
                               0x1000);
  report("unbound", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_dim(binding, "Q", 3);
  report("unknown dim", tegula_rt_binding_check(binding));
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);

  snprintf(path, sizeof(path), "%s/scale_add/scale_add.json", inputs);
  library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *scaleAdd = tegula_rt_library_kernel(library, 0);
  report("create", tegula_rt_binding_create(scaleAdd, &binding));
  int64_t n[1] = {1000};
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, n, NULL, 0x1000);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 1, n, NULL, 0x2000);
  report("no scalars", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_scalar_float(binding, "a", 0.1);
  tegula_rt_binding_set_scalar_int(binding, "b", (int64_t)1 << 40);
  report("i32 range", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_scalar_float(binding, "b", 2.5);
  report("i32 from a float", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_scalar_int(binding, "b", -1);
  report("requires on a scalar", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_scalar_int(binding, "b", 3);
  tegula_rt_binding_set_scalar_float(binding, "a", 1e39);
  report("f32 range", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_scalar_float(binding, "a", 0.1);
  tegula_rt_binding_set_scalar_int(binding, "c", 1);
  report("unknown scalar", tegula_rt_binding_check(binding));
  tegula_rt_binding_free(binding);
  report("create", tegula_rt_binding_create(scaleAdd, &binding));
  int64_t odd[1] = {1001};
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, odd, NULL,
                               0x1000);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 1, n, NULL, 0x2000);
  tegula_rt_binding_set_scalar_float(binding, "a", 0.1);
  tegula_rt_binding_set_scalar_int(binding, "b", 3);
  report("disagreeing tensors", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, n, NULL, 0x1000);
  report("check", tegula_rt_binding_check(binding));
  uint64_t two[4] = {0x5000, 0x6000, 0, 0};
  report("launch_pointers count",
         tegula_rt_launch_pointers(binding, two, 2, NULL));
  two[1] = 0x6004;
  report("launch_pointers aligned",
         tegula_rt_launch_pointers(binding, two, 4, NULL));
  tegula_rt_binding_free(binding);
  /* Getters given a bad handle or value set the message, never leaving
   * the previous one (here "null library out-pointer" before each). */
#define GETTER(call)                                                           \
  do {                                                                         \
    tegula_rt_library_load(NULL, NULL);                                        \
    (void)(call);                                                              \
    printf("%s: %s\n", #call, tegula_rt_last_error());                         \
  } while (0)
  GETTER(tegula_rt_kernel_name(NULL));
  GETTER(tegula_rt_kernel_target(NULL));
  GETTER(tegula_rt_kernel_json_path(NULL));
  GETTER(tegula_rt_kernel_threads(NULL));
  GETTER(tegula_rt_kernel_num_params(NULL));
  GETTER(tegula_rt_kernel_num_size_vars(NULL));
  GETTER(tegula_rt_kernel_num_variants(NULL));
  GETTER(tegula_rt_kernel_num_configs(NULL));
  GETTER(tegula_rt_kernel_param_index(NULL, "x"));
  GETTER(tegula_rt_kernel_param_index(scaleAdd, "nope"));
  GETTER(tegula_rt_dtype_name(9));
  GETTER(tegula_rt_dtype_size(-1));
#undef GETTER
  tegula_rt_library_free(library);

  /* Null handles are errors, not crashes. */
  report("null load", tegula_rt_library_load(NULL, NULL));
  report("null check", tegula_rt_binding_check(NULL));
  report("null launch", tegula_rt_launch(NULL, NULL));
  printf("null kernel name: %s\n", tegula_rt_kernel_name(NULL) ? "?" : "null");
  tegula_rt_library_free(NULL);
  tegula_rt_binding_free(NULL);
  return 0;
}

static int cubinMode(const char *path, int major, int minor) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *kernel = tegula_rt_library_kernel(library, 0);
  for (int v = -1; v < tegula_rt_kernel_num_variants(kernel); ++v)
    printf("sm_%d%d %s: %s\n", major, minor,
           v < 0 ? "general" : tegula_rt_kernel_variant_name(kernel, v),
           tegula_rt_kernel_uses_cubin(kernel, v, major, minor) ? "cubin"
                                                                : "ptx");
  tegula_rt_library_free(library);
  return 0;
}

/* scale(x: f32[N], y: f32[N]) compiled with -D BLOCK=64,128: the configs,
 * and the one each check chooses (no driver: no tuned choice). */
static int configsMode(const char *path) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *kernel = tegula_rt_library_kernel(library, 0);
  for (int c = 0; c < tegula_rt_kernel_num_configs(kernel); ++c)
    printf("config %d: '%s'\n", c, tegula_rt_kernel_config_name(kernel, c));
  report("config 9", tegula_rt_kernel_config_name(kernel, 9) ? 0 : 1);
  report("create", tegula_rt_binding_create(kernel, &binding));
  printf("unchecked: %s\n", tegula_rt_binding_config(binding) ? "?" : "null");
  int64_t n[1] = {1000};
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, n, NULL, 0x1000);
  const char *pins[] = {NULL, "BLOCK=128", "scale=BLOCK=64", "BLOCK=7"};
  for (int i = 0; i < 4; ++i) {
    if (pins[i])
      setenv("TEGULA_CONFIG", pins[i], 1);
    int status = tegula_rt_binding_check(binding);
    int64_t grid[3] = {0, 0, 0};
    if (status == TEGULA_RT_OK && !tegula_rt_binding_grid(binding, grid))
      printf("pin %s: config '%s' (%s), variant %s, grid %lld\n",
             pins[i] ? pins[i] : "none", tegula_rt_binding_config(binding),
             tegula_rt_binding_config_source(binding),
             tegula_rt_binding_variant_name(binding), (long long)grid[0]);
    else
      report(pins[i], status);
  }
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  return 0;
}

/* scale(x, y, N) launched through a driver (fake-driver's stand-in, whose
 * device memory is host memory): the config each check chooses, and y. */
static int launchMode(const char *path, int64_t n) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *kernel = tegula_rt_library_kernel(library, 0);
  report("prepare", tegula_rt_kernel_prepare(kernel));
  size_t bytes = ((size_t)n * 4 + 255) / 256 * 256; /* C11's rule */
  float *x = aligned_alloc(256, bytes), *y = aligned_alloc(256, bytes);
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)i, y[i] = -1;
  report("create", tegula_rt_binding_create(kernel, &binding));
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, &n, NULL,
                               (uint64_t)(uintptr_t)x);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 1, &n, NULL,
                               (uint64_t)(uintptr_t)y);
  report("check", tegula_rt_binding_check(binding));
  printf("config '%s' (%s), variant %s\n", tegula_rt_binding_config(binding),
         tegula_rt_binding_config_source(binding),
         tegula_rt_binding_variant_name(binding));
  report("launch", tegula_rt_launch(binding, NULL));
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    wrong += y[i] != x[i];
  printf("y: %lld of %lld elements differ\n", (long long)wrong, (long long)n);
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  free(x);
  free(y);
  return 0;
}

/* scale(x, y, N) with y's allocation given: a pointer moved after a
 * passing check (set_pointer, launch_pointers) is checked again at the
 * launch, before the driver would write past the allocation. */
static int movedMode(const char *path, int64_t n) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *kernel = tegula_rt_library_kernel(library, 0);
  size_t bytes = ((size_t)n * 4 + 255) / 256 * 256; /* C11's rule */
  float *x = aligned_alloc(256, bytes), *y = aligned_alloc(256, bytes);
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)i;
  uint64_t xp = (uint64_t)(uintptr_t)x, yp = (uint64_t)(uintptr_t)y;
  report("create", tegula_rt_binding_create(kernel, &binding));
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, &n, NULL, xp);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 1, &n, NULL, yp);
  tegula_rt_binding_set_allocation(binding, "y", yp, (uint64_t)n * 4);
  report("check", tegula_rt_binding_check(binding));
  report("launch", tegula_rt_launch(binding, NULL));
  tegula_rt_binding_set_pointer(binding, "y", yp + 64);
  report("moved by set_pointer", tegula_rt_launch(binding, NULL));
  uint64_t pointers[2] = {xp, yp + 64};
  report("moved by launch_pointers",
         tegula_rt_launch_pointers(binding, pointers, 2, NULL));
  pointers[1] = yp;
  report("back", tegula_rt_launch_pointers(binding, pointers, 2, NULL));
  /* An empty launch: no memory, no driver call (the stand-in refuses a
   * grid of 0), null pointers allowed. */
  int64_t zero = 0;
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 1, &zero, NULL, 0);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 1, &zero, NULL, 0);
  report("empty check", tegula_rt_binding_check(binding));
  int64_t grid[3];
  tegula_rt_binding_grid(binding, grid);
  printf("empty grid: [%lld, %lld, %lld]\n", (long long)grid[0],
         (long long)grid[1], (long long)grid[2]);
  report("empty launch", tegula_rt_launch(binding, NULL));
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  free(x);
  free(y);
  return 0;
}

/* Absurd shapes and strides, which the C ABI's own checks once computed
 * with signed overflow (UBSan's finding in the sanitizer build): copy (x,
 * y: f32[N], contiguous) and scale2 (strided x and y). */
static int absurdMode(const char *copyPath, const char *stridedPath) {
  const int64_t big = (int64_t)1 << 62;
  int64_t shape[3] = {big, big, big}, ones[3] = {1, 1, 1};
  tegula_rt_library *library = load(copyPath);
  if (!library)
    return 1;
  report("create", tegula_rt_binding_create(
                       tegula_rt_library_kernel(library, 0), &binding));
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 3, shape, ones,
                               0x1000);
  tegula_rt_binding_set_allocation(binding, "x", 0x1000, 64);
  report("contiguous", tegula_rt_binding_check(binding));
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  if (!(library = load(stridedPath)))
    return 1;
  report("create", tegula_rt_binding_create(
                       tegula_rt_library_find(library, "scale2"), &binding));
  int64_t strides[2] = {big, big};
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape, strides,
                               0x1000);
  tegula_rt_binding_set_allocation(binding, "x", 0x1000, 64);
  report("strided", tegula_rt_binding_check(binding));
  int64_t four[2] = {4, 4};
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, four, strides,
                               0x1000);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 2, four, NULL,
                               0x2000);
  report("strides", tegula_rt_binding_check(binding));
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  return 0;
}

/* x: f32[M, N] strided (read), y: mut f32[M, N] strided: a 4 x 8 view. */
static int stridedMode(const char *path) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_kernel *kernel = tegula_rt_library_find(library, "scale2");
  if (!kernel)
    return report("find", 1);
  printf("strided: x %d, y %d, param 9 %d\n",
         tegula_rt_kernel_param_is_strided(kernel, 0),
         tegula_rt_kernel_param_is_strided(kernel, 1),
         tegula_rt_kernel_param_is_strided(kernel, 9));
  tegula_rt_binding *binding = NULL;
  report("create", tegula_rt_binding_create(kernel, &binding));
  int64_t shape[2] = {4, 8};
  /* Columns 3..10 of a 4 x 16 matrix at 0x1000: 4-byte aligned is enough. */
  int64_t slice[2] = {16, 1}, columnMajor[2] = {1, 4}, alias[2] = {4, 1};
  uint64_t base = 0x1000, x = base + 3 * 4;
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape, slice, x);
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 2, shape,
                               columnMajor, 0x9000);
  report("slice", tegula_rt_binding_check(binding));
  /* The slice ends at element 3 + 3 * 16 + 7 = 58 of 64: inside; one
   * element short of that allocation, outside. */
  tegula_rt_binding_set_allocation(binding, "x", base, 64 * 4);
  report("inside", tegula_rt_binding_check(binding));
  /* The same view in another allocation of the same size: only the
   * pointers moved, it lies outside the checked allocation; with its
   * allocation's base too, it passes the pack and reaches the driver. */
  uint64_t moved[2] = {x + 0x10000, 0x9000}, bases[2] = {base + 0x10000, 0};
  report("moved", tegula_rt_launch_pointers(binding, moved, 2, NULL));
  int status = tegula_rt_launch_views(binding, moved, bases, 2, NULL);
  printf("moved with its allocation: %s\n",
         status == TEGULA_RT_ERROR_NO_DRIVER ||
                 status == TEGULA_RT_ERROR_NO_CONTEXT
             ? "refused by the driver only"
             : tegula_rt_last_error());
  uint64_t old[2] = {base, 0};
  tegula_rt_launch_views(binding, moved, old, 2, NULL); /* back to base */
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape, slice, x);
  tegula_rt_binding_set_allocation(binding, "x", base, 58 * 4);
  report("outside", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_allocation(binding, "x", base + 16, 1024);
  report("before", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_allocation(binding, "x", base, 0);
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape, slice,
                               x + 2);
  report("misaligned", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape, alias, x);
  report("aliased read", tegula_rt_binding_check(binding));
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 2, shape, alias,
                               0x9000);
  report("aliased write", tegula_rt_binding_check(binding));
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  return 0;
}

/* scale2's variants over 16 x 64 f32 views: div16_unit where every view's
 * last stride is 1, its rows 16-byte multiples apart and its address
 * 16-byte aligned; the general code otherwise. The pointers a pack takes
 * choose again. */
static int unitMode(const char *path) {
  tegula_rt_library *library = load(path);
  if (!library)
    return 1;
  tegula_rt_binding *binding = NULL;
  report("create", tegula_rt_binding_create(
                       tegula_rt_library_find(library, "scale2"), &binding));
  int64_t shape[2] = {16, 64}, rows[2] = {64, 1}, odd[2] = {66, 1};
  int64_t broadcast[2] = {0, 1}, transposed[2] = {1, 16};
  struct {
    const char *what;
    const int64_t *strides;
    uint64_t x;
  } cases[] = {{"row-major", rows, 0x1000},
               {"broadcast", broadcast, 0x1000},
               {"misaligned", rows, 0x1004},
               {"odd rows", odd, 0x1000},
               {"transposed", transposed, 0x1000}};
  tegula_rt_binding_set_tensor(binding, "y", TEGULA_RT_F32, 2, shape, rows,
                               0x100000);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape,
                                 cases[i].strides, cases[i].x);
    int status = tegula_rt_binding_check(binding);
    printf("%s: %d %s\n", cases[i].what, status,
           tegula_rt_binding_variant_name(binding));
  }
  /* Checked aligned, packed at a 4-byte aligned address: the pack's
   * pointers rule the variant out; aligned again, it is back. */
  tegula_rt_binding_set_tensor(binding, "x", TEGULA_RT_F32, 2, shape, rows,
                               0x1000);
  tegula_rt_binding_check(binding);
  tegula_rt_binding_set_pointer(binding, "x", 0x1004);
  int status = tegula_rt_binding_pack(binding);
  printf("packed misaligned: %d %s\n", status,
         tegula_rt_binding_variant_name(binding));
  tegula_rt_binding_set_pointer(binding, "x", 0x1100);
  status = tegula_rt_binding_pack(binding);
  printf("packed aligned: %d %s\n", status,
         tegula_rt_binding_variant_name(binding));
  /* Packs keep the variant while the alignments stay (no new binding of
   * the addresses), and choose again when one changes. */
  const uint64_t later[] = {0x2000, 0x3000, 0x3008, 0x3108, 0x4000};
  for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); ++i) {
    tegula_rt_binding_set_pointer(binding, "x", later[i]);
    status = tegula_rt_binding_pack(binding);
    printf("packed at 0x%llx: %d %s\n", (unsigned long long)later[i], status,
           tegula_rt_binding_variant_name(binding));
  }
  tegula_rt_binding_free(binding);
  tegula_rt_library_free(library);
  return 0;
}

int main(int argc, char **argv) {
  printf("%s, abi %d\n", tegula_rt_version(), tegula_rt_abi_version());
  printf("dtypes: %s %d, %s %d, %s\n", tegula_rt_dtype_name(TEGULA_RT_BF16),
         tegula_rt_dtype_size(TEGULA_RT_BF16),
         tegula_rt_dtype_name(TEGULA_RT_BOOL),
         tegula_rt_dtype_size(TEGULA_RT_BOOL),
         tegula_rt_dtype_name(6) ? "?" : "null");
  if (argc == 3 && !strcmp(argv[1], "load"))
    return loadMode(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "signature"))
    return signatureMode(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "bind"))
    return bindMode(argv[2]);
  if (argc == 4 && !strcmp(argv[1], "launch"))
    return launchMode(argv[2], atoll(argv[3]));
  if (argc == 4 && !strcmp(argv[1], "moved"))
    return movedMode(argv[2], atoll(argv[3]));
  if (argc == 4 && !strcmp(argv[1], "absurd"))
    return absurdMode(argv[2], argv[3]);
  if (argc == 3 && !strcmp(argv[1], "strided"))
    return stridedMode(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "unit"))
    return unitMode(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "configs"))
    return configsMode(argv[2]);
  if (argc == 5 && !strcmp(argv[1], "cubin"))
    return cubinMode(argv[2], atoi(argv[3]), atoi(argv[4]));
  fprintf(stderr, "usage: capi-test load|signature|bind|cubin|configs ...\n");
  return 2;
}
