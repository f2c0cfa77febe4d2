//===- LoadedKernel.h - A bundle's kernel, loaded and launchable -*- C++
//-*-===//
//
// The part of running a bundle that any launcher needs (tile-run, the
// coming C ABI and Python runtime): load the module in the current context,
// find the entry, raise its shared-memory limit, pack arguments from a
// checked binding and device pointers the caller owns, and launch on the
// caller's stream. It never allocates device memory and never synchronizes.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_LOADEDKERNEL_H
#define TEGULA_RUNTIME_LOADEDKERNEL_H

#include "tegula/Runtime/Binding.h"
#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/CudaDriver.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tegula::rt {

/// Checks that PTX for `target` (sm_XY, sm_XYa) can run on compute
/// capability major.minor; no driver needed.
bool targetRunsOn(const std::string &target, int major, int minor,
                  std::string &error);

/// Whether a cubin built for `target` is the right image for compute
/// capability major.minor: the same sm_XY exactly, any suffix.
bool cubinRunsOn(const std::string &target, int major, int minor);

struct FunctionInfo {
  int numRegs = 0;
  int staticShared = 0;
  int maxThreads = 0;
};

/// The kernel parameters of one launch, in the ABI of tools.md: 8-byte
/// slots (pointers, i64; 4-byte values in their low half) and pointers to
/// them for cuLaunchKernel.
class ArgumentPack {
public:
  ArgumentPack() = default;
  ArgumentPack(const ArgumentPack &) = delete;
  ArgumentPack &operator=(const ArgumentPack &) = delete;
  void **data() { return args.data(); }

private:
  friend class LoadedKernel;
  std::vector<uint64_t> slots;
  std::vector<void *> args;
};

class LoadedKernel {
public:
  /// Config `config`'s general code, or its variant `variant` (LaunchPlan's
  /// choices).
  LoadedKernel(const CudaDriver &driver, const Bundle &bundle, int config = 0,
               int variant = -1)
      : d(driver), bundle(bundle), config(config), variant(variant) {}
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel &) = delete;
  LoadedKernel &operator=(const LoadedKernel &) = delete;

  /// Loads the module on `device` (the current context's), finds the entry
  /// and raises its shared-memory limit, checking the bundle against both.
  /// The image is the cubin when the bundle has one for exactly this GPU's
  /// compute capability, else (or if the driver refuses it) the PTX.
  bool load(const GpuDevice &device, std::string &error);
  /// Packs the arguments of a launch: `pointers` holds a device address for
  /// each tensor parameter (indexed by parameter; ignored for scalars), each
  /// 16-byte aligned; scalars and size variables come from `plan`.
  bool pack(const LaunchPlan &plan, const std::vector<cu::DevicePtr> &pointers,
            ArgumentPack &pack, std::string &error) const;
  /// Enqueues one launch on `stream` (null: the default stream).
  bool launch(const LaunchPlan &plan, ArgumentPack &pack, cu::Stream stream,
              std::string &error) const;

  const FunctionInfo &info() const { return funcInfo; }
  /// After load(): whether the cubin was loaded, and why a cubin that
  /// matched was refused ("" when none was).
  bool loadedCubin() const { return usedCubin; }
  const std::string &cubinRefusal() const { return refusal; }
  /// "cubin" or "ptx (JIT)", as tile-run prints it.
  const char *imageName() const { return usedCubin ? "cubin" : "ptx (JIT)"; }

private:
  bool loadImage(const std::string &image, std::string &error);

  const CudaDriver &d;
  const Bundle &bundle;
  int config, variant;
  bool usedCubin = false;
  std::string refusal;
  cu::Module module = nullptr;
  cu::Function function = nullptr;
  FunctionInfo funcInfo;
};

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_LOADEDKERNEL_H
