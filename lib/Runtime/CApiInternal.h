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
#include "tegula/Runtime/Tuning.h"
#include "tegula/tegula_rt.h"

#include <memory>
#include <string>
#include <vector>

namespace tegula::rt::capi {

/// Sets the thread's last error and returns `status`.
int fail(int status, std::string message);
/// Clears the thread's last error and returns TEGULA_RT_OK.
int ok();

/// A module loaded in one context for one config and variant (-1: the
/// config's general code); LoadedKernel chose its cubin or PTX.
struct LoadedImage {
  cu::Context context = nullptr;
  int config = 0, variant = -1;
  std::unique_ptr<LoadedKernel> kernel;
};

/// Finds or loads the image of `config`'s `variant` in the current
/// context; `status` says why not (no driver, no context, a driver
/// failure).
LoadedImage *findOrLoad(tegula_rt_kernel &kernel, int config, int variant,
                        int &status, std::string &error);
/// The name and architecture ("sm_90") of the current context's device
/// (both "" without a driver or a context), for tuned configs.
void currentDeviceIdentity(std::string &name, std::string &arch);
/// The current context, or null with `status` and `error` (no driver).
cu::Context currentContext(int &status, std::string &error);
const CudaDriver &driver();

} // namespace tegula::rt::capi

struct tegula_rt_kernel {
  tegula_rt_library *library = nullptr;
  tegula::rt::Bundle bundle;
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
    /// The allocation the view must lie in (bytes 0: not known).
    uint64_t allocationBase = 0, allocationBytes = 0;
  };
  tegula_rt_kernel *kernel = nullptr;
  std::vector<Tensor> tensors; // per parameter
  tegula::rt::BindingInputs inputs;
  tegula::rt::LaunchPlan plan;
  tegula::rt::ArgumentPack pack;
  /// How the config of the last check was chosen (docs/tuning.md).
  tegula::rt::ConfigChoice choice;
  bool checked = false, packed = false;
  /// Each strided view's align(x) at the last pack (empty after a check):
  /// a pack whose views keep theirs keeps the variant without binding them
  /// again (1.9 of a pack's 2.3 us on the development machine, stop 41).
  std::vector<int64_t> packedAligns;
  /// The image of the last launch, reused while the context is the same.
  tegula::rt::cu::Context lastContext = nullptr;
  tegula::rt::capi::LoadedImage *lastImage = nullptr;
};

#endif // TEGULA_LIB_RUNTIME_CAPIINTERNAL_H
