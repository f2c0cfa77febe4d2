//===- Strides.h - Views of strided tensor parameters -----------*- C++ -*-===//
//
// A `strided` tensor parameter takes its strides (in elements) at launch:
// one per dimension, after the size variables (tools.md). These helpers
// check a view before any launch and move a logical host tensor in and out
// of the memory a view spans, for launchers that own that memory.
//
//===----------------------------------------------------------------------===//

#ifndef TEGULA_RUNTIME_STRIDES_H
#define TEGULA_RUNTIME_STRIDES_H

#include "tegula/Runtime/Bundle.h"
#include "tegula/Runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tegula::rt {

/// The strides of a contiguous row-major tensor of `shape` (INT64_MAX
/// where they would overflow).
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape);

/// Elements from the view's first to its last, inclusive (0 when empty,
/// INT64_MAX where it would overflow).
int64_t viewSpan(const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &strides);

/// The checks of a view before a launch: one stride per dimension, none
/// negative, a span under 2^40 bytes, and, when the kernel writes the
/// tensor, no two elements at one address (a race on the GPU).
bool checkView(const Param &param, const std::vector<int64_t> &shape,
               const std::vector<int64_t> &strides, std::string &error);

/// Whether two elements of a checked view may share an address (false
/// means they cannot).
bool mayAlias(const std::vector<int64_t> &shape,
              const std::vector<int64_t> &strides);

/// Makes a read view that aliases itself hold what the kernel will read:
/// each element the last one (row-major) at its address, as scatterView
/// leaves it. Needs memory for the elements, not for the span.
void resolveAliases(HostTensor &tensor, const std::vector<int64_t> &strides);

/// The bytes a view spans, with the logical `tensor` scattered in and every
/// other element holding `fill` (bytes of one element).
std::vector<uint8_t> scatterView(const HostTensor &tensor,
                                 const std::vector<int64_t> &strides,
                                 const std::vector<uint8_t> &fill);

/// Gathers the view out of `spanned` into `tensor`; then every element
/// outside the view must still hold `fill`, else an error names the first.
bool gatherView(const std::vector<uint8_t> &spanned,
                const std::vector<int64_t> &strides,
                const std::vector<uint8_t> &fill, const std::string &name,
                HostTensor &tensor, std::string &error);

} // namespace tegula::rt

#endif // TEGULA_RUNTIME_STRIDES_H
