//===- CApiLaunch.cpp - tegula_rt.h: the driver, modules and launches -----===//
//
// The driver is opened at the first launch (dlopen, as tile-run does), so
// loading bundles and binding work on machines without one. Modules are
// loaded per context and variant on first use and kept until the library
// is freed; a launch takes the caller's context, stream and pointers and
// never allocates or synchronizes.
//
//===----------------------------------------------------------------------===//

#include "CApiInternal.h"

#include <dlfcn.h>

#include <mutex>
#include <new>

using namespace tegula::rt;
namespace capi = tegula::rt::capi;

namespace {

struct DriverState {
  CudaDriver cuda;
  // Beyond what tile-run needs: the caller's context and its device.
  cu::Result (*ctxGetCurrent)(cu::Context *) = nullptr;
  cu::Result (*ctxGetDevice)(cu::Device *) = nullptr;
  bool ready = false;
  int status = TEGULA_RT_OK;
  std::string error;
};

DriverState &state() {
  static DriverState s;
  return s;
}

/// Guards module loading (LoadedKernel's JIT log buffers are static) and
/// every kernel's list of images.
std::mutex cacheMutex;

/// tile-run's driver messages name tile-run; here the caller is a library.
std::string forLibrary(std::string message) {
  const std::string tool = "tile-run";
  for (size_t at = message.find(tool); at != std::string::npos;
       at = message.find(tool, at))
    message.replace(at, tool.size(), "the tegula runtime");
  return message;
}

bool loadDriver(int &status, std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    DriverState &s = state();
    s.status = TEGULA_RT_ERROR_NO_DRIVER;
    std::string why;
    if (!s.cuda.load(why)) {
      s.error = forLibrary(why);
      return;
    }
    // Already loaded by CudaDriver::load: this only finds the handle.
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    s.ctxGetCurrent = reinterpret_cast<decltype(s.ctxGetCurrent)>(
        handle ? dlsym(handle, "cuCtxGetCurrent") : nullptr);
    s.ctxGetDevice = reinterpret_cast<decltype(s.ctxGetDevice)>(
        handle ? dlsym(handle, "cuCtxGetDevice") : nullptr);
    if (!s.ctxGetCurrent || !s.ctxGetDevice) {
      s.error = "the CUDA driver lacks cuCtxGetCurrent or cuCtxGetDevice";
      return;
    }
    if (!s.cuda.check(s.cuda.init(0), "cuInit", why)) {
      s.error = why;
      return;
    }
    s.ready = true;
    s.status = TEGULA_RT_OK;
  });
  if (!state().ready) {
    status = state().status;
    error = state().error;
  }
  return state().ready;
}

/// The device of the current context, as LoadedKernel::load wants it.
bool describeCurrentDevice(GpuDevice &device, std::string &error) {
  const DriverState &s = state();
  return s.cuda.check(s.ctxGetDevice(&device.device), "cuCtxGetDevice",
                      error) &&
         describeDevice(s.cuda, device, error);
}

/// Loads config `config`'s `variant` for the current context's device
/// (LoadedKernel picks the cubin or the PTX).
std::unique_ptr<capi::LoadedImage> loadImage(tegula_rt_kernel &kernel,
                                             cu::Context context, int config,
                                             int variant, std::string &error) {
  GpuDevice device;
  if (!describeCurrentDevice(device, error))
    return nullptr;
  auto image = std::make_unique<capi::LoadedImage>();
  image->context = context;
  image->config = config;
  image->variant = variant;
  image->kernel = std::make_unique<LoadedKernel>(state().cuda, kernel.bundle,
                                                 config, variant);
  if (!image->kernel->load(device, error))
    return nullptr;
  return image;
}

int launchPacked(tegula_rt_binding *binding, tegula_rt_stream stream) {
  // An empty grid (an empty tensor) launches nothing: no driver, no module.
  if (binding->plan.launchesNothing())
    return capi::ok();
  int status = TEGULA_RT_OK;
  std::string error;
  cu::Context context = capi::currentContext(status, error);
  if (!context)
    return capi::fail(status, error);
  capi::LoadedImage *image = binding->lastImage;
  if (!image || binding->lastContext != context ||
      image->config != binding->plan.config ||
      image->variant != binding->plan.variant) {
    image = capi::findOrLoad(*binding->kernel, binding->plan.config,
                             binding->plan.variant, status, error);
    if (!image)
      return capi::fail(status, error);
    binding->lastContext = context;
    binding->lastImage = image;
  }
  if (!image->kernel->launch(binding->plan, binding->pack,
                             reinterpret_cast<cu::Stream>(stream), error))
    return capi::fail(TEGULA_RT_ERROR_DRIVER, error);
  return capi::ok();
}

} // namespace

const CudaDriver &capi::driver() { return state().cuda; }

cu::Context capi::currentContext(int &status, std::string &error) {
  if (!loadDriver(status, error))
    return nullptr;
  cu::Context context = nullptr;
  if (!state().cuda.check(state().ctxGetCurrent(&context), "cuCtxGetCurrent",
                          error)) {
    status = TEGULA_RT_ERROR_DRIVER;
    return nullptr;
  }
  if (!context) {
    status = TEGULA_RT_ERROR_NO_CONTEXT;
    error = "no CUDA context is current on this thread: make one current "
            "first (cuCtxSetCurrent, cudaSetDevice, or any CUDA work in "
            "PyTorch)";
  }
  return context;
}

void capi::currentDeviceIdentity(std::string &name, std::string &arch) {
  name.clear();
  arch.clear();
  int status = TEGULA_RT_OK;
  std::string error;
  cu::Context context = currentContext(status, error);
  GpuDevice device;
  if (!context || !describeCurrentDevice(device, error))
    return;
  name = device.name;
  arch = archName(device.ccMajor, device.ccMinor);
}

capi::LoadedImage *capi::findOrLoad(tegula_rt_kernel &kernel, int config,
                                    int variant, int &status,
                                    std::string &error) {
  cu::Context context = currentContext(status, error);
  if (!context)
    return nullptr;
  std::lock_guard<std::mutex> lock(cacheMutex);
  for (const auto &image : kernel.images)
    if (image->context == context && image->config == config &&
        image->variant == variant)
      return image.get();
  std::unique_ptr<LoadedImage> image =
      loadImage(kernel, context, config, variant, error);
  if (!image) {
    status = TEGULA_RT_ERROR_DRIVER;
    return nullptr;
  }
  kernel.images.push_back(std::move(image));
  return kernel.images.back().get();
}

extern "C" {

void tegula_rt_library_free(tegula_rt_library *library) {
  // Unloading modules (LoadedKernel's destructor) shares the lock with
  // loading them.
  std::lock_guard<std::mutex> lock(cacheMutex);
  delete library;
}

int tegula_rt_kernel_prepare(tegula_rt_kernel *kernel) {
  if (!kernel)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null kernel");
  try {
    int status = TEGULA_RT_OK;
    std::string error;
    const Bundle &b = kernel->bundle;
    for (int c = 0; c < int(b.configs.size()); ++c)
      for (int v = -1; v < int(b.configs[size_t(c)].variants.size()); ++v)
        if (!capi::findOrLoad(*kernel, c, v, status, error))
          return capi::fail(status, error);
    return capi::ok();
  } catch (const std::bad_alloc &) {
    return capi::fail(TEGULA_RT_ERROR_INTERNAL, "out of host memory");
  }
}

int tegula_rt_launch(tegula_rt_binding *binding, tegula_rt_stream stream) {
  if (!binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding");
  if (!binding->packed)
    if (int status = tegula_rt_binding_pack(binding))
      return status;
  try {
    return launchPacked(binding, stream);
  } catch (const std::bad_alloc &) {
    return capi::fail(TEGULA_RT_ERROR_INTERNAL, "out of host memory");
  }
}

int tegula_rt_launch_pointers(tegula_rt_binding *binding,
                              const uint64_t *pointers, int count,
                              tegula_rt_stream stream) {
  return tegula_rt_launch_views(binding, pointers, nullptr, count, stream);
}

int tegula_rt_launch_views(tegula_rt_binding *binding, const uint64_t *pointers,
                           const uint64_t *bases, int count,
                           tegula_rt_stream stream) {
  if (!binding || (!pointers && count > 0))
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding or pointers");
  if (count != int(binding->tensors.size()))
    return capi::fail(TEGULA_RT_ERROR_USAGE,
                      "expected " + std::to_string(binding->tensors.size()) +
                          " pointers (one per parameter), got " +
                          std::to_string(count));
  // Packing checks every view against its allocation (checkAllocations),
  // so a new base needs no new binding check, only a new pack.
  for (int i = 0; i < count; ++i) {
    tegula_rt_binding::Tensor &t = binding->tensors[size_t(i)];
    t.pointer = pointers[i];
    if (bases && bases[i])
      t.allocationBase = bases[i];
  }
  binding->packed = false;
  return tegula_rt_launch(binding, stream);
}

} // extern "C"
