//===- CudaDriver.cpp - The CUDA Driver API, loaded at run time -----------===//

#include "tegula/Runtime/CudaDriver.h"

#include <dlfcn.h>

#include <type_traits>

namespace tegula::rt {

bool CudaDriver::load(std::string &error) {
  // Only the driver's own soname: the toolkit's stub libcuda.so would load
  // and then fail every call with a confusing message.
  handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    error = std::string("no CUDA driver: cannot load libcuda.so.1 (") +
            (why ? why : "unknown reason") +
            "); tile-run needs a machine with an NVIDIA GPU and its driver";
    return false;
  }
  bool ok = true;
  auto resolve = [&](auto &fn, const char *name,
                     const char *fallback = nullptr) {
    void *sym = dlsym(handle, name);
    if (!sym && fallback)
      sym = dlsym(handle, fallback);
    if (!sym && ok) {
      error = std::string("the CUDA driver lacks ") + name +
              "; it is too old for tile-run";
      ok = false;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
  };
  resolve(init, "cuInit");
  resolve(driverGetVersion, "cuDriverGetVersion");
  resolve(deviceGetCount, "cuDeviceGetCount");
  resolve(deviceGet, "cuDeviceGet");
  resolve(deviceGetName, "cuDeviceGetName");
  resolve(deviceGetAttribute, "cuDeviceGetAttribute");
  resolve(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
          "cuDevicePrimaryCtxRelease");
  resolve(ctxSetCurrent, "cuCtxSetCurrent");
  resolve(ctxSynchronize, "cuCtxSynchronize");
  resolve(moduleLoadDataEx, "cuModuleLoadDataEx");
  resolve(moduleUnload, "cuModuleUnload");
  resolve(moduleGetFunction, "cuModuleGetFunction");
  resolve(funcGetAttribute, "cuFuncGetAttribute");
  resolve(funcSetAttribute, "cuFuncSetAttribute");
  resolve(memAlloc, "cuMemAlloc_v2");
  resolve(memFree, "cuMemFree_v2");
  resolve(memcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(memcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(launchKernel, "cuLaunchKernel");
  resolve(eventCreate, "cuEventCreate");
  resolve(eventRecord, "cuEventRecord");
  resolve(eventSynchronize, "cuEventSynchronize");
  resolve(eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  resolve(eventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  resolve(getErrorName, "cuGetErrorName");
  resolve(getErrorString, "cuGetErrorString");
  return ok;
}

bool CudaDriver::check(cu::Result result, const char *call,
                       std::string &error) const {
  if (result == cu::Success)
    return true;
  const char *name = nullptr, *text = nullptr;
  if (!getErrorName || getErrorName(result, &name) != cu::Success || !name)
    name = "unknown error";
  if (!getErrorString || getErrorString(result, &text) != cu::Success || !text)
    text = "no description";
  error = std::string(call) + " failed: " + name + " (" + text + ", code " +
          std::to_string(result) + ")";
  return false;
}

bool describeDevice(const CudaDriver &d, GpuDevice &device,
                    std::string &error) {
  char name[256] = {};
  if (!d.check(d.deviceGetName(name, sizeof(name) - 1, device.device),
               "cuDeviceGetName", error))
    return false;
  device.name = name;
  struct {
    int *out;
    int attr;
  } attrs[] = {{&device.ccMajor, cu::AttrComputeCapabilityMajor},
               {&device.ccMinor, cu::AttrComputeCapabilityMinor},
               {&device.smCount, cu::AttrMultiprocessorCount},
               {&device.sharedOptin, cu::AttrMaxSharedMemoryPerBlockOptin}};
  for (auto &a : attrs)
    if (!d.check(d.deviceGetAttribute(a.out, a.attr, device.device),
                 "cuDeviceGetAttribute", error))
      return false;
  return true;
}

bool openDevice(const CudaDriver &driver, GpuDevice &device,
                std::string &error) {
  const CudaDriver &d = driver;
  if (!d.check(d.init(0), "cuInit", error) ||
      !d.check(d.driverGetVersion(&device.driverVersion), "cuDriverGetVersion",
               error))
    return false;
  int count = 0;
  if (!d.check(d.deviceGetCount(&count), "cuDeviceGetCount", error))
    return false;
  if (count == 0) {
    error = "the CUDA driver sees no GPU";
    return false;
  }
  if (!d.check(d.deviceGet(&device.device, 0), "cuDeviceGet", error) ||
      !describeDevice(d, device, error))
    return false;
  return d.check(d.primaryCtxRetain(&device.context, device.device),
                 "cuDevicePrimaryCtxRetain", error) &&
         d.check(d.ctxSetCurrent(device.context), "cuCtxSetCurrent", error);
}

} // namespace tegula::rt
