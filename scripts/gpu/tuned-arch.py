#!/usr/bin/env python3
"""Which config tegula.ops.attention's kernels take on this GPU, and the
op's forward + backward time, with the libtegula_rt.so that
TEGULA_RT_LIBRARY names (run once per library to compare how each picks
configs: docs/tuning.md's rules). The bundles' tuning tables hold H100
entries; on another sm_90 GPU (an H200) a library without the
same-architecture rule takes config 0. SDPA is timed beside for scale.
DTYPE=f16 runs the f16 builds (bench/tuning/derive_dtype.py's tables).
    python3 scripts/gpu/tuned-arch.py
"""
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))
import tegula.ops  # noqa: E402
from tegula.ops import _attention  # noqa: E402


def ms_of(fn, reps=20, rounds=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in "ab")
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / reps)
    return statistics.median(times)


def main():
    dtype = (torch.float16 if os.environ.get("DTYPE") == "f16" else
             torch.bfloat16)
    print(f"{torch.cuda.get_device_name()}; library "
          f"{os.environ.get('TEGULA_RT_LIBRARY', 'the package')}; bundles "
          f"{os.environ.get('TEGULA_OPS_BUNDLES', 'the package')}; {dtype}")
    for b, h, hkv, n, d, causal in ((4, 16, 16, 4096, 128, False),
                                    (4, 16, 16, 4096, 128, True),
                                    (4, 32, 32, 4096, 64, True),
                                    (4, 32, 8, 4096, 128, True)):
        q = torch.randn(b, h, n, d, device="cuda", dtype=dtype,
                        requires_grad=True)
        k, v = (torch.randn(b, hkv, n, d, device="cuda", dtype=dtype,
                            requires_grad=True) for _ in "kv")
        do = torch.randn_like(q)
        fwd = _attention._kernel("attention_fwd_lse", q, causal)
        binding = fwd.bind(q, k, v, scale=d ** -0.5)
        out = tegula.ops.attention(q, k, v, causal=causal)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                             enable_gqa=hkv != h)
        err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()

        def op():
            torch.autograd.grad(tegula.ops.attention(q, k, v, causal=causal),
                                (q, k, v), do)

        def sdpa():
            torch.autograd.grad(F.scaled_dot_product_attention(
                q, k, v, is_causal=causal, enable_gqa=hkv != h), (q, k, v), do)
        t_op, t_sdpa = ms_of(op), ms_of(sdpa)
        print(f"[{b}, {h}/{hkv}, {n}, {d}]{' causal' if causal else ''}: "
              f"attention_fwd_lse config {binding.config} "
              f"({binding.config_source}); fwd+bwd op {t_op:.3f} ms, SDPA "
              f"{t_sdpa:.3f} ms ({t_sdpa / t_op:.2f}x); o vs SDPA rel L2 "
              f"{err:.2e}", flush=True)


if __name__ == "__main__":
    main()
