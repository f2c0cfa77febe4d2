//===- Launcher.cpp - tile-run's buffers and timing around a kernel -----===//

#include "tegula/Runtime/Launcher.h"

#include "tegula/Runtime/Strides.h"

#include <algorithm>

namespace tegula::rt {

Launcher::~Launcher() {
  // Best effort: the process is about to exit anyway.
  for (cu::DevicePtr p : buffers)
    if (p)
      d.memFree(p);
}

namespace {
/// One element of the poison pattern: what a strided view's gaps hold, so
/// that a write between its elements shows.
std::vector<uint8_t> gapFill(DType dtype) {
  HostTensor one(dtype, {1});
  fillPoison(one);
  return one.bytes;
}
} // namespace

bool Launcher::upload(const std::vector<HostTensor> &tensors,
                      std::string &error) {
  buffers.assign(bundle.params.size(), 0);
  for (size_t i = 0; i < bundle.params.size(); ++i) {
    const Param &param = bundle.params[i];
    if (!param.isTensor)
      continue;
    // A strided tensor lives in the memory its view spans.
    std::vector<uint8_t> spanned;
    if (param.strided)
      spanned = scatterView(tensors[i], plan.strides[i], gapFill(param.dtype));
    const std::vector<uint8_t> &bytes =
        param.strided ? spanned : tensors[i].bytes;
    // cuMemAlloc rejects 0 bytes; a 16-byte buffer keeps the address valid.
    size_t size = std::max<size_t>(bytes.size(), 16);
    if (!d.check(d.memAlloc(&buffers[i], size), "cuMemAlloc", error))
      return false;
    if (!bytes.empty() &&
        !d.check(d.memcpyHtoD(buffers[i], bytes.data(), bytes.size()),
                 "cuMemcpyHtoD", error))
      return false;
  }
  // The variant was chosen assuming views aligned (align(x)); cuMemAlloc's
  // addresses are, but a choice the addresses would change must not run.
  LaunchPlan packed = plan;
  if (!bindAddresses(bundle, buffers, packed)) {
    error = "internal error: the buffers' addresses rule out variant '" +
            bundle.variantName(plan.config, plan.variant) + "'";
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
  const Param &param = bundle.params[index];
  if (param.strided) {
    std::vector<uint8_t> spanned(
        size_t(viewSpan(tensor.shape, plan.strides[index])) *
        dtypeSize(tensor.dtype));
    return d.check(d.memcpyDtoH(spanned.data(), buffers[index], spanned.size()),
                   "cuMemcpyDtoH", error) &&
           gatherView(spanned, plan.strides[index], gapFill(param.dtype),
                      param.name, tensor, error);
  }
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
