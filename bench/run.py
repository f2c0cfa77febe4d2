#!/usr/bin/env python3
"""Times Tegula's kernels beside their peers, in one run, on one GPU.

Runs on the GPU machine, after `bench/stage.sh` here compiled the bundles
(the GPU machine has no MLIR):

    python3 bench/run.py --stage .device-bundle --out DIR

Tegula's kernels run through the tegula Python package (python/, over
libtegula_rt.so) on torch tensors, timed exactly as the peers are: one
event pair per call, 10 warm-up calls, the median of 100. Attention
forward and GEMM, which run the H100 at its power cap, time every
implementation of a shape in 3 rounds with the order rotated, and report
the median of the rounds (time_rotated says why). Peers:

- attention: PyTorch SDPA with its cuDNN and flash backends, and the Triton
  flash-attention kernel of bench/baselines.py;
- rotary: eager PyTorch and a Triton kernel (bench/baselines.py);
- GEMM (runtime M, N, K): cuBLAS through torch.matmul and the Triton
  tutorial matmul (bench/baselines.py);
- RMSNorm with a row loop: eager PyTorch, a Triton kernel, and a plain copy
  of the same bytes as the bandwidth floor;
- attention_family (kernels/attention_gqa.tile, attention_varlen.tile,
  attention_paged.tile, as staged for the GPU checks): GQA prefill and
  decode against SDPA cuDNN and flash (enable_gqa=True where torch takes
  it, else K/V repeated once, untimed) and the Triton kernel on repeated
  K/V; varlen against one SDPA call per sequence; paged decode against
  gather-then-SDPA and the Triton paged kernel of bench/baselines.py;
- attention_bwd (kernels/attention_bwd.tile): dQ, dK, dV from the forward's
  lse against the backward of SDPA cuDNN and flash (bench/attention_bwd.py);
- layernorm (kernels/layer_norm.tile): forward and backward against the
  Triton tutorial's kernels and eager PyTorch (bench/layernorm.py);
- chunked linear attention: eager PyTorch, a Triton kernel
  (bench/baselines.py), and flash-linear-attention's chunk_linear_attn when
  its wheel was carried (.whl/, see bench/stage.sh).

Every peer is checked against a float64 reference on fresh random inputs at a
ragged size before it is timed, and at the timed shape every output is
compared with Tegula's (computed from the same tensors). The "launch"
section times a loop of calls of a tiny kernel (bench/launch/axpy.tile)
through tegula, Triton and eager PyTorch: microseconds per call on the host.
Results go to DIR/results.json; bench/report.py makes the table and the plot
from it.
"""

import argparse
import datetime
import hashlib
import json
import math
import os
import sys
import time
import traceback

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The tegula package from this checkout (python/), not an installed one.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import baselines  # noqa: E402

WARMUP, REP = 10, 100
HIDDEN, TOKENS = 2048, 16384


def time_cuda(fn, warmup=WARMUP, rep=REP):
    """Median milliseconds of `fn()`, one event pair per call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return float(np.median([s.elapsed_time(e) for s, e in zip(starts, ends)]))


ROUNDS = 3


def time_rotated(fns, rounds=ROUNDS):
    """Median milliseconds of each of `fns` (name -> callable): `rounds`
    rounds that each time_cuda every one, the order rotated each round.
    Under a sustained tensor-core load the H100 holds its 700 W cap by
    lowering its clocks, and a run inherits the clock that the runs before
    it left: measured 2026-11-26 (docs/measurements), Tegula's GEMM at
    4000^3 took 0.202 ms timed first and 0.252 ms right after an 8192^3
    run, and the Tegula/Triton ratio of one shape moved from 0.87 to 1.08
    with the order alone. Rotating gives every implementation each place."""
    names = list(fns)
    samples = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(time_cuda(fns[name]))
    return {name: float(np.median(ms)) for name, ms in samples.items()}


class Tegula:
    """Runs staged bundles through the tegula package (python/, over
    libtegula_rt.so) on the same torch tensors the peers get, on torch's
    current stream, timed like the peers (time_cuda around each call, so
    Python's launch cost counts for Tegula as it does for Triton)."""

    def __init__(self, stage):
        os.environ.setdefault("TEGULA_RT_LIBRARY",
                              os.path.join(stage, "lib", "libtegula_rt.so"))
        import tegula
        self.tegula = tegula
        self.bundles = os.path.join(stage, "bench")
        self.kernels = {}
        # Per swept bundle: its tuning table's state on this GPU
        # (tuning_state); results.json keeps them.
        self.tuning = {}
        # The config the last run() launched, "NAME (source)", or None for
        # a bundle without configs: record() puts it in Tegula's rows.
        self.last_config = None
        # A callable that repeats the last run()'s launch (time_rotated).
        self.last_launch = None

    def kernel(self, bundle):
        if bundle not in self.kernels:
            path = os.path.join(self.bundles, bundle)
            library = self.tegula.load(path)
            self.kernels[bundle] = next(iter(library))
            state = tuning_state(path, torch.cuda.get_device_name())
            if state:
                self.tuning[bundle] = state
                if state != "tuned":
                    print(f"WARNING: {bundle}: {state}", flush=True)
        return self.kernels[bundle]

    def run(self, bundle, dims, inputs, outputs, scalars=None, bench=True):
        """Launches on `inputs` (name -> tensor) with every write-only
        output allocated once and poisoned (NaN) first; returns (outputs,
        median ms or None)."""
        kernel = self.kernel(bundle)
        args = dict(inputs, **(scalars or {}))
        binding = kernel.bind(**args, dims=dims)
        for name, (shape, dtype) in binding.allocations.items():
            args[name] = torch.full(shape, float("nan"), device="cuda",
                                    dtype=getattr(torch, {
                                        "f16": "float16", "bf16": "bfloat16",
                                        "f32": "float32"}[dtype]))
        self.last_config = (None if binding.config is None else
                            f"{binding.config} ({binding.config_source})")
        config = f"config {self.last_config}, " if self.last_config else ""
        print(f"  tegula {kernel.name}: {config}variant {binding.variant}, "
              f"grid {binding.grid}", flush=True)
        kernel(**args, dims=dims)
        results = {name: args[name] for name in outputs}
        self.last_launch = lambda: kernel(**args, dims=dims)
        ms = time_cuda(self.last_launch) if bench else None
        return results, ms


def tuning_state(bundle_json, device):
    """None for a bundle without configs; else "tuned" when its tuning
    table has an entry for `device` whose PTX hashes are the bundle's, or
    why launches take config 0 ("untuned", "STALE": the PTX changed since
    tuning, docs/tuning.md), which the bench must say loudly."""
    bundle = json.load(open(bundle_json))
    if "configs" not in bundle:
        return None
    folder = os.path.dirname(bundle_json)
    table = os.path.join(folder, bundle.get("tuning", "-"))
    entries = [e for e in (json.load(open(table))["entries"]
                           if os.path.exists(table) else [])
               if e["device"] == device]
    if not entries:
        return (f"untuned on {device}: every launch runs config 0 "
                "(bench/tuning/tune-on-device.sh)")
    hashes = {c["name"]: hashlib.sha256(open(os.path.join(
        folder, c["ptx"]), "rb").read()).hexdigest()
        for c in bundle["configs"]}
    if any(e["ptx_sha256"] == hashes for e in entries):
        return "tuned"
    return (f"STALE tuning table on {device}: the PTX changed since it was "
            "tuned, launches run config 0; re-tune "
            "(bench/tuning/tune-on-device.sh)")


def record(rows, work, impl, shape, ms, flops=None, nbytes=None,
           config=None):
    """Appends one timed row, with its TFLOP/s or GB/s, and prints it;
    `config`: the config a Tegula row ran (Tegula.last_config)."""
    row = dict(work=work, impl=impl, **shape, ms=ms)
    if config:
        row["config"] = config
    line = f"  {impl}: {ms:.3f} ms"
    if flops:
        row["tflops"] = flops / ms / 1e9
        line += f" {row['tflops']:.1f} TFLOP/s"
    if nbytes:
        row["gbps"] = nbytes / ms / 1e6
        line += f" {row['gbps']:.0f} GB/s"
    rows.append(row)
    if config:
        line += f" [{config}]"
    print(line, flush=True)


def checked(name, out, ref, tol, log):
    err = baselines.rel_l2(out, ref)
    ok = err < tol and math.isfinite(err)
    log.append({"check": name, "rel_l2": err, "tol": tol, "pass": ok})
    print(f"  check {name}: rel_l2 {err:.3e} (tol {tol:.0e}) "
          f"{'PASS' if ok else 'FAIL'}", flush=True)
    return ok


def sdpa(backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    which = {"cudnn": SDPBackend.CUDNN_ATTENTION,
             "flash": SDPBackend.FLASH_ATTENTION}[backend]

    def run(q, k, v, causal, scale):
        with sdpa_kernel(which):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=causal, scale=scale)
    return run


def attention(tile, rows, checks):
    peers = {"sdpa-cudnn": sdpa("cudnn"), "sdpa-flash": sdpa("flash"),
             "triton": baselines.triton_attention}
    # Every peer against float64 first, at a ragged size.
    g = torch.Generator(device="cuda").manual_seed(1)
    for causal in (False, True):
        q, k, v = (torch.randn(1, 2, 333, 64, device="cuda", generator=g,
                               dtype=torch.bfloat16) for _ in range(3))
        ref = baselines.ref_attention(q, k, v, causal, 0.125)
        for name, fn in peers.items():
            checked(f"attention {name} N=333 causal={causal} vs float64",
                    fn(q, k, v, causal, 0.125), ref, 1e-2, checks)
    for d in (64, 128):
        heads = HIDDEN // d
        for n in (1024, 4096, 16384):
            z = TOKENS // n
            for causal in (False, True):
                flops = 4 * z * heads * n * n * d // (2 if causal else 1)
                shape = dict(Z=z, H=heads, N=n, D=d, causal=causal)
                print(f"attention {shape}", flush=True)
                q, k, v = (torch.randn(z, heads, n, d, device="cuda",
                                       generator=g, dtype=torch.bfloat16)
                           for _ in range(3))
                scale = d ** -0.5
                bundle = f"attn-d{d}{'-causal' if causal else ''}/attention_fwd.json"
                outs, _ = tile.run(bundle, dict(Z=z, H=heads, N=n),
                                   dict(q=q, k=k, v=v), ["o"],
                                   dict(scale=scale), bench=False)
                ours, config = outs["o"], tile.last_config
                fns = {"tegula": tile.last_launch}
                for name, fn in peers.items():
                    o = fn(q, k, v, causal, scale)
                    checked(f"attention {name} vs tegula {shape}", o, ours,
                            1e-2, checks)
                    fns[name] = (lambda fn=fn: fn(q, k, v, causal, scale))
                for name, ms in time_rotated(fns).items():
                    record(rows, "attention", name, shape, ms, flops=flops,
                           config=config if name == "tegula" else None)
                del q, k, v, ours


def attention_family(tile, rows, checks):
    """Attention with M != N and GQA (prefill and decode), varlen over
    packed sequences, and paged-KV decode: bench/attention_family.py, timed
    and checked with this file's helpers."""
    import attention_family as family
    family.section(tile, rows, checks, time_cuda, record, checked)


def attention_bwd(tile, rows, checks):
    """Attention backward (dQ, dK, dV) against SDPA's backward:
    bench/attention_bwd.py, timed and checked with this file's helpers."""
    import attention_bwd as bwd
    bwd.section(tile, rows, checks, time_cuda, record, checked)


def rotary(tile, rows, checks):
    g = torch.Generator(device="cuda").manual_seed(2)
    peers = {"eager": baselines.eager_rotary,
             "triton": baselines.triton_rotary}
    x = torch.randn(2, 37, 3, 128, device="cuda", generator=g,
                    dtype=torch.bfloat16)
    ang = torch.rand(37, 32, device="cuda", generator=g) * 6.3
    ref = baselines.ref_rotary(x, ang.cos(), ang.sin(), False)
    for name, fn in peers.items():
        checked(f"rotary {name} partial R=64 vs float64",
                fn(x, ang.cos(), ang.sin()), ref, 1e-2, checks)
    b, t, h, d = 8, 4096, 32, 128
    x = torch.randn(b, t, h, d, device="cuda", generator=g,
                    dtype=torch.bfloat16)
    ang = torch.rand(t, d // 2, device="cuda", generator=g) * 6.3
    cos, sin = ang.cos(), ang.sin()
    # Bytes that must move: x in, out out, cos and sin in.
    nbytes = 2 * x.numel() * 2 + 2 * cos.numel() * 4
    shape = dict(B=b, T=t, H=h, D=d)
    print(f"rotary {shape}", flush=True)
    outs, ms = tile.run("rotary/rotary.json", dict(B=b, T=t, H=h),
                        dict(x=x, cos=cos, sin=sin), ["out"])
    record(rows, "rotary", "tegula", shape, ms, nbytes=nbytes,
           config=tile.last_config)
    for name, fn in peers.items():
        checked(f"rotary {name} vs tegula {shape}", fn(x, cos, sin),
                outs["out"], 1e-2, checks)
        ms = time_cuda(lambda: fn(x, cos, sin))
        record(rows, "rotary", name, shape, ms, nbytes=nbytes)


def fla_linear_attention():
    """flash-linear-attention's chunked kernel, if its wheel was carried."""
    try:
        from fla.ops.linear_attn import chunk_linear_attn
    except Exception as e:  # not carried, or it does not import here
        print(f"flash-linear-attention not available: {e}", flush=True)
        return None

    def run(q, k, v, scale):
        return chunk_linear_attn(q, k, v, scale=scale, normalize=False)[0]
    return run


def linear_attention(tile, rows, checks):
    g = torch.Generator(device="cuda").manual_seed(3)
    peers = {"eager": baselines.eager_linear_attention,
             "triton": baselines.triton_linear_attention}
    fla = fla_linear_attention()
    if fla:
        peers["fla"] = fla
    q, k, v = (torch.randn(2, 150, 3, 128, device="cuda", generator=g,
                           dtype=torch.bfloat16) for _ in range(3))
    for scale in (-0.3, 0.088):
        ref = baselines.ref_linear_attention(q, k, v, scale)
        for name, fn in peers.items():
            checked(f"linear attention {name} T=150 scale={scale} vs float64",
                    fn(q, k, v, scale), ref, 1e-2, checks)
    for b, t, h, d in ((8, 2048, 16, 128), (4, 8192, 16, 128)):
        shape = dict(B=b, T=t, H=h, D=d)
        print(f"linear attention {shape}", flush=True)
        q, k, v = (torch.randn(b, t, h, d, device="cuda", generator=g,
                               dtype=torch.bfloat16) for _ in range(3))
        scale = d ** -0.5
        dims = dict(B=b, T=t, H=h)
        ins = dict(q=q, k=k, v=v)
        # Bytes that must move: q, k, v in, o out.
        nbytes = 4 * q.numel() * 2

        def timed(impl, ms, config=None):
            record(rows, "linear_attention", impl, shape, ms, nbytes=nbytes,
                   config=config)

        # Form (a): state in registers, one kernel, in 64- and 32-row
        # chunks (two swept bundles); the first is the one every other
        # output is compared with.
        ours = None
        for label, bundle in (("tegula (a) BLOCK_T=64", "linattn-bt64"),
                              ("tegula (a) BLOCK_T=32", "linattn-bt32")):
            outs, ms = tile.run(f"{bundle}/linear_attention.json", dims, ins,
                                ["o"], dict(scale=scale))
            if ours is None:
                ours = outs["o"]
            else:
                checked(f"linear attention {label} vs the first (a) {shape}",
                        outs["o"], ours, 1e-2, checks)
            timed(label, ms, tile.last_config)
        # Form (b): two kernels; its time is the sum of both.
        nc = -(-t // 64)
        states, ms_states = tile.run(
            "linattn-states/linear_attention_states.json",
            dict(dims, NC=nc), dict(k=k, v=v), ["states"])
        config = tile.last_config
        outs, ms_chunks = tile.run(
            "linattn-chunks/linear_attention_chunks.json", dict(dims, NC=nc),
            dict(ins, states=states["states"]), ["o"], dict(scale=scale))
        checked(f"linear attention tegula (b) vs (a) {shape}", outs["o"],
                ours, 1e-2, checks)
        timed("tegula (b)", ms_states + ms_chunks,
              f"states {config}; chunks {tile.last_config}")
        # Form (c): recurrent.
        outs, ms = tile.run(
            "linattn-recurrent/linear_attention_recurrent.json", dims, ins,
            ["o"], dict(scale=scale))
        checked(f"linear attention tegula (c) vs (a) {shape}", outs["o"],
                ours, 1e-2, checks)
        timed("tegula (c)", ms, tile.last_config)
        for name, fn in peers.items():
            checked(f"linear attention {name} vs tegula {shape}",
                    fn(q, k, v, scale), ours, 1e-2, checks)
            timed(name, time_cuda(lambda: fn(q, k, v, scale)))
        del q, k, v, ours


def gemm(tile, rows, checks):
    """C = A @ B over runtime M, N, K: cuBLAS (torch.matmul), the Triton
    tutorial kernel and Tegula's kernels/matmul.tile."""
    g = torch.Generator(device="cuda").manual_seed(4)
    peers = {"cublas": torch.matmul, "triton": baselines.triton_matmul}
    a = torch.randn(333, 271, device="cuda", generator=g, dtype=torch.bfloat16)
    b = torch.randn(271, 190, device="cuda", generator=g, dtype=torch.bfloat16)
    ref = baselines.ref_matmul(a, b)
    for name, fn in peers.items():
        checked(f"gemm {name} 333x190x271 vs float64", fn(a, b), ref, 1e-2,
                checks)
    outs, _ = tile.run("matmul/matmul.json", dict(M=333, N=190, K=271),
                       dict(a=a, b=b), ["c"], bench=False)
    checked("gemm tegula 333x190x271 vs float64", outs["c"], ref, 1e-2, checks)
    for m, n, k in ((2048, 2048, 2048), (4096, 4096, 4096),
                    (8192, 8192, 8192), (4000, 4000, 4000)):
        shape = dict(M=m, N=n, K=k)
        print(f"gemm {shape}", flush=True)
        a = torch.randn(m, k, device="cuda", generator=g, dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", generator=g, dtype=torch.bfloat16)
        flops = 2 * m * n * k
        outs, _ = tile.run("matmul/matmul.json", shape, dict(a=a, b=b),
                           ["c"], bench=False)
        ours, config = outs["c"], tile.last_config
        fns = {"tegula": tile.last_launch}
        for name, fn in peers.items():
            checked(f"gemm {name} vs tegula {shape}", fn(a, b), ours, 1e-2,
                    checks)
            fns[name] = (lambda fn=fn: fn(a, b))
        for name, ms in time_rotated(fns).items():
            record(rows, "gemm", name, shape, ms, flops=flops,
                   config=config if name == "tegula" else None)
        del a, b, ours


def rmsnorm(tile, rows, checks):
    """RMSNorm over rows: eager PyTorch, a Triton kernel, Tegula's row-loop
    kernels/rmsnorm.tile, and a plain copy of the same bytes (the floor)."""
    g = torch.Generator(device="cuda").manual_seed(5)
    peers = {"eager": baselines.eager_rmsnorm,
             "triton": baselines.triton_rmsnorm}
    eps = 1e-6
    x = torch.randn(37, 3000, device="cuda", generator=g, dtype=torch.bfloat16)
    w = torch.randn(3000, device="cuda", generator=g, dtype=torch.bfloat16)
    ref = baselines.ref_rmsnorm(x, w, eps)
    for name, fn in peers.items():
        checked(f"rmsnorm {name} 37x3000 vs float64", fn(x, w, eps), ref, 1e-2,
                checks)
    outs, _ = tile.run("rmsnorm/rmsnorm.json", dict(R=37, C=3000),
                       dict(x=x, w=w), ["y"], dict(eps=eps), bench=False)
    checked("rmsnorm tegula 37x3000 vs float64", outs["y"], ref, 1e-2, checks)
    for r, c in ((16384, 4096), (4096, 16384), (16384, 8192)):
        shape = dict(R=r, C=c)
        print(f"rmsnorm {shape}", flush=True)
        x = torch.randn(r, c, device="cuda", generator=g, dtype=torch.bfloat16)
        w = torch.randn(c, device="cuda", generator=g, dtype=torch.bfloat16)
        nbytes = (2 * r * c + c) * 2
        outs, ms = tile.run("rmsnorm/rmsnorm.json", shape, dict(x=x, w=w),
                            ["y"], dict(eps=eps))
        ours = outs["y"]
        record(rows, "rmsnorm", "tegula", shape, ms, nbytes=nbytes,
               config=tile.last_config)
        for name, fn in peers.items():
            checked(f"rmsnorm {name} vs tegula {shape}", fn(x, w, eps), ours,
                    1e-2, checks)
            record(rows, "rmsnorm", name, shape,
                   time_cuda(lambda: fn(x, w, eps)), nbytes=nbytes)
        y = torch.empty_like(x)
        record(rows, "rmsnorm", "copy", shape,
               time_cuda(lambda: y.copy_(x)), nbytes=2 * r * c * 2)
        del x, w, y, ours


def launch(tile, rows, checks):
    """Host cost per call of a kernel too small to matter (axpy on 1024
    f32): wall time of a loop of calls, then one synchronize. Same work,
    same tensors for tegula, Triton and eager PyTorch."""
    n = 1024
    x = torch.randn(n, device="cuda")
    y0 = torch.randn(n, device="cuda")
    kernel = tile.kernel("axpy/axpy.json")
    y = y0.clone()
    kernel(x, y, a=0.5)
    checked("launch axpy tegula vs float64", y, 0.5 * x.double() + y0.double(),
            1e-6, checks)
    y = y0.clone()
    baselines.triton_axpy(x, y, 0.5)
    checked("launch axpy triton vs float64", y, 0.5 * x.double() + y0.double(),
            1e-6, checks)
    calls = 20000
    peers = {"tegula": lambda: kernel(x, y, a=0.5),
             "triton": lambda: baselines.triton_axpy(x, y, 0.5),
             "eager": lambda: y.add_(x, alpha=0.5)}
    for name, fn in peers.items():
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        us = (time.perf_counter() - t0) / calls * 1e6
        rows.append(dict(work="launch", impl=name, N=n, us_per_call=us))
        print(f"  launch {name}: {us:.2f} us per call", flush=True)


def gemm_gelu(tile, rows, checks):
    """GEMM + bias + exact GELU: bench/fused.py."""
    import fused
    fused.gemm_gelu(tile, rows, checks, time_cuda, record, checked)


def cross_entropy(tile, rows, checks):
    """Fused cross-entropy over 32k-128k vocabularies: bench/fused.py."""
    import fused
    fused.cross_entropy(tile, rows, checks, time_cuda, record, checked)


def layernorm(tile, rows, checks):
    """The Triton tutorial's LayerNorm, forward and backward:
    bench/layernorm.py."""
    import layernorm as ln
    ln.section(tile, rows, checks, time_cuda, record, checked)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage", default=".device-bundle")
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--only", nargs="+",
                        choices=["launch", "attention", "rotary",
                                 "linear_attention", "gemm", "rmsnorm",
                                 "attention_family", "attention_bwd",
                                 "gemm_gelu", "cross_entropy", "layernorm"],
                        help="run these sections only (one run of the "
                             "whole set takes more than a device call's "
                             "10 minutes)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench/run.py: no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    rows, checks = [], []
    tile = Tegula(args.stage)
    for name, fn in (("launch", launch), ("gemm", gemm), ("rmsnorm", rmsnorm),
                     ("rotary", rotary),
                     ("linear_attention", linear_attention),
                     ("attention", attention),
                     ("attention_family", attention_family),
                     ("attention_bwd", attention_bwd),
                     ("gemm_gelu", gemm_gelu),
                     ("cross_entropy", cross_entropy),
                     ("layernorm", layernorm)):
        if args.only and name not in args.only:
            continue
        # A section that breaks is reported as a failed check; the
        # others still run (device time is scarce).
        try:
            fn(tile, rows, checks)
        except Exception:
            traceback.print_exc()
            checks.append({"check": f"{name}: section raised",
                           "rel_l2": float("nan"), "tol": 0,
                           "pass": False})
    props = torch.cuda.get_device_properties(0)
    result = {
        "date": datetime.date.today().isoformat(),
        "gpu": props.name,
        "torch": torch.__version__,
        "triton": __import__("triton").__version__,
        "cudnn": torch.backends.cudnn.version(),
        "command": "python3 bench/run.py " + " ".join(sys.argv[1:]),
        "timing": f"CUDA events per call, {WARMUP} warm-up, median of {REP}; "
                  f"attention and GEMM: {ROUNDS} rounds in rotated order, "
                  "the median of the rounds' medians; "
                  "launch: host wall time per call over 20000 calls",
        "rows": rows,
        "checks": checks,
        # Each swept bundle's tuning table on this GPU: "tuned", or why
        # its launches ran config 0 (untuned, STALE).
        "tuning": tile.tuning,
    }
    path = os.path.join(args.out, "results.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    failed = [c["check"] for c in checks if not c["pass"]]
    untuned = sorted(b for b, state in tile.tuning.items() if state != "tuned")
    if untuned:
        print(f"WARNING: {len(untuned)} bundles ran untuned or with STALE "
              f"tables (config 0): {', '.join(untuned)}", flush=True)
    print(f"wrote {path}; {len(checks) - len(failed)} checks passed, "
          f"{len(failed)} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
