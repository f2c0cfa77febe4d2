//===- Launcher.cpp - tile-run's buffers and timing around a kernel -----===//

#include "tegula/Runtime/Launcher.h"

#include <algorithm>

namespace tegula::rt {

Launcher::~Launcher() {
  // Best effort: the process is about to exit anyway.
  for (cu::DevicePtr p : buffers)
    if (p)
      d.memFree(p);
}

bool Launcher::upload(const std::vector<HostTensor> &tensors,
                      std::string &error) {
  buffers.assign(bundle.params.size(), 0);
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    if (!bundle.params[i].isTensor)
      continue;
    // cuMemAlloc rejects 0 bytes; a 16-byte buffer keeps the address valid.
    size_t size = std::max<size_t>(tensors[i].bytes.size(), 16);
    if (!d.check(d.memAlloc(&buffers[i], size), "cuMemAlloc", error))
      return false;
    if (!tensors[i].bytes.empty() &&
        !d.check(d.memcpyHtoD(buffers[i], tensors[i].bytes.data(),
                              tensors[i].bytes.size()),
                 "cuMemcpyHtoD", error))
      return false;
  }
  return kernel.pack(plan, buffers, args, error);
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
