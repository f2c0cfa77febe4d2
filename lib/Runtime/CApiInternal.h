//===- CApiInternal.h - The objects behind tegula_rt.h's handles -*- C++
//-*-===//
//
// Shared by CApi.cpp (bundles, signatures, binding) and CApiLaunch.cpp
// (the driver, the per-context module cache, launches).
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_LIB_RUNTIME_CAPIINTERNAL_H
#define TEGULA_LIB_RUNTIME_CAPIINTERNAL_H

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/LoadedKernel.h"
#include "tegula/tegula_rt.h"

#include <memory>
#include <string>
#include <vector>

namespace tegula::rt::capi {

/// Sets the thread's last error and returns `status`.
int fail(int status, std::string message);
/// Clears the thread's last error and returns TEGULA_RT_OK.
int ok();

/// A module loaded in one context for one variant (-1: the general code).
struct LoadedImage {
  cu::Context context = nullptr;
  int variant = -1;
  bool cubin = false;
  /// The bundle as loaded: a copy whose code is the cubin when one is used
  /// (LoadedKernel loads `ptxOf(variant)`, which the driver takes either
  /// way).
  std::unique_ptr<Bundle> image;
  std::unique_ptr<LoadedKernel> kernel;
};

/// Whether a cubin built for `target` is the right image for compute
/// capability major.minor: the same sm_XY, any suffix.
bool cubinMatches(const std::string &target, int major, int minor);

/// Finds or loads the image of `variant` in the current context; `status`
/// says why not (no driver, no context, a driver failure).
LoadedImage *findOrLoad(tegula_rt_kernel &kernel, int variant, int &status,
                        std::string &error);
/// The current context, or null with `status` and `error` (no driver).
cu::Context currentContext(int &status, std::string &error);
const CudaDriver &driver();

} // namespace tegula::rt::capi

struct tegula_rt_kernel {
  tegula_rt_library *library = nullptr;
  tegula::rt::Bundle bundle;
  /// Per variant + 1 (0: the general code): the cubin's bytes, or empty.
  std::vector<std::string> cubins;
  /// Guarded by the cache lock in CApiLaunch.cpp; entries live as long as
  /// the library, so bindings may keep pointers to them.
  std::vector<std::unique_ptr<tegula::rt::capi::LoadedImage>> images;
};

struct tegula_rt_library {
  std::vector<std::unique_ptr<tegula_rt_kernel>> kernels;
};

struct tegula_rt_binding {
  struct Tensor {
    bool given = false; // a shape, dtype and strides were set
    int dtype = 0;
    std::vector<int64_t> shape, strides; // strides empty: contiguous
    uint64_t pointer = 0;
  };
  tegula_rt_kernel *kernel = nullptr;
  std::vector<Tensor> tensors; // per parameter
  tegula::rt::BindingInputs inputs;
  tegula::rt::LaunchPlan plan;
  tegula::rt::ArgumentPack pack;
  bool checked = false, packed = false;
  /// The image of the last launch, reused while the context is the same.
  tegula::rt::cu::Context lastContext = nullptr;
  tegula::rt::capi::LoadedImage *lastImage = nullptr;
};

#endif // TEGULA_LIB_RUNTIME_CAPIINTERNAL_H
