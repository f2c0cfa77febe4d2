//===- LoadedKernel.cpp - A bundle's kernel, loaded and launchable --------===//

#include "tegula/Runtime/LoadedKernel.h"

#include "tegula/Runtime/Chip.h"

#include <cstring>

namespace tegula::rt {

bool targetRunsOn(const std::string &target, int major, int minor,
                  std::string &error) {
  std::optional<ChipName> chip = parseChipName(target);
  if (chip && chip->runsOn(major, minor))
    return true;
  error = "the bundle targets " + target + " but the GPU is sm_" +
          std::to_string(major) + std::to_string(minor);
  return false;
}

bool cubinRunsOn(const std::string &target, int major, int minor) {
  std::optional<ChipName> chip = parseChipName(target);
  return chip && chip->cubinRunsOn(major, minor);
}

LoadedKernel::~LoadedKernel() {
  // Best effort: the process is usually about to exit.
  if (module)
    d.moduleUnload(module);
}

bool LoadedKernel::load(const GpuDevice &device, std::string &error) {
  const int64_t sharedBytes = bundle.sharedBytesOf(config, variant);
  if (!targetRunsOn(bundle.target, device.ccMajor, device.ccMinor, error))
    return false;
  if (sharedBytes > device.sharedOptin) {
    error = "the kernel needs " + std::to_string(sharedBytes) +
            " bytes of dynamic shared memory but '" + device.name +
            "' allows at most " + std::to_string(device.sharedOptin) +
            " per block";
    return false;
  }
  // A cubin for exactly this GPU skips the JIT; if the driver refuses it
  // (a newer cubin ABI, a corrupt file), the PTX still runs.
  const std::string &cubin = bundle.cubinOf(config, variant);
  usedCubin = false;
  refusal.clear();
  if (!cubin.empty() &&
      cubinRunsOn(bundle.target, device.ccMajor, device.ccMinor)) {
    if (loadImage(cubin, refusal))
      usedCubin = true;
  }
  if (!usedCubin && !loadImage(bundle.ptxOf(config, variant), error))
    return false;
  if (!d.check(d.moduleGetFunction(&function, module, bundle.entry.c_str()),
               "cuModuleGetFunction", error))
    return false;
  if (!d.check(
          d.funcGetAttribute(&funcInfo.numRegs, cu::FuncAttrNumRegs, function),
          "cuFuncGetAttribute", error) ||
      !d.check(d.funcGetAttribute(&funcInfo.staticShared,
                                  cu::FuncAttrSharedSizeBytes, function),
               "cuFuncGetAttribute", error) ||
      !d.check(d.funcGetAttribute(&funcInfo.maxThreads,
                                  cu::FuncAttrMaxThreadsPerBlock, function),
               "cuFuncGetAttribute", error))
    return false;
  const int64_t threads = bundle.threadsOf(config);
  if (threads > funcInfo.maxThreads) {
    error = "the kernel launches " + std::to_string(threads) +
            " threads per block but its function allows at most " +
            std::to_string(funcInfo.maxThreads) + " (" +
            std::to_string(funcInfo.numRegs) + " registers per thread)";
    return false;
  }
  if (sharedBytes + funcInfo.staticShared > device.sharedOptin) {
    error = "the kernel needs " + std::to_string(sharedBytes) +
            " bytes of dynamic and " + std::to_string(funcInfo.staticShared) +
            " of static shared memory but the device allows at most " +
            std::to_string(device.sharedOptin) + " per block";
    return false;
  }
  // Above 48 KB the function must opt in to more dynamic shared memory.
  if (sharedBytes > 48 * 1024 &&
      !d.check(d.funcSetAttribute(function,
                                  cu::FuncAttrMaxDynamicSharedSizeBytes,
                                  int(sharedBytes)),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", error))
    return false;
  return true;
}

bool LoadedKernel::loadImage(const std::string &image, std::string &error) {
  static char errorLog[16384], infoLog[16384];
  errorLog[0] = infoLog[0] = 0;
  int options[] = {cu::JitErrorLogBuffer, cu::JitErrorLogBufferSizeBytes,
                   cu::JitInfoLogBuffer, cu::JitInfoLogBufferSizeBytes};
  void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog)),
                    infoLog, reinterpret_cast<void *>(sizeof(infoLog))};
  if (!d.check(d.moduleLoadDataEx(&module, image.c_str(), 4, options, values),
               "cuModuleLoadDataEx", error)) {
    module = nullptr;
    if (errorLog[0])
      error += "\nptxas log:\n" + std::string(errorLog);
    return false;
  }
  return true;
}

bool LoadedKernel::pack(const LaunchPlan &plan,
                        const std::vector<cu::DevicePtr> &pointers,
                        ArgumentPack &pack, std::string &error) const {
  pack.slots.clear();
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    uint64_t slot = 0;
    if (p.isTensor) {
      uint64_t alignment = p.alignment();
      if (i >= pointers.size() || pointers[i] % alignment != 0) {
        error = "argument '" + p.name + "' is at a device address that is " +
                "not " + std::to_string(alignment) + "-byte aligned";
        return false;
      }
      slot = pointers[i];
    } else if (p.dtype == DType::F32) {
      std::memcpy(&slot, &plan.scalars[i].f, 4);
    } else if (p.dtype == DType::I64) {
      std::memcpy(&slot, &plan.scalars[i].i, 8);
    } else {
      // i32, and bool as 32 bits (tools.md).
      int32_t v = int32_t(plan.scalars[i].i);
      std::memcpy(&slot, &v, 4);
    }
    pack.slots.push_back(slot);
  }
  for (int32_t v : plan.sizeVarValues) {
    uint64_t slot = 0;
    std::memcpy(&slot, &v, 4);
    pack.slots.push_back(slot);
  }
  for (const std::vector<int64_t> &strides : plan.strides)
    for (int64_t stride : strides)
      pack.slots.push_back(uint64_t(stride));
  // Little-endian: a pointer to the slot is a pointer to its low 32 bits.
  pack.args.clear();
  for (uint64_t &slot : pack.slots)
    pack.args.push_back(&slot);
  return true;
}

bool LoadedKernel::launch(const LaunchPlan &plan, ArgumentPack &pack,
                          cu::Stream stream, std::string &error) const {
  // The driver refuses an empty grid; like PyTorch on empty tensors, an
  // empty launch is done.
  if (plan.launchesNothing())
    return true;
  return d.check(d.launchKernel(function, unsigned(plan.grid[0]),
                                unsigned(plan.grid[1]), unsigned(plan.grid[2]),
                                unsigned(bundle.threadsOf(config)), 1, 1,
                                unsigned(bundle.sharedBytesOf(config, variant)),
                                stream, pack.data(), nullptr),
                 "cuLaunchKernel", error);
}

} // namespace tegula::rt
