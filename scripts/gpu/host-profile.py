#!/usr/bin/env python3
"""Where the host time of a tegula.ops call goes, on the GPU machine.

For each op of bench/ops_bench.py's host section (the same tiny shapes),
the wall time per call (its host_us) through the op and through the kernel
called directly, then a cProfile of CALLS op calls: the functions with the
most time of their own, and the ones with the most time under them. Also
the pieces a call is made of, timed alone (torch.empty, an
autograd.Function, the ctypes launch).

    PYTHONPATH=python python3 scripts/gpu/host-profile.py [--calls 2000]
"""

import argparse
import cProfile
import io
import os
import pstats
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import torch  # noqa: E402

import ops_bench  # noqa: E402
import tegula.ops  # noqa: E402
from tegula.ops import _attention, _loss, _norm  # noqa: E402


def profile(name, fn, calls):
    """cProfile of `calls` calls of fn: the top functions by own time and
    by cumulative time."""
    fn()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    prof.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats(order).print_stats(18)
        lines = [ln for ln in text.getvalue().splitlines() if ln.strip()]
        print(f"--- {name}: by {order} ({calls} calls)")
        print("\n".join(lines[3:]))


class Trivial(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    calls = args.calls
    ops_bench.load_gpu()
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(17)
    q, k, v = (ops_bench.randn(g, 1, 1, 128, 64) for _ in range(3))
    x = ops_bench.randn(g, 1, 64)
    w = ops_bench.randn(g, 64)
    logits = ops_bench.randn(g, 1, 128)
    target = torch.randint(0, 128, (1,), device="cuda", generator=g)
    attn_k = _attention._kernel("attention_fwd_lse", q, False)
    norm_k = _norm._kernel("rmsnorm_fwd", x)
    loss_k = _loss._kernel("cross_entropy", logits)
    o, lse = torch.empty_like(q), q.new_empty(q.shape[:3],
                                              dtype=torch.float32)
    cases = {
        "attention op": lambda: tegula.ops.attention(q, k, v),
        "attention direct": lambda: attn_k(q, k, v, scale=0.125),
        "attention direct, outputs given": lambda: attn_k(q, k, v, o, lse,
                                                          0.125),
        "attention forward impl": lambda: _attention._forward_impl(
            q, k, v, False, 0.125),
        "rms_norm op": lambda: tegula.ops.rms_norm(x, w, 1e-6),
        "rms_norm direct": lambda: norm_k(x, w, eps=1e-6),
        "cross_entropy op": lambda: tegula.ops.cross_entropy(
            logits, target, reduction="none"),
        "cross_entropy direct": lambda: loss_k(logits, target),
        "torch.empty [1,1,128,64] bf16": lambda: torch.empty_like(q),
        "autograd.Function trivial": lambda: Trivial.apply(x),
        "target.to(int32)": lambda: target.to(torch.int32),
    }
    # The fast path's pieces at attention's direct call with its outputs
    # given: the scan of the arguments, and the ctypes launch alone.
    from tegula import _fast, _lib
    attn_k(q, k, v, o, lse, 0.125)
    attn_k(q, k, v, o, lse, 0.125)
    plan, _ = next(iter(attn_k._local.fast.values()))
    values = [q, k, v, o, lse, 0.125]
    rt = _lib.lib()
    raw = torch._C._cuda_getCurrentRawStream
    cases.update({
        "fast path: scan of attention's arguments": lambda: _fast.scan(
            values, attn_k._fast_kinds, torch.Tensor),
        "fast path: ctypes launch_views alone": lambda: rt.tegula_rt_launch_views(
            plan.handle, plan.pointers, plan.bases, 6, raw(0) or None),
        "ctypes call of a getter (tegula_rt_kernel_threads)": lambda:
            rt.tegula_rt_kernel_threads(attn_k._handle),
        "current raw stream": lambda: raw(0),
        "tensor.data_ptr()": lambda: q.data_ptr(),
        "tensor.untyped_storage().data_ptr()": lambda:
            q.untyped_storage().data_ptr(),
        "torch.is_grad_enabled()": torch.is_grad_enabled,
        "python loop of 1000 additions (CPU speed)": lambda: sum(range(1000)),
    })
    with torch.no_grad():
        for name, fn in cases.items():
            print(f"{name}: {ops_bench.host_us(fn, calls):.2f} us per call "
                  f"(no_grad)", flush=True)
    for name in ("attention op", "rms_norm op", "cross_entropy op"):
        with torch.no_grad():
            profile(name + " (no_grad)", cases[name], calls)
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    print(f"attention op, requires_grad: "
          f"{ops_bench.host_us(lambda: tegula.ops.attention(qg, kg, vg), calls):.2f}"
          f" us per call", flush=True)


if __name__ == "__main__":
    main()
