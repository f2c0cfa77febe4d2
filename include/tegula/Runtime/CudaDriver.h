//===- CudaDriver.h - The CUDA Driver API, loaded at run time ---*- C++ -*-===//
//
// tile-run opens libcuda.so.1 with dlopen instead of linking it, so the
// binary starts (and reports clearly) on a machine without an NVIDIA driver,
// and needs no CUDA toolkit to build. Only the handful of types and enum
// values used here are declared; they are stable parts of the driver ABI.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_CUDADRIVER_H
#define TEGULA_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tegula::rt {

namespace cu {
using Result = int;
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Event = struct CUevent_st *;
using Stream = struct CUstream_st *;

constexpr Result Success = 0;
constexpr int AttrMultiprocessorCount = 16;
constexpr int AttrComputeCapabilityMajor = 75;
constexpr int AttrComputeCapabilityMinor = 76;
constexpr int AttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int FuncAttrMaxThreadsPerBlock = 0;
constexpr int FuncAttrSharedSizeBytes = 1;
constexpr int FuncAttrNumRegs = 4;
constexpr int FuncAttrMaxDynamicSharedSizeBytes = 8;
constexpr int JitInfoLogBuffer = 3;
constexpr int JitInfoLogBufferSizeBytes = 4;
constexpr int JitErrorLogBuffer = 5;
constexpr int JitErrorLogBufferSizeBytes = 6;
} // namespace cu

/// Function pointers into libcuda.so.1, and a checker that turns a result
/// into "CALL failed: CUDA_ERROR_NAME (description)".
class CudaDriver {
public:
  /// dlopen("libcuda.so.1") and resolve every entry point used.
  bool load(std::string &error);
  /// Formats a failed call; returns false when `result` is not success.
  bool check(cu::Result result, const char *call, std::string &error) const;

  cu::Result (*init)(unsigned) = nullptr;
  cu::Result (*driverGetVersion)(int *) = nullptr;
  cu::Result (*deviceGetCount)(int *) = nullptr;
  cu::Result (*deviceGet)(cu::Device *, int) = nullptr;
  cu::Result (*deviceGetName)(char *, int, cu::Device) = nullptr;
  cu::Result (*deviceGetAttribute)(int *, int, cu::Device) = nullptr;
  cu::Result (*primaryCtxRetain)(cu::Context *, cu::Device) = nullptr;
  cu::Result (*primaryCtxRelease)(cu::Device) = nullptr;
  cu::Result (*ctxSetCurrent)(cu::Context) = nullptr;
  cu::Result (*ctxSynchronize)() = nullptr;
  cu::Result (*moduleLoadDataEx)(cu::Module *, const void *, unsigned, int *,
                                 void **) = nullptr;
  cu::Result (*moduleUnload)(cu::Module) = nullptr;
  cu::Result (*moduleGetFunction)(cu::Function *, cu::Module,
                                  const char *) = nullptr;
  cu::Result (*funcGetAttribute)(int *, int, cu::Function) = nullptr;
  cu::Result (*funcSetAttribute)(cu::Function, int, int) = nullptr;
  cu::Result (*memAlloc)(cu::DevicePtr *, size_t) = nullptr;
  cu::Result (*memFree)(cu::DevicePtr) = nullptr;
  cu::Result (*memcpyHtoD)(cu::DevicePtr, const void *, size_t) = nullptr;
  cu::Result (*memcpyDtoH)(void *, cu::DevicePtr, size_t) = nullptr;
  cu::Result (*launchKernel)(cu::Function, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, cu::Stream,
                             void **, void **) = nullptr;
  cu::Result (*eventCreate)(cu::Event *, unsigned) = nullptr;
  cu::Result (*eventRecord)(cu::Event, cu::Stream) = nullptr;
  cu::Result (*eventSynchronize)(cu::Event) = nullptr;
  cu::Result (*eventElapsedTime)(float *, cu::Event, cu::Event) = nullptr;
  cu::Result (*eventDestroy)(cu::Event) = nullptr;
  cu::Result (*getErrorName)(cu::Result, const char **) = nullptr;
  cu::Result (*getErrorString)(cu::Result, const char **) = nullptr;

private:
  void *handle = nullptr;
};

/// The first GPU with its primary context made current.
struct GpuDevice {
  cu::Device device = 0;
  cu::Context context = nullptr;
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  int smCount = 0;
  int sharedOptin = 0;
  int driverVersion = 0;
};

/// Fills `device`'s name, compute capability, SM count and opt-in shared
/// memory for `device.device`.
bool describeDevice(const CudaDriver &driver, GpuDevice &device,
                    std::string &error);

/// cuInit, device 0, its attributes and its primary context.
bool openDevice(const CudaDriver &driver, GpuDevice &device,
                std::string &error);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_CUDADRIVER_H
