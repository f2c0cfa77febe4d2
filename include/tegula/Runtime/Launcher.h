//===- Launcher.h - tile-run's buffers and timing around a kernel -*- C++
//-*-===//
//
// What tile-run adds to a LoadedKernel: device buffers it allocates for
// every tensor, one checked launch followed by a synchronize so faults
// surface at once, copies back, and event timing. Every driver call is
// checked by name.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_LAUNCHER_H
#define TEGULA_RUNTIME_LAUNCHER_H

#include "tegula/Runtime/LoadedKernel.h"
#include "tegula/Runtime/Tensor.h"

#include <string>
#include <vector>

namespace tegula::rt {

class Launcher {
public:
  Launcher(const CudaDriver &driver, const GpuDevice &device,
           const Bundle &bundle, const LaunchPlan &plan)
      : d(driver), device(device), plan(plan),
        kernel(driver, bundle, plan.config, plan.variant), bundle(bundle) {}
  ~Launcher();
  Launcher(const Launcher &) = delete;
  Launcher &operator=(const Launcher &) = delete;

  /// Loads the module, finds the entry and raises its shared-memory limit.
  bool load(std::string &error) { return kernel.load(device, error); }
  /// Allocates a device buffer per tensor, copies `tensors` in and packs the
  /// launch's arguments.
  bool upload(const std::vector<HostTensor> &tensors, std::string &error);
  /// One launch, then a synchronize so faults surface here.
  bool launch(std::string &error);
  /// Copies tensor parameter `index` back into `tensor`.
  bool download(size_t index, HostTensor &tensor, std::string &error);
  /// `warmup` launches, then `rep` launches each timed by a pair of events.
  bool bench(int warmup, int rep, std::vector<float> &millis,
             std::string &error);

  const FunctionInfo &info() const { return kernel.info(); }
  const LoadedKernel &loaded() const { return kernel; }

private:
  bool enqueue(std::string &error) {
    return kernel.launch(plan, args, nullptr, error);
  }

  const CudaDriver &d;
  const GpuDevice &device;
  const LaunchPlan &plan;
  LoadedKernel kernel;
  const Bundle &bundle;
  std::vector<cu::DevicePtr> buffers; // per parameter, 0 for scalars
  ArgumentPack args;
};

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_LAUNCHER_H
