#!/usr/bin/env python3
"""How far tegula.ops.chunk_gla, fla's chunk_gla and fla's fused recurrent
form each are from the float64 GLA function, forward and backward, at the
GLA training comparison's shapes (bench/train_gla.py: B 4, T 2048, H 16,
K 64, V 128, bf16 q/k/v, f32 gates logsigmoid(x) / 16). Issue 25's GLA
training bar: is tegula's rounding larger than fla's, or are the loss gaps
the noise of two valid roundings?

    PYTHONPATH=python:/tmp/site python3 scripts/gpu/gla-errors.py [--seeds 3]

Per output (o) and gradient (dq, dk, dv, dg): the relative L2 error of
each implementation against float64 on the same bf16 inputs, the floor of
rounding the float64 value itself to the output's dtype, and the distance
between each pair of implementations. One line per seed and quantity, then
the means.
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from train_gla import gla_kernel, naive_chunk_gla  # noqa: E402

IMPLS = ("tegula", "fla", "fla-recurrent")
NAMES = ("o", "dq", "dk", "dv", "dg")


def rel(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def inputs(shape, value_dim, seed, gate_scale):
    """bf16 q, k, v and f32 gates as the model makes them (its projections
    of a normalized input have about unit scale), and the output's cotangent."""
    torch.manual_seed(seed)
    b, t, h, kd = shape
    q, k = (torch.randn(shape, device="cuda").bfloat16() for _ in range(2))
    v = torch.randn(b, t, h, value_dim, device="cuda").bfloat16()
    g = F.logsigmoid(gate_scale * torch.randn(shape, device="cuda")) / 16
    do = torch.randn(b, t, h, value_dim, device="cuda").bfloat16()
    return (q, k, v, g), do


def run(call, xs, do):
    """o and the gradients of (o * do).sum() with respect to q, k, v, g."""
    leaves = [x.detach().clone().requires_grad_() for x in xs]
    o = call(*leaves)
    (o.float() * do.float()).sum().backward()
    return [o.detach()] + [x.grad for x in leaves]


def reference(xs, do):
    leaves = [x.detach().double().requires_grad_() for x in xs]
    o = naive_chunk_gla(*leaves, chunk=16)[0]
    (o * do.double()).sum().backward()
    return [o.detach()] + [x.grad for x in leaves]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--head-k", type=int, default=64)
    p.add_argument("--head-v", type=int, default=128)
    p.add_argument("--gate-scale", type=float, default=1.0,
                   help="the gate logits' scale before logsigmoid")
    a = p.parse_args()
    shape = (a.batch, a.seq, a.heads, a.head_k)
    calls = {i: gla_kernel(i) for i in IMPLS}
    print(f"GPU {torch.cuda.get_device_name()}; shape {list(shape)} "
          f"V {a.head_v}; gates logsigmoid({a.gate_scale} x) / 16")
    sums = {}

    def add(key, value):
        sums.setdefault(key, []).append(value)

    for seed in range(a.seeds):
        xs, do = inputs(shape, a.head_v, seed, a.gate_scale)
        want = reference(xs, do)
        got = {i: run(c, xs, do) for i, c in calls.items()}
        for n, w in enumerate(want):
            name = NAMES[n]
            dtype = xs[n - 1].dtype if n else xs[0].dtype
            add((name, "bf16/f32 rounding"), rel(w.to(dtype), w))
            for i in IMPLS:
                add((name, i), rel(got[i][n], w))
            add((name, "tegula-fla"), rel(got["tegula"][n], got["fla"][n]))
            add((name, "recurrent-fla"),
                rel(got["fla-recurrent"][n], got["fla"][n]))
            print(f"seed {seed} {name}: " + "  ".join(
                f"{k[1]} {v[-1]:.3e}" for k, v in sums.items()
                if k[0] == name))
        del want, got
    print("mean over seeds (relative L2 against float64, and between pairs)")
    cols = ("bf16/f32 rounding",) + IMPLS + ("tegula-fla", "recurrent-fla")
    print("| quantity | " + " | ".join(cols) + " |")
    print("| --- " * (len(cols) + 1) + "|")
    for name in NAMES:
        vals = [sum(sums[(name, c)]) / len(sums[(name, c)]) for c in cols]
        print(f"| {name} | " + " | ".join(f"{v:.3e}" for v in vals) + " |")


if __name__ == "__main__":
    main()
