//===- Launcher.cpp - Loading, launching and timing a bundle --------------===//

#include "tegula/Runtime/Launcher.h"

#include <cctype>
#include <cstring>

namespace tegula::rt {

bool targetRunsOn(const std::string &target, int major, int minor,
                  std::string &error) {
  size_t i = 3;
  int number = 0;
  while (i < target.size() && std::isdigit((unsigned char)target[i]))
    number = number * 10 + (target[i++] - '0');
  std::string suffix = target.substr(i);
  int tMajor = number / 10, tMinor = number % 10;
  bool ok;
  if (suffix == "a") // Arch-specific features: that exact GPU only.
    ok = major == tMajor && minor == tMinor;
  else if (suffix == "f") // Family: same major, same or newer minor.
    ok = major == tMajor && minor >= tMinor;
  else
    ok = major * 10 + minor >= number;
  if (!ok)
    error = "the bundle targets " + target + " but the GPU is sm_" +
            std::to_string(major) + std::to_string(minor);
  return ok;
}

Launcher::~Launcher() {
  // Best effort: the process is about to exit anyway.
  for (cu::DevicePtr p : buffers)
    if (p)
      d.memFree(p);
  if (module)
    d.moduleUnload(module);
}

bool Launcher::load(std::string &error) {
  if (!targetRunsOn(bundle.target, device.ccMajor, device.ccMinor, error))
    return false;
  if (bundle.sharedBytes > device.sharedOptin) {
    error = "the kernel needs " + std::to_string(bundle.sharedBytes) +
            " bytes of dynamic shared memory but '" + device.name +
            "' allows at most " + std::to_string(device.sharedOptin) +
            " per block";
    return false;
  }
  static char errorLog[16384], infoLog[16384];
  errorLog[0] = infoLog[0] = 0;
  int options[] = {cu::JitErrorLogBuffer, cu::JitErrorLogBufferSizeBytes,
                   cu::JitInfoLogBuffer, cu::JitInfoLogBufferSizeBytes};
  void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog)),
                    infoLog, reinterpret_cast<void *>(sizeof(infoLog))};
  if (!d.check(
          d.moduleLoadDataEx(&module, bundle.ptx.c_str(), 4, options, values),
          "cuModuleLoadDataEx", error)) {
    module = nullptr;
    if (errorLog[0])
      error += "\nptxas log:\n" + std::string(errorLog);
    return false;
  }
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
  if (bundle.threads > funcInfo.maxThreads) {
    error = "the kernel launches " + std::to_string(bundle.threads) +
            " threads per block but its function allows at most " +
            std::to_string(funcInfo.maxThreads) + " (" +
            std::to_string(funcInfo.numRegs) + " registers per thread)";
    return false;
  }
  if (bundle.sharedBytes + funcInfo.staticShared > device.sharedOptin) {
    error = "the kernel needs " + std::to_string(bundle.sharedBytes) +
            " bytes of dynamic and " + std::to_string(funcInfo.staticShared) +
            " of static shared memory but the device allows at most " +
            std::to_string(device.sharedOptin) + " per block";
    return false;
  }
  // Above 48 KB the function must opt in to more dynamic shared memory.
  if (bundle.sharedBytes > 48 * 1024 &&
      !d.check(d.funcSetAttribute(function,
                                  cu::FuncAttrMaxDynamicSharedSizeBytes,
                                  int(bundle.sharedBytes)),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", error))
    return false;
  return true;
}

bool Launcher::upload(const std::vector<HostTensor> &tensors,
                      std::string &error) {
  buffers.assign(bundle.params.size(), 0);
  slots.clear();
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &p = bundle.params[i];
    uint64_t slot = 0;
    if (p.isTensor) {
      // cuMemAlloc rejects 0 bytes; a 16-byte buffer keeps the address valid.
      size_t size = std::max<size_t>(tensors[i].bytes.size(), 16);
      if (!d.check(d.memAlloc(&buffers[i], size), "cuMemAlloc", error))
        return false;
      if (buffers[i] % 16 != 0) {
        error = "argument '" + p.name + "' is at a device address that is " +
                "not 16-byte aligned";
        return false;
      }
      if (!tensors[i].bytes.empty() &&
          !d.check(d.memcpyHtoD(buffers[i], tensors[i].bytes.data(),
                                tensors[i].bytes.size()),
                   "cuMemcpyHtoD", error))
        return false;
      slot = buffers[i];
    } else if (p.dtype == DType::F32) {
      std::memcpy(&slot, &plan.scalars[i].f, 4);
    } else if (p.dtype == DType::I64) {
      std::memcpy(&slot, &plan.scalars[i].i, 8);
    } else {
      int32_t v = int32_t(plan.scalars[i].i);
      std::memcpy(&slot, &v, 4);
    }
    slots.push_back(slot);
  }
  for (int32_t v : plan.sizeVarValues) {
    uint64_t slot = 0;
    std::memcpy(&slot, &v, 4);
    slots.push_back(slot);
  }
  // Little-endian: a pointer to the slot is a pointer to its low 32 bits.
  args.clear();
  for (uint64_t &slot : slots)
    args.push_back(&slot);
  return true;
}

bool Launcher::enqueue(std::string &error) {
  return d.check(d.launchKernel(function, unsigned(plan.grid[0]),
                                unsigned(plan.grid[1]), unsigned(plan.grid[2]),
                                unsigned(bundle.threads), 1, 1,
                                unsigned(bundle.sharedBytes), nullptr,
                                args.data(), nullptr),
                 "cuLaunchKernel", error);
}

bool Launcher::launch(std::string &error) {
  return enqueue(error) &&
         d.check(d.ctxSynchronize(), "cuCtxSynchronize (after the launch)",
                 error);
}

bool Launcher::download(size_t index, HostTensor &tensor, std::string &error) {
  if (tensor.bytes.empty())
    return true;
  return d.check(
      d.memcpyDtoH(tensor.bytes.data(), buffers[index], tensor.bytes.size()),
      "cuMemcpyDtoH", error);
}

bool Launcher::bench(int warmup, int rep, std::vector<float> &millis,
                     std::string &error) {
  for (int i = 0; i < warmup; ++i)
    if (!enqueue(error))
      return false;
  if (!d.check(d.ctxSynchronize(), "cuCtxSynchronize (after warm-up)", error))
    return false;
  std::vector<cu::Event> events(size_t(2 * rep), nullptr);
  bool ok = true;
  for (cu::Event &e : events)
    ok = ok && d.check(d.eventCreate(&e, 0), "cuEventCreate", error);
  for (int i = 0; ok && i < rep; ++i)
    ok = d.check(d.eventRecord(events[size_t(2 * i)], nullptr), "cuEventRecord",
                 error) &&
         enqueue(error) &&
         d.check(d.eventRecord(events[size_t(2 * i + 1)], nullptr),
                 "cuEventRecord", error);
  ok = ok &&
       d.check(d.ctxSynchronize(), "cuCtxSynchronize (after timing)", error);
  millis.clear();
  for (int i = 0; ok && i < rep; ++i) {
    float ms = 0;
    ok = d.check(d.eventElapsedTime(&ms, events[size_t(2 * i)],
                                    events[size_t(2 * i + 1)]),
                 "cuEventElapsedTime", error);
    millis.push_back(ms);
  }
  for (cu::Event e : events)
    if (e)
      d.eventDestroy(e);
  return ok;
}

} // namespace tegula::rt
