/*===- tegula_rt.h - The C ABI of the Tegula runtime ----------------------===*
 *
 * Loads kernel bundles (KERNEL.json + KERNEL.ptx/.cubin, spec/tools.md),
 * answers what a kernel takes, binds and checks a launch with the code and
 * the messages of tile-run (no GPU needed for that), and launches on a
 * caller's stream with the caller's device pointers in the current CUDA
 * context. It never allocates device memory and never synchronizes.
 *
 * libtegula_rt.so carries no MLIR, LLVM or CUDA toolkit: libcuda.so.1 is
 * opened at the first launch. docs/python.md describes the API; the Python
 * package `tegula` is a ctypes layer over it.
 *
 * Conventions: a function returning int returns TEGULA_RT_OK (0) or an error
 * status, and then tegula_rt_last_error() holds the message (per thread,
 * valid until the next call on that thread). Getters return -1 or NULL for
 * a bad handle or index, with the message set likewise. Strings returned by
 * getters live as long as the library that owns them.
 *
 * Threads: libraries and kernels may be shared between threads (the module
 * cache is locked); a binding belongs to one thread at a time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TEGULA_TEGULA_RT_H
#define TEGULA_TEGULA_RT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration here changes meaning. */
#define TEGULA_RT_ABI_VERSION 2

enum tegula_rt_status {
  TEGULA_RT_OK = 0,
  /* A null handle, an index out of range, an unknown name. */
  TEGULA_RT_ERROR_USAGE = 1,
  /* A bundle that cannot be read or is malformed. */
  TEGULA_RT_ERROR_BUNDLE = 2,
  /* A launch-time check failed (shapes, dtypes, requires, grid, strides,
   * alignment, a missing argument); no driver call was made. */
  TEGULA_RT_ERROR_LAUNCH_CHECK = 3,
  /* No CUDA driver (libcuda.so.1) or no GPU. */
  TEGULA_RT_ERROR_NO_DRIVER = 4,
  /* No CUDA context is current on the calling thread. */
  TEGULA_RT_ERROR_NO_CONTEXT = 5,
  /* A driver call failed; the message names it. */
  TEGULA_RT_ERROR_DRIVER = 6,
  /* Out of host memory, or an unexpected internal failure. */
  TEGULA_RT_ERROR_INTERNAL = 7
};

/* Element types, as bundles name them. */
enum tegula_rt_dtype {
  TEGULA_RT_F16 = 0,
  TEGULA_RT_BF16 = 1,
  TEGULA_RT_F32 = 2,
  TEGULA_RT_I32 = 3,
  TEGULA_RT_I64 = 4,
  TEGULA_RT_BOOL = 5
};

/* What a kernel does with a tensor parameter. */
enum tegula_rt_access {
  TEGULA_RT_READ = 0,
  TEGULA_RT_WRITE = 1,
  TEGULA_RT_READWRITE = 2
};

typedef struct tegula_rt_library tegula_rt_library;
typedef struct tegula_rt_kernel tegula_rt_kernel;
typedef struct tegula_rt_binding tegula_rt_binding;
/* The driver's CUstream (null: the legacy default stream). */
typedef struct CUstream_st *tegula_rt_stream;

/* TEGULA_RT_ABI_VERSION of the library loaded, and "tegula_rt 0.1 (ABI 1)". */
int tegula_rt_abi_version(void);
const char *tegula_rt_version(void);
/* The message of the last failure on this thread ("" after success). */
const char *tegula_rt_last_error(void);
/* "f16", ... for a tegula_rt_dtype; NULL for another value. */
const char *tegula_rt_dtype_name(int dtype);
/* Bytes per element in device memory (bool: 1); -1 for another value. */
int tegula_rt_dtype_size(int dtype);

/*--- Bundles -------------------------------------------------------------*/

/* Loads one kernel (a path to KERNEL.json) or every kernel of a bundle
 * directory (each *.json in it but *.tuning.json, in name order),
 * validating each as tile-run does. */
int tegula_rt_library_load(const char *path, tegula_rt_library **library);
/* Unloads its modules from every context they were loaded in; bindings of
 * its kernels must be freed first. NULL is ignored. */
void tegula_rt_library_free(tegula_rt_library *library);
int tegula_rt_library_num_kernels(const tegula_rt_library *library);
tegula_rt_kernel *tegula_rt_library_kernel(const tegula_rt_library *library,
                                           int index);
/* The kernel named `name`, or NULL (TEGULA_RT_ERROR_USAGE). */
tegula_rt_kernel *tegula_rt_library_find(const tegula_rt_library *library,
                                         const char *name);

/*--- A kernel's signature ------------------------------------------------*/

const char *tegula_rt_kernel_name(const tegula_rt_kernel *kernel);
const char *tegula_rt_kernel_target(const tegula_rt_kernel *kernel);
const char *tegula_rt_kernel_json_path(const tegula_rt_kernel *kernel);
int tegula_rt_kernel_threads(const tegula_rt_kernel *kernel);
/* Parameters in ABI order: tensors and scalars as declared. */
int tegula_rt_kernel_num_params(const tegula_rt_kernel *kernel);
/* The index of parameter `name`, or -1. */
int tegula_rt_kernel_param_index(const tegula_rt_kernel *kernel,
                                 const char *name);
const char *tegula_rt_kernel_param_name(const tegula_rt_kernel *kernel,
                                        int param);
/* 1 for a tensor, 0 for a scalar. */
int tegula_rt_kernel_param_is_tensor(const tegula_rt_kernel *kernel, int param);
int tegula_rt_kernel_param_dtype(const tegula_rt_kernel *kernel, int param);
/* 1 when tensor `param` is declared `strided` (its strides are passed to
 * the kernel), else 0. */
int tegula_rt_kernel_param_is_strided(const tegula_rt_kernel *kernel,
                                      int param);
/* A tegula_rt_access (scalars: TEGULA_RT_READ). */
int tegula_rt_kernel_param_access(const tegula_rt_kernel *kernel, int param);
/* The number of dims of a tensor (0 for a scalar). */
int tegula_rt_kernel_param_rank(const tegula_rt_kernel *kernel, int param);
/* Dim `dim` as the bundle writes it: "R", "64", "R / 2". */
const char *tegula_rt_kernel_param_dim(const tegula_rt_kernel *kernel,
                                       int param, int dim);
int tegula_rt_kernel_num_size_vars(const tegula_rt_kernel *kernel);
const char *tegula_rt_kernel_size_var(const tegula_rt_kernel *kernel,
                                      int index);
/* Specialized builds chosen at launch (docs/runtime.md, "variants"). */
int tegula_rt_kernel_num_variants(const tegula_rt_kernel *kernel);
const char *tegula_rt_kernel_variant_name(const tegula_rt_kernel *kernel,
                                          int variant);
/* Whether a device of compute capability major.minor would load config 0's
 * variant's cubin (1) or its PTX (0): the cubin is used when the bundle has
 * one and its target is exactly sm_<major><minor> (with or without the
 * "a"/"f" suffix). variant -1 is the general code. No driver needed. */
int tegula_rt_kernel_uses_cubin(const tegula_rt_kernel *kernel, int variant,
                                int major, int minor);

/* Tuning configs (docs/tuning.md): a bundle compiled with a comma list in
 * a -D holds one build per combination of template parameters, all with
 * the same signature. Any other bundle has one config, named "". The
 * variant getters above describe config 0's variants. */
int tegula_rt_kernel_num_configs(const tegula_rt_kernel *kernel);
const char *tegula_rt_kernel_config_name(const tegula_rt_kernel *kernel,
                                         int config);

/*--- Binding a launch (no driver) ----------------------------------------*/

/* A binding keeps the arguments of one launch. Setters replace earlier
 * values and undo an earlier check. */
int tegula_rt_binding_create(tegula_rt_kernel *kernel,
                             tegula_rt_binding **binding);
void tegula_rt_binding_free(tegula_rt_binding *binding);
/* Binds a size variable explicitly (the tensor shapes bind the others). */
int tegula_rt_binding_set_dim(tegula_rt_binding *binding, const char *name,
                              int64_t value);
/* A tensor argument: its dtype, shape, strides in elements (NULL:
 * contiguous; other strides only for a tensor the kernel declares
 * `strided`, whose strides are then passed to the kernel) and device
 * address (0: none yet, see set_pointer; an empty tensor may keep 0). A
 * write tensor may be left out entirely: its shape then follows from the
 * others (tegula_rt_binding_param_shape) and only its pointer is set.
 * Nothing is written to a tensor but by the kernel: the elements of an
 * output that it leaves unwritten keep their contents. */
int tegula_rt_binding_set_tensor(tegula_rt_binding *binding, const char *name,
                                 int dtype, int rank, const int64_t *shape,
                                 const int64_t *strides, uint64_t pointer);
int tegula_rt_binding_set_pointer(tegula_rt_binding *binding, const char *name,
                                  uint64_t pointer);
/* The allocation tensor `name` lies in ([base, base + bytes) on the
 * device), when the caller knows it (a torch tensor's storage): the check
 * then refuses a view whose elements reach outside it. bytes 0: unknown. */
int tegula_rt_binding_set_allocation(tegula_rt_binding *binding,
                                     const char *name, uint64_t base,
                                     uint64_t bytes);
/* Scalars: any parameter dtype from an integer, or from a double (f32 only:
 * rounded to nearest; a finite value past f32's range is an error). */
int tegula_rt_binding_set_scalar_int(tegula_rt_binding *binding,
                                     const char *name, int64_t value);
int tegula_rt_binding_set_scalar_float(tegula_rt_binding *binding,
                                       const char *name, double value);
/* Every check that needs no device pointers: dtypes, contiguity, the
 * alignment of the pointers given, then tile-run's binding (size variables,
 * shapes, ranks, scalars, requires, grid) and the variant (for the strides
 * and pointers given; a pack chooses again with its pointers). */
int tegula_rt_binding_check(tegula_rt_binding *binding);
/* After a successful check: tensor `param`'s shape (rank returned; at most
 * `capacity` dims written), the grid, and the variant that will run (-1:
 * the general code; an index into the chosen config's variants). */
int tegula_rt_binding_param_shape(const tegula_rt_binding *binding, int param,
                                  int64_t *shape, int capacity);
int tegula_rt_binding_grid(const tegula_rt_binding *binding, int64_t grid[3]);
int tegula_rt_binding_variant(const tegula_rt_binding *binding);
/* After a successful check: the config that will run ("" for a bundle
 * without configs), how it was chosen ("pinned" by the environment
 * variable TEGULA_CONFIG, "tuned" by the bundle's tuning table for the
 * current context's device, or else another GPU of its architecture, and
 * these sizes, or "default": the first), and
 * the variant's name within that config ("general", "div16"). The check
 * looks up the device only when the bundle has a tuning table; without a
 * driver or a current context no entry applies. */
const char *tegula_rt_binding_config(const tegula_rt_binding *binding);
const char *tegula_rt_binding_config_source(const tegula_rt_binding *binding);
const char *tegula_rt_binding_variant_name(const tegula_rt_binding *binding);
/* Checks if needed, then packs the kernel arguments: every tensor must
 * have an aligned pointer (16 bytes; a strided view's element size),
 * non-null unless the tensor is empty. The variant is chosen again with the
 * pointers packed: a variant that assumes a strided view 16-byte aligned
 * (align(x) in its conditions) does not run on one that is not. Still no
 * driver call. */
int tegula_rt_binding_pack(tegula_rt_binding *binding);

/*--- Launching -----------------------------------------------------------*/

/* Loads the kernel's module (the general code and every variant) in the
 * current context, so that the first launch does no loading. */
int tegula_rt_kernel_prepare(tegula_rt_kernel *kernel);
/* Packs if needed, loads the module in the current context on first use
 * (cached per context and variant) and enqueues the launch on `stream`.
 * An empty grid (a size of 0, so an empty tensor) launches nothing and
 * returns TEGULA_RT_OK without touching the driver. */
int tegula_rt_launch(tegula_rt_binding *binding, tegula_rt_stream stream);
/* The same launch with other tensors of the same shapes, dtypes and
 * strides: `pointers` holds one address per parameter (scalars' ignored). */
int tegula_rt_launch_pointers(tegula_rt_binding *binding,
                              const uint64_t *pointers, int count,
                              tegula_rt_stream stream);
/* tegula_rt_launch_pointers for strided views that may lie in other
 * allocations than the checked ones: `bases` holds, per parameter, the
 * address of the allocation its view lies in (0: keep the one set), of the
 * size tegula_rt_binding_set_allocation gave; each view is checked against
 * it before the launch, as at the first check. */
int tegula_rt_launch_views(tegula_rt_binding *binding, const uint64_t *pointers,
                           const uint64_t *bases, int count,
                           tegula_rt_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* TEGULA_TEGULA_RT_H */
