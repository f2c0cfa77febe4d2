//===- Launcher.h - Loading, launching and timing a bundle ------*- C++ -*-===//
//
// Everything that talks to the GPU: module load with the JIT log on failure,
// shared-memory limits, device buffers, the parameter ABI of tools.md,
// launches and event timing. Every driver call is checked by name.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_LAUNCHER_H
#define TEGULA_RUNTIME_LAUNCHER_H

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/CudaDriver.h"
#include "tegula/Runtime/Tensor.h"

#include <string>
#include <vector>

namespace tegula::rt {

/// Checks that PTX for `target` (sm_XY, sm_XYa) can run on compute
/// capability major.minor; no driver needed.
bool targetRunsOn(const std::string &target, int major, int minor,
                  std::string &error);

struct FunctionInfo {
  int numRegs = 0;
  int staticShared = 0;
  int maxThreads = 0;
};

class Launcher {
public:
  Launcher(const CudaDriver &driver, const GpuDevice &device,
           const Bundle &bundle, const LaunchPlan &plan)
      : d(driver), device(device), bundle(bundle), plan(plan) {}
  ~Launcher();
  Launcher(const Launcher &) = delete;
  Launcher &operator=(const Launcher &) = delete;

  /// Loads the module, finds the entry and raises its shared-memory limit.
  bool load(std::string &error);
  /// Allocates a device buffer per tensor and copies `tensors` in.
  bool upload(const std::vector<HostTensor> &tensors, std::string &error);
  /// One launch, then a synchronize so faults surface here.
  bool launch(std::string &error);
  /// Copies tensor parameter `index` back into `tensor`.
  bool download(size_t index, HostTensor &tensor, std::string &error);
  /// `warmup` launches, then `rep` launches each timed by a pair of events.
  bool bench(int warmup, int rep, std::vector<float> &millis,
             std::string &error);

  const FunctionInfo &info() const { return funcInfo; }

private:
  bool enqueue(std::string &error);

  const CudaDriver &d;
  const GpuDevice &device;
  const Bundle &bundle;
  const LaunchPlan &plan;
  cu::Module module = nullptr;
  cu::Function function = nullptr;
  FunctionInfo funcInfo;
  std::vector<cu::DevicePtr> buffers; // per parameter, 0 for scalars
  std::vector<uint64_t> slots;        // parameter storage, 8 bytes each
  std::vector<void *> args;
};

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_LAUNCHER_H
