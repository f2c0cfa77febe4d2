//===- CrossEntropy.cpp - float64 cross-entropy backward -------------------===//
//
// "cross_entropy_bwd": the gradient of kernels/cross_entropy.tile's loss,
// from the definition one row at a time (the forward, "cross_entropy", is
// in Reference.cpp). The lse the kernel reads must be the forward's, so
// with --check the runner derives it here (deriveCrossEntropyInputs)
// unless an --in file gives it, and the reference refuses a given one that
// does not match.
//
//===----------------------------------------------------------------------===//

#include "RefContext.h"

#include <algorithm>
#include <cmath>

namespace tegula::rt {

namespace {
/// log sum_v exp(x[v]) of one row; -inf for an empty one.
double rowLse(const double *x, int64_t V) {
  if (V == 0)
    return -INFINITY;
  double top = *std::max_element(x, x + V), total = 0;
  for (int64_t v = 0; v < V; ++v)
    total += std::exp(x[v] - top);
  return top + std::log(total);
}
} // namespace

void crossEntropyBackward(const double *logits, const int64_t *target,
                          const double *dloss, int64_t R, int64_t V,
                          double *dlogits) {
  for (int64_t r = 0; r < R; ++r) {
    const double *x = logits + r * V;
    double *d = dlogits + r * V, lse = rowLse(x, V);
    int64_t t = target[r];
    for (int64_t v = 0; v < V; ++v)
      d[v] = t < 0 ? 0.0 : (std::exp(x[v] - lse) - (v == t ? 1 : 0)) * dloss[r];
  }
}

namespace {

/// logits [R, V], target, dloss [R] and lse [R] (optional), and the output
/// dlogits [R, V].
struct BwdTensors {
  int logits = -1, target = -1, lse = -1, dloss = -1, dlogits = -1;
  int64_t R = 0, V = 0;

  bool bind(RefContext &c) {
    logits = c.tensor("logits", 2), target = c.tensor("target", 1),
    dloss = c.tensor("dloss", 1), dlogits = c.tensor("dlogits", 2);
    if (logits < 0 || target < 0 || dloss < 0 || dlogits < 0 ||
        !c.same(logits, 0, target, 0) || !c.same(logits, 0, dloss, 0))
      return false;
    if (c.shape(dlogits) != c.shape(logits))
      return c.fail("tensor '" + c.param(dlogits) +
                    "' must have the shape of '" + c.param(logits) + "'");
    R = c.shape(logits)[0], V = c.shape(logits)[1];
    lse = c.index("lse");
    if (lse >= 0 && c.shape(lse) != std::vector<int64_t>{R})
      return c.fail("tensor '" + c.nameOf("lse") + "' must be [R]");
    return true;
  }

  /// The targets as integers, each negative (ignored) or below V.
  bool targets(RefContext &c, std::vector<int64_t> &out) const {
    std::vector<double> t = c.values(target);
    out.assign(t.begin(), t.end());
    for (size_t r = 0; r < out.size(); ++r)
      if (out[r] >= V)
        return c.fail("'" + c.param(target) + "'[" + std::to_string(r) +
                      "] = " + std::to_string(out[r]) +
                      " is not a column of the " + std::to_string(V) +
                      " logits (a negative target ignores its row)");
    return true;
  }

  /// Each row's exact logsumexp.
  std::vector<double> exactLse(RefContext &c) const {
    std::vector<double> x = c.values(logits), out(static_cast<size_t>(R));
    for (int64_t r = 0; r < R; ++r)
      out[size_t(r)] = rowLse(x.data() + r * V, V);
    return out;
  }
};

} // namespace

bool crossEntropyBackwardRef(
    RefContext &c, std::map<std::string, std::vector<double>> &outputs) {
  BwdTensors t;
  std::vector<int64_t> targets;
  if (!t.bind(c) || !t.targets(c, targets))
    return false;
  if (!c.checkForwardInput(t.lse, t.exactLse(c), "lse of logits"))
    return false;
  std::vector<double> x = c.values(t.logits), dloss = c.values(t.dloss);
  std::vector<double> grad(size_t(t.R * t.V));
  crossEntropyBackward(x.data(), targets.data(), dloss.data(), t.R, t.V,
                       grad.data());
  outputs[c.param(t.dlogits)] = std::move(grad);
  return true;
}

bool deriveCrossEntropyInputs(RefContext &c, std::vector<HostTensor> &host,
                              const std::set<std::string> &fromFiles) {
  BwdTensors t;
  if (!t.bind(c))
    return false;
  c.derive(t.lse, t.exactLse(c), host, fromFiles);
  return true;
}

} // namespace tegula::rt
