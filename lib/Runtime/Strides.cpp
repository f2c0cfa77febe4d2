//===- Strides.cpp - Views of strided tensor parameters -------------------===//

#include "tegula/Runtime/Strides.h"

#include "tegula/Runtime/Text.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>
#include <unordered_map>

namespace tegula::rt {

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  // Shapes a caller gives are not bounded yet: saturate, never overflow.
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    if (__builtin_mul_overflow(strides[d], std::max<int64_t>(shape[d], 1),
                               &strides[d - 1]))
      strides[d - 1] = INT64_MAX;
  return strides;
}

int64_t viewSpan(const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &strides) {
  int64_t last = 0, term;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] <= 0)
      return 0;
  for (size_t d = 0; d < shape.size() && d < strides.size(); ++d)
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &term) ||
        __builtin_add_overflow(last, term, &last) || last == INT64_MAX)
      return INT64_MAX; // saturated: more than any memory
  return last + 1;
}

namespace {
/// Sorted by stride, each dimension's stride must step past everything the
/// smaller ones reach; the first that does not, or -1. Strides are checked
/// (bounded spans, none negative).
int overlappingDim(const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &strides) {
  std::vector<size_t> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t reach = 0; // the largest offset the smaller dimensions reach
  for (size_t d : order) {
    if (shape[d] <= 1)
      continue;
    if (strides[d] <= reach)
      return int(d);
    reach += (shape[d] - 1) * strides[d];
  }
  return -1;
}
} // namespace

bool checkView(const Param &param, const std::vector<int64_t> &shape,
               const std::vector<int64_t> &strides, std::string &error) {
  std::string what = "argument '" + param.name + "' with shape " +
                     formatShape(shape) + " has strides " +
                     formatShape(strides);
  if (strides.size() != shape.size()) {
    error = what + ": a strided tensor takes one stride per dimension (" +
            std::to_string(shape.size()) + ")";
    return false;
  }
  // Spans past 2^40 bytes are refused like shapes that large.
  int64_t bytes = int64_t(dtypeSize(param.dtype)), last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t term;
    if (strides[d] < 0) {
      error = what + ": strides must not be negative";
      return false;
    }
    if (shape[d] > 0 &&
        (__builtin_mul_overflow(shape[d] - 1, strides[d], &term) ||
         __builtin_add_overflow(last, term, &last) ||
         last > kMaxTensorBytes / bytes)) {
      error = what + ", which spans too much memory";
      return false;
    }
  }
  if (param.access == Access::Read)
    return true;
  // Written views must not alias (a race on the GPU).
  int dim = overlappingDim(shape, strides);
  if (dim >= 0) {
    error = what +
            ": the kernel writes it, and elements would overlap "
            "(dimension " +
            std::to_string(dim) + "'s stride " + std::to_string(strides[dim]) +
            " does not step past the smaller dimensions)";
    return false;
  }
  return true;
}

bool mayAlias(const std::vector<int64_t> &shape,
              const std::vector<int64_t> &strides) {
  return overlappingDim(shape, strides) >= 0;
}

namespace {
/// Calls `visit(logical, offset, count)` for every run of `count` elements
/// of `tensor` seen through `strides`, row-major, that lie at consecutive
/// logical indices and consecutive offsets: whole rows when the last
/// dimension's stride is 1 (a dense view is one run), single elements
/// otherwise. Copies by run are what keep a bench-sized tensor's upload
/// (tile-run --tune: 33M elements a tensor, per config) at memcpy speed.
template <typename F>
void forEachRun(const HostTensor &tensor, const std::vector<int64_t> &strides,
                F visit) {
  const std::vector<int64_t> &shape = tensor.shape;
  int64_t n = tensor.numel();
  if (n == 0)
    return;
  if (shape.empty()) {
    visit(0, 0, 1);
    return;
  }
  // The trailing dimensions laid out densely fold into one run.
  size_t outer = shape.size();
  int64_t run = 1;
  while (outer > 0 && (shape[outer - 1] == 1 || strides[outer - 1] == run)) {
    run *= shape[outer - 1];
    --outer;
  }
  std::vector<int64_t> index(outer, 0);
  int64_t offset = 0;
  for (int64_t logical = 0; logical < n; logical += run) {
    visit(logical, offset, run);
    for (size_t d = outer; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < shape[d])
        break;
      offset -= shape[d] * strides[d];
      index[d] = 0;
    }
  }
}

/// True when the view is the row-major layout of its shape (one run).
bool isDense(const std::vector<int64_t> &shape,
             const std::vector<int64_t> &strides) {
  int64_t run = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != run)
      return false;
    run *= shape[d];
  }
  return true;
}

/// Calls `visit(logical, offset)` for every element, row-major.
template <typename F>
void forEachElement(const HostTensor &tensor,
                    const std::vector<int64_t> &strides, F visit) {
  forEachRun(tensor, strides,
             [&](int64_t logical, int64_t offset, int64_t count) {
               for (int64_t e = 0; e < count; ++e)
                 visit(logical + e, offset + e);
             });
}
} // namespace

void resolveAliases(HostTensor &tensor, const std::vector<int64_t> &strides) {
  if (!mayAlias(tensor.shape, strides))
    return;
  // By address, the last element that lands there; O(elements) memory,
  // never the span's (which may be far larger).
  std::unordered_map<int64_t, int64_t> last;
  last.reserve(size_t(tensor.numel()));
  forEachElement(tensor, strides, [&](int64_t logical, int64_t offset) {
    last[offset] = logical;
  });
  size_t size = dtypeSize(tensor.dtype);
  std::vector<uint8_t> resolved(tensor.bytes.size());
  forEachElement(tensor, strides, [&](int64_t logical, int64_t offset) {
    std::memcpy(&resolved[size_t(logical) * size],
                &tensor.bytes[size_t(last[offset]) * size], size);
  });
  tensor.bytes = std::move(resolved);
}

std::vector<uint8_t> scatterView(const HostTensor &tensor,
                                 const std::vector<int64_t> &strides,
                                 const std::vector<uint8_t> &fill) {
  size_t size = dtypeSize(tensor.dtype);
  int64_t span = viewSpan(tensor.shape, strides);
  if (isDense(tensor.shape, strides))
    return tensor.bytes; // no gaps to fill
  std::vector<uint8_t> spanned(size_t(span) * size);
  for (int64_t e = 0; e < span; ++e)
    std::memcpy(&spanned[size_t(e) * size], fill.data(), size);
  forEachRun(tensor, strides,
             [&](int64_t logical, int64_t offset, int64_t count) {
               std::memcpy(&spanned[size_t(offset) * size],
                           &tensor.bytes[size_t(logical) * size],
                           size_t(count) * size);
             });
  return spanned;
}

bool gatherView(const std::vector<uint8_t> &spanned,
                const std::vector<int64_t> &strides,
                const std::vector<uint8_t> &fill, const std::string &name,
                HostTensor &tensor, std::string &error) {
  size_t size = dtypeSize(tensor.dtype);
  int64_t span = int64_t(spanned.size() / size);
  forEachRun(
      tensor, strides, [&](int64_t logical, int64_t offset, int64_t count) {
        std::memcpy(&tensor.bytes[size_t(logical) * size],
                    &spanned[size_t(offset) * size], size_t(count) * size);
      });
  if (isDense(tensor.shape, strides))
    return true; // no gaps
  // What lies between the view's elements must still be the fill (else a
  // write landed there).
  std::vector<bool> inView(size_t(span), false);
  forEachRun(tensor, strides, [&](int64_t, int64_t offset, int64_t count) {
    std::fill_n(inView.begin() + offset, count, true);
  });
  int64_t touched = 0, first = -1;
  for (int64_t e = 0; e < span; ++e)
    if (!inView[size_t(e)] &&
        std::memcmp(&spanned[size_t(e) * size], fill.data(), size) != 0) {
      first = first < 0 ? e : first;
      ++touched;
    }
  if (touched) {
    error = "output '" + name + "': " + std::to_string(touched) +
            " elements between the elements of its view (strides " +
            formatShape(strides) + ") were written (first at offset " +
            std::to_string(first) + ")";
    return false;
  }
  return true;
}

} // namespace tegula::rt
