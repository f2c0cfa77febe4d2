//===- CApi.cpp - tegula_rt.h: bundles, signatures and binding ------------===//
//
// Everything here works without a driver: loading and validating bundles
// (rt::loadBundle, as tile-run), the signature getters, and binding a
// launch with rt::bindAndCheck (tile-run's checks and messages) plus what a
// caller's memory adds: dtypes, strides and pointer alignment.
//
//===----------------------------------------------------------------------===//

#include "CApiInternal.h"

#include "tegula/Runtime/File.h"
#include "tegula/Runtime/Strides.h"
#include "tegula/Runtime/Tensor.h"
#include "tegula/Runtime/Text.h"

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>

using namespace tegula::rt;
namespace capi = tegula::rt::capi;

namespace {
thread_local std::string lastError;

static_assert(TEGULA_RT_F16 == int(DType::F16) &&
                  TEGULA_RT_BF16 == int(DType::BF16) &&
                  TEGULA_RT_F32 == int(DType::F32) &&
                  TEGULA_RT_I32 == int(DType::I32) &&
                  TEGULA_RT_I64 == int(DType::I64) &&
                  TEGULA_RT_BOOL == int(DType::Bool),
              "tegula_rt_dtype follows rt::DType");

bool validDType(int dtype) {
  return dtype >= TEGULA_RT_F16 && dtype <= TEGULA_RT_BOOL;
}

/// Runs an entry point's body, turning an escaping exception (out of
/// memory, mostly) into a status: nothing may unwind into C.
template <typename F> int guarded(F &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return capi::fail(TEGULA_RT_ERROR_INTERNAL, "out of host memory");
  } catch (const std::exception &e) {
    return capi::fail(TEGULA_RT_ERROR_INTERNAL,
                      std::string("internal error: ") + e.what());
  }
}

bool loadKernel(tegula_rt_library &library, const std::string &jsonPath,
                std::string &error) {
  auto kernel = std::make_unique<tegula_rt_kernel>();
  kernel->library = &library;
  if (!loadBundle(jsonPath, kernel->bundle, error))
    return false;
  for (const auto &other : library.kernels)
    if (other->bundle.kernel == kernel->bundle.kernel) {
      error = "bundles '" + other->bundle.jsonPath + "' and '" + jsonPath +
              "' both hold a kernel named '" + kernel->bundle.kernel + "'";
      return false;
    }
  library.kernels.push_back(std::move(kernel));
  return true;
}

const Param *paramAt(const tegula_rt_kernel *kernel, int param) {
  if (!kernel) {
    capi::fail(TEGULA_RT_ERROR_USAGE, "null kernel");
    return nullptr;
  }
  if (param < 0 || size_t(param) >= kernel->bundle.params.size()) {
    capi::fail(TEGULA_RT_ERROR_USAGE, "kernel '" + kernel->bundle.kernel +
                                          "' has no parameter " +
                                          std::to_string(param));
    return nullptr;
  }
  return &kernel->bundle.params[size_t(param)];
}

/// The tensor parameter `name` of the binding's kernel, or -1 with the
/// message bindAndCheck gives for an --in file of that name.
int tensorIndex(const tegula_rt_binding *binding, const char *name) {
  const Bundle &b = binding->kernel->bundle;
  const Param *p = name ? b.findParam(name) : nullptr;
  if (!p || !p->isTensor) {
    capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK,
               "'" + abbreviate(name ? name : "(null)") +
                   "' is not a tensor parameter of '" + b.kernel + "'");
    return -1;
  }
  return int(p - b.params.data());
}

/// Whether a tensor of `shape` has no elements.
bool isEmpty(const std::vector<int64_t> &shape) {
  return std::find(shape.begin(), shape.end(), 0) != shape.end();
}

std::string formatStrides(const std::vector<int64_t> &strides) {
  return formatShape(strides);
}

/// A view given an allocation must lie inside it: checked on the plan's
/// shape and strides (bounded by bindAndCheck, so nothing overflows) for
/// the pointer about to be packed, so that moving a pointer after a check
/// cannot skip it. An empty view or no pointer yet reaches no memory.
bool checkAllocation(const Param &p, const tegula_rt_binding::Tensor &t,
                     const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &strides, uint64_t pointer,
                     std::string &error) {
  if (!t.allocationBytes || !pointer || isEmpty(shape))
    return true;
  uint64_t bytes = uint64_t(viewSpan(shape, strides)) * dtypeSize(p.dtype);
  if (pointer < t.allocationBase ||
      pointer - t.allocationBase > t.allocationBytes ||
      bytes > t.allocationBytes - (pointer - t.allocationBase)) {
    error = "argument '" + p.name + "' with shape " + formatShape(shape) +
            " and strides " + formatStrides(strides) + " spans " +
            std::to_string(bytes) + " bytes from byte " +
            std::to_string(int64_t(pointer - t.allocationBase)) +
            " of its allocation, which holds " +
            std::to_string(t.allocationBytes) + " bytes";
    return false;
  }
  return true;
}

/// checkAllocation for every tensor of a checked binding, at the pointers
/// given (`pointers`, one per parameter, or the tensors' own).
bool checkAllocations(const tegula_rt_binding &binding,
                      const std::vector<cu::DevicePtr> *pointers,
                      std::string &error) {
  const Bundle &b = binding.kernel->bundle;
  for (size_t i = 0; i < b.params.size(); ++i) {
    if (!b.params[i].isTensor)
      continue;
    const std::vector<int64_t> &shape = binding.plan.shapes[i];
    std::vector<int64_t> strides =
        b.params[i].strided ? binding.plan.strides[i] : rowMajorStrides(shape);
    uint64_t pointer = pointers ? (*pointers)[i] : binding.tensors[i].pointer;
    if (!checkAllocation(b.params[i], binding.tensors[i], shape, strides,
                         pointer, error))
      return false;
  }
  return true;
}

/// The checks that a caller's memory needs beyond tile-run's: dtype,
/// row-major contiguity unless the tensor is strided (strides of size-1
/// dims do not matter), and the alignment of a pointer given (16 bytes; a
/// strided view's element size). The allocation is checked after binding
/// (checkAllocations).
bool checkTensor(const Param &p, const tegula_rt_binding::Tensor &t,
                 std::string &error) {
  if (t.dtype != int(p.dtype)) {
    error = "argument '" + p.name + "' has dtype " + dtypeName(DType(t.dtype)) +
            " but the kernel expects " + dtypeName(p.dtype);
    return false;
  }
  if (!t.strides.empty() && !p.strided) {
    std::vector<int64_t> expected = rowMajorStrides(t.shape);
    bool contiguous = true, empty = false;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      empty = empty || t.shape[i] == 0;
      contiguous =
          contiguous && (t.shape[i] == 1 || t.strides[i] == expected[i]);
    }
    if (!contiguous && !empty) {
      error = "argument '" + p.name + "' with shape " + formatShape(t.shape) +
              " has strides " + formatStrides(t.strides) +
              " (in elements) but the kernel expects a contiguous row-major "
              "tensor, strides " +
              formatStrides(expected);
      return false;
    }
  }
  uint64_t alignment = p.alignment();
  if (t.pointer % alignment != 0) {
    char address[32];
    std::snprintf(address, sizeof(address), "0x%" PRIx64, t.pointer);
    error = "argument '" + p.name + "' is at a device address that is not " +
            std::to_string(alignment) + "-byte aligned (" + address + ")";
    return false;
  }
  return true;
}

/// The shortest text that strtod reads back as `value`, for messages.
std::string shortestText(double value) {
  char text[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value || std::isnan(value))
      break;
  }
  return text;
}

/// The text parseScalar reads back as exactly `value` rounded to f32, or
/// the double itself when it is past f32's range (so that it reports it).
std::string floatText(double value, DType type) {
  if (type == DType::F32 &&
      !(std::isfinite(value) && std::fabs(value) > FLT_MAX))
    return shortestText(double(float(value)));
  return shortestText(value);
}

/// A getter's answer to a null kernel, with the message set (tegula_rt.h's
/// convention for getters).
template <typename T> T nullKernel(T value) {
  capi::fail(TEGULA_RT_ERROR_USAGE, "null kernel");
  return value;
}

void unknownDType(int dtype) {
  capi::fail(TEGULA_RT_ERROR_USAGE, "unknown dtype " + std::to_string(dtype));
}

/// A binding's arguments changed: check and pack again before a launch.
void invalidate(tegula_rt_binding *binding) {
  binding->checked = binding->packed = false;
}

} // namespace

int capi::fail(int status, std::string message) {
  lastError = std::move(message);
  return status;
}

int capi::ok() {
  lastError.clear();
  return TEGULA_RT_OK;
}

namespace {
/// Runs `update` on tensor parameter `name` of a non-null `binding`, guarded;
/// an unknown name is a launch-check error.
template <typename Update>
int updateTensor(tegula_rt_binding *binding, const char *name,
                 Update &&update) {
  return guarded([&] {
    int index = tensorIndex(binding, name);
    if (index < 0)
      return int(TEGULA_RT_ERROR_LAUNCH_CHECK);
    update(binding->tensors[size_t(index)]);
    return capi::ok();
  });
}
} // namespace

extern "C" {

int tegula_rt_abi_version(void) { return TEGULA_RT_ABI_VERSION; }

const char *tegula_rt_version(void) { return "tegula_rt 0.1 (ABI 2)"; }

const char *tegula_rt_last_error(void) { return lastError.c_str(); }

const char *tegula_rt_dtype_name(int dtype) {
  if (!validDType(dtype))
    return unknownDType(dtype), nullptr;
  return dtypeName(DType(dtype));
}

int tegula_rt_dtype_size(int dtype) {
  if (!validDType(dtype))
    return unknownDType(dtype), -1;
  return int(dtypeSize(DType(dtype)));
}

int tegula_rt_library_load(const char *path, tegula_rt_library **library) {
  if (!library)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null library out-pointer");
  *library = nullptr;
  if (!path)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null bundle path");
  return guarded([&] {
    namespace fs = std::filesystem;
    auto result = std::make_unique<tegula_rt_library>();
    std::string error;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (fs::directory_iterator it(path, ec), end; !ec && it != end;
           it.increment(ec))
        // Tuning tables (docs/tuning.md) sit beside the bundles.
        if (it->path().extension() == ".json" &&
            it->path().filename().string().find(".tuning.json") ==
                std::string::npos)
          files.push_back(it->path().string());
      if (ec)
        return capi::fail(TEGULA_RT_ERROR_BUNDLE,
                          "cannot list the bundle directory '" +
                              std::string(path) + "': " + ec.message());
      if (files.empty())
        return capi::fail(TEGULA_RT_ERROR_BUNDLE, "the bundle directory '" +
                                                      std::string(path) +
                                                      "' holds no KERNEL.json");
      std::sort(files.begin(), files.end());
      for (const std::string &file : files)
        if (!loadKernel(*result, file, error))
          return capi::fail(TEGULA_RT_ERROR_BUNDLE, error);
    } else if (!loadKernel(*result, path, error)) {
      return capi::fail(TEGULA_RT_ERROR_BUNDLE, error);
    }
    *library = result.release();
    return capi::ok();
  });
}

int tegula_rt_library_num_kernels(const tegula_rt_library *library) {
  if (!library)
    return capi::fail(-1, "null library");
  return int(library->kernels.size());
}

tegula_rt_kernel *tegula_rt_library_kernel(const tegula_rt_library *library,
                                           int index) {
  if (!library || index < 0 || size_t(index) >= library->kernels.size()) {
    capi::fail(TEGULA_RT_ERROR_USAGE,
               library ? "no kernel " + std::to_string(index) : "null library");
    return nullptr;
  }
  return library->kernels[size_t(index)].get();
}

tegula_rt_kernel *tegula_rt_library_find(const tegula_rt_library *library,
                                         const char *name) {
  if (!library || !name) {
    capi::fail(TEGULA_RT_ERROR_USAGE, "null library or name");
    return nullptr;
  }
  std::vector<std::string> names;
  for (const auto &kernel : library->kernels) {
    if (kernel->bundle.kernel == name)
      return kernel.get();
    names.push_back(kernel->bundle.kernel);
  }
  capi::fail(TEGULA_RT_ERROR_USAGE, "no kernel named '" + abbreviate(name) +
                                        "' (kernels: " + joinList(names) + ")");
  return nullptr;
}

const char *tegula_rt_kernel_name(const tegula_rt_kernel *kernel) {
  return kernel ? kernel->bundle.kernel.c_str() : nullKernel(nullptr);
}

const char *tegula_rt_kernel_target(const tegula_rt_kernel *kernel) {
  return kernel ? kernel->bundle.target.c_str() : nullKernel(nullptr);
}

const char *tegula_rt_kernel_json_path(const tegula_rt_kernel *kernel) {
  return kernel ? kernel->bundle.jsonPath.c_str() : nullKernel(nullptr);
}

int tegula_rt_kernel_threads(const tegula_rt_kernel *kernel) {
  return kernel ? int(kernel->bundle.threadsOf(0)) : nullKernel(-1);
}

int tegula_rt_kernel_num_params(const tegula_rt_kernel *kernel) {
  return kernel ? int(kernel->bundle.params.size()) : nullKernel(-1);
}

int tegula_rt_kernel_param_index(const tegula_rt_kernel *kernel,
                                 const char *name) {
  if (!kernel || !name)
    return capi::fail(-1, "null kernel or name");
  const Param *p = kernel->bundle.findParam(name);
  if (!p)
    return capi::fail(-1, "kernel '" + kernel->bundle.kernel +
                              "' has no parameter '" + abbreviate(name) + "'");
  return int(p - kernel->bundle.params.data());
}

const char *tegula_rt_kernel_param_name(const tegula_rt_kernel *kernel,
                                        int param) {
  const Param *p = paramAt(kernel, param);
  return p ? p->name.c_str() : nullptr;
}

int tegula_rt_kernel_param_is_tensor(const tegula_rt_kernel *kernel,
                                     int param) {
  const Param *p = paramAt(kernel, param);
  return p ? int(p->isTensor) : -1;
}

int tegula_rt_kernel_param_dtype(const tegula_rt_kernel *kernel, int param) {
  const Param *p = paramAt(kernel, param);
  return p ? int(p->dtype) : -1;
}

int tegula_rt_kernel_param_is_strided(const tegula_rt_kernel *kernel,
                                      int param) {
  const Param *p = paramAt(kernel, param);
  return p ? int(p->strided) : -1;
}

int tegula_rt_kernel_param_access(const tegula_rt_kernel *kernel, int param) {
  const Param *p = paramAt(kernel, param);
  if (!p)
    return -1;
  switch (p->access) {
  case Access::Read:
    return TEGULA_RT_READ;
  case Access::Write:
    return TEGULA_RT_WRITE;
  case Access::ReadWrite:
    return TEGULA_RT_READWRITE;
  }
  return -1;
}

int tegula_rt_kernel_param_rank(const tegula_rt_kernel *kernel, int param) {
  const Param *p = paramAt(kernel, param);
  return p ? int(p->dims.size()) : -1;
}

const char *tegula_rt_kernel_param_dim(const tegula_rt_kernel *kernel,
                                       int param, int dim) {
  const Param *p = paramAt(kernel, param);
  if (!p || dim < 0 || size_t(dim) >= p->dims.size()) {
    if (p)
      capi::fail(TEGULA_RT_ERROR_USAGE, "parameter '" + p->name +
                                            "' has no dim " +
                                            std::to_string(dim));
    return nullptr;
  }
  return p->dims[size_t(dim)].text().c_str();
}

int tegula_rt_kernel_num_size_vars(const tegula_rt_kernel *kernel) {
  return kernel ? int(kernel->bundle.sizeVars.size()) : nullKernel(-1);
}

const char *tegula_rt_kernel_size_var(const tegula_rt_kernel *kernel,
                                      int index) {
  if (!kernel || index < 0 || size_t(index) >= kernel->bundle.sizeVars.size())
    return capi::fail(TEGULA_RT_ERROR_USAGE, "no such size variable"), nullptr;
  return kernel->bundle.sizeVars[size_t(index)].c_str();
}

int tegula_rt_kernel_num_variants(const tegula_rt_kernel *kernel) {
  return kernel ? int(kernel->bundle.configs[0].variants.size())
                : nullKernel(-1);
}

const char *tegula_rt_kernel_variant_name(const tegula_rt_kernel *kernel,
                                          int variant) {
  if (!kernel || variant < 0 ||
      size_t(variant) >= kernel->bundle.configs[0].variants.size())
    return capi::fail(TEGULA_RT_ERROR_USAGE, "no such variant"), nullptr;
  return kernel->bundle.configs[0].variants[size_t(variant)].name.c_str();
}

int tegula_rt_kernel_num_configs(const tegula_rt_kernel *kernel) {
  return kernel ? int(kernel->bundle.configs.size()) : nullKernel(-1);
}

const char *tegula_rt_kernel_config_name(const tegula_rt_kernel *kernel,
                                         int config) {
  if (!kernel || config < 0 || size_t(config) >= kernel->bundle.configs.size())
    return capi::fail(TEGULA_RT_ERROR_USAGE, "no such config"), nullptr;
  return kernel->bundle.configs[size_t(config)].name.c_str();
}

int tegula_rt_kernel_uses_cubin(const tegula_rt_kernel *kernel, int variant,
                                int major, int minor) {
  if (!kernel || variant < -1 ||
      variant >= int(kernel->bundle.configs[0].variants.size()))
    return capi::fail(-1, "no such kernel or variant");
  return !kernel->bundle.cubinOf(0, variant).empty() &&
         cubinRunsOn(kernel->bundle.target, major, minor);
}

int tegula_rt_binding_create(tegula_rt_kernel *kernel,
                             tegula_rt_binding **binding) {
  if (!kernel || !binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null kernel or out-pointer");
  return guarded([&] {
    auto result = std::make_unique<tegula_rt_binding>();
    result->kernel = kernel;
    result->tensors.resize(kernel->bundle.params.size());
    *binding = result.release();
    return capi::ok();
  });
}

void tegula_rt_binding_free(tegula_rt_binding *binding) { delete binding; }

int tegula_rt_binding_set_dim(tegula_rt_binding *binding, const char *name,
                              int64_t value) {
  if (!binding || !name)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding or name");
  return guarded([&] {
    invalidate(binding);
    binding->inputs.dims[name] = value;
    return capi::ok();
  });
}

int tegula_rt_binding_set_tensor(tegula_rt_binding *binding, const char *name,
                                 int dtype, int rank, const int64_t *shape,
                                 const int64_t *strides, uint64_t pointer) {
  if (!binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding");
  if (!validDType(dtype))
    return capi::fail(TEGULA_RT_ERROR_USAGE,
                      "unknown dtype " + std::to_string(dtype));
  if (rank < 0 || rank > 64 || (rank > 0 && !shape))
    return capi::fail(TEGULA_RT_ERROR_USAGE,
                      "a tensor's rank must be in [0, 64] with a shape");
  return updateTensor(binding, name, [&](tegula_rt_binding::Tensor &t) {
    invalidate(binding);
    t.given = true;
    t.dtype = dtype;
    t.shape.assign(shape, shape + rank);
    t.strides.clear();
    if (strides)
      t.strides.assign(strides, strides + rank);
    t.pointer = pointer;
  });
}

int tegula_rt_binding_set_allocation(tegula_rt_binding *binding,
                                     const char *name, uint64_t base,
                                     uint64_t bytes) {
  if (!binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding");
  return updateTensor(binding, name, [&](tegula_rt_binding::Tensor &t) {
    invalidate(binding);
    t.allocationBase = base;
    t.allocationBytes = bytes;
  });
}

int tegula_rt_binding_set_pointer(tegula_rt_binding *binding, const char *name,
                                  uint64_t pointer) {
  if (!binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding");
  return updateTensor(binding, name, [&](tegula_rt_binding::Tensor &t) {
    binding->packed = false;
    t.pointer = pointer;
  });
}

int tegula_rt_binding_set_scalar_int(tegula_rt_binding *binding,
                                     const char *name, int64_t value) {
  if (!binding || !name)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding or name");
  return guarded([&] {
    invalidate(binding);
    // bindAndCheck parses scalars from text: the same code checks ranges.
    binding->inputs.scalars[name] = std::to_string(value);
    return capi::ok();
  });
}

int tegula_rt_binding_set_scalar_float(tegula_rt_binding *binding,
                                       const char *name, double value) {
  if (!binding || !name)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding or name");
  return guarded([&] {
    invalidate(binding);
    const Param *p = binding->kernel->bundle.findParam(name);
    binding->inputs.scalars[name] = floatText(value, p ? p->dtype : DType::F32);
    return capi::ok();
  });
}

int tegula_rt_binding_check(tegula_rt_binding *binding) {
  if (!binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding");
  return guarded([&] {
    const Bundle &b = binding->kernel->bundle;
    invalidate(binding);
    std::string error;
    binding->inputs.caller = BindingInputs::Caller::CApi;
    binding->inputs.fileShapes.clear();
    binding->inputs.strides.clear();
    binding->inputs.addresses.clear();
    for (size_t i = 0; i < b.params.size(); ++i) {
      const tegula_rt_binding::Tensor &t = binding->tensors[i];
      if (!t.given)
        continue;
      if (!checkTensor(b.params[i], t, error))
        return capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK, error);
      binding->inputs.fileShapes[b.params[i].name] = t.shape;
      if (b.params[i].strided && !t.strides.empty())
        binding->inputs.strides[b.params[i].name] = t.strides;
      // The variant the check reports is the one these pointers get.
      if (b.params[i].strided)
        binding->inputs.addresses[b.params[i].name] = t.pointer;
    }
    if (!bindAndCheck(b, binding->inputs, binding->plan, error) ||
        !checkAllocations(*binding, nullptr, error))
      return capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK, error);
    // The config: pinned, tuned for this device and shape, or the first.
    binding->choice = ConfigChoice();
    if (b.listsConfigs) {
      std::string device, arch;
      if (!b.tuning.empty())
        capi::currentDeviceIdentity(device, arch);
      if (!chooseConfig(b, binding->plan.env, device, arch,
                        std::getenv("TEGULA_CONFIG"), binding->choice, error))
        return capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK, error);
      if (binding->choice.config != 0 &&
          !applyConfig(b, binding->choice.config, binding->plan, error))
        return capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK, error);
    }
    binding->checked = true;
    binding->packedAligns.clear();
    return capi::ok();
  });
}

int tegula_rt_binding_param_shape(const tegula_rt_binding *binding, int param,
                                  int64_t *shape, int capacity) {
  if (!binding || !binding->checked)
    return capi::fail(-1, "the binding is not checked");
  const Param *p = paramAt(binding->kernel, param);
  if (!p || !p->isTensor)
    return p ? capi::fail(-1, "'" + p->name + "' is a scalar") : -1;
  const std::vector<int64_t> &dims = binding->plan.shapes[size_t(param)];
  for (size_t i = 0; i < dims.size() && int(i) < capacity && shape; ++i)
    shape[i] = dims[i];
  return int(dims.size());
}

int tegula_rt_binding_grid(const tegula_rt_binding *binding, int64_t grid[3]) {
  if (!binding || !binding->checked || !grid)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "the binding is not checked");
  for (int d = 0; d < 3; ++d)
    grid[d] = binding->plan.grid[size_t(d)];
  return capi::ok();
}

int tegula_rt_binding_variant(const tegula_rt_binding *binding) {
  if (!binding || !binding->checked)
    return capi::fail(-2, "the binding is not checked");
  return binding->plan.variant;
}

const char *tegula_rt_binding_config(const tegula_rt_binding *binding) {
  if (!binding || !binding->checked)
    return capi::fail(-1, "the binding is not checked"), nullptr;
  return binding->kernel->bundle.configs[size_t(binding->plan.config)]
      .name.c_str();
}

const char *tegula_rt_binding_config_source(const tegula_rt_binding *binding) {
  if (!binding || !binding->checked)
    return capi::fail(-1, "the binding is not checked"), nullptr;
  return binding->choice.sourceName();
}

const char *tegula_rt_binding_variant_name(const tegula_rt_binding *binding) {
  if (!binding || !binding->checked)
    return capi::fail(-1, "the binding is not checked"), nullptr;
  const Config &config =
      binding->kernel->bundle.configs[size_t(binding->plan.config)];
  return binding->plan.variant < 0
             ? "general"
             : config.variants[size_t(binding->plan.variant)].name.c_str();
}

int tegula_rt_binding_pack(tegula_rt_binding *binding) {
  if (!binding)
    return capi::fail(TEGULA_RT_ERROR_USAGE, "null binding");
  if (!binding->checked)
    if (int status = tegula_rt_binding_check(binding))
      return status;
  return guarded([&] {
    const Bundle &b = binding->kernel->bundle;
    std::vector<cu::DevicePtr> pointers(b.params.size(), 0);
    for (size_t i = 0; i < b.params.size(); ++i) {
      if (!b.params[i].isTensor)
        continue;
      pointers[i] = binding->tensors[i].pointer;
      // An empty tensor has no memory (PyTorch gives it address 0).
      if (!pointers[i] && !isEmpty(binding->plan.shapes[i]))
        return capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK,
                          "argument '" + b.params[i].name +
                              "' has no device pointer");
    }
    // A strided view's address may rule a variant out (align(x)): the
    // pointers packed choose, as those given at the check did, when their
    // alignments changed since the last pack.
    if (updateAlignments(b, pointers, binding->packedAligns))
      bindAddresses(b, pointers, binding->plan);
    // LoadedKernel::pack reads only the bundle and the plan: a kernel that
    // is not loaded packs without the driver. Every pack checks the
    // pointers it packs against their allocations.
    static const CudaDriver unloaded;
    LoadedKernel packer(unloaded, b, binding->plan.config,
                        binding->plan.variant);
    std::string error;
    if (!checkAllocations(*binding, &pointers, error) ||
        !packer.pack(binding->plan, pointers, binding->pack, error))
      return capi::fail(TEGULA_RT_ERROR_LAUNCH_CHECK, error);
    binding->packed = true;
    return capi::ok();
  });
}

} // extern "C"
