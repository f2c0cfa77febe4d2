#!/usr/bin/env python3
"""Splits the LayerNorm forward's bench time (bench/layernorm.py) into GPU
time and the host's per-call cost, for Tegula and the Triton tutorial, at
the bench's shapes (M = 4096, f16, N = 1024..8192):

  per-call  the bench's figure: one event pair around each call
            (run.time_cuda), which counts the host's launch work whenever
            the GPU waits for it;
  queued    100 calls between one event pair, divided by 100: the GPU's time
            per call once the queue runs ahead of it;
  bare      the same with every output allocated once and the kernel
            launched directly (no torch.empty, no autograd), the kernel's
            own time.

A per-call figure above queued means the host, not the kernel, set the
bench's number. On the GPU machine, after bench/stage.sh:
    python3 bench/layernorm_fwd_split.py --stage .device-bundle
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import baselines  # noqa: E402
import layernorm as ln  # noqa: E402
import run  # noqa: E402


def queued(fn, calls=100):
    for _ in range(10):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage", default=".device-bundle")
    args = parser.parse_args()
    tile = run.Tegula(args.stage)
    g = torch.Generator(device="cuda").manual_seed(8)
    print("N      impl    per-call ms  queued ms  bare ms")
    for n in ln.WIDTHS:
        x, w, b, _ = ln.inputs(ln.M, n, g)
        ours = ln.Tegula(tile, n, 1)
        y = torch.empty_like(x)
        mean = torch.empty(ln.M, device="cuda", dtype=torch.float32)
        rstd = torch.empty_like(mean)
        # The tutorial's launch choices (baselines.TritonLayerNorm).
        block = baselines.triton.next_power_of_2(n)
        warps = min(max(block // 256, 1), 8)
        bare = {
            "tegula": lambda: ours.fwd(x, w, b, y, mean, rstd, ln.EPS),
            "triton": lambda: baselines._ln_fwd_fused[(ln.M,)](
                x, y, w, b, mean, rstd, x.stride(0), n, ln.EPS,
                BLOCK_SIZE=block, num_warps=warps),
        }
        calls = {"tegula": lambda: ours.forward(x, w, b),
                 "triton": lambda: baselines.triton_layer_norm(x, w, b,
                                                               ln.EPS)}
        for name, fn in calls.items():
            print(f"{n:<6} {name:<7} {run.time_cuda(fn):11.4f} "
                  f"{queued(fn):10.4f} {queued(bare[name]):8.4f}", flush=True)


if __name__ == "__main__":
    main()
