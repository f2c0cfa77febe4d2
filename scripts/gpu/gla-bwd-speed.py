#!/usr/bin/env python3
"""chunk_gla's backward (kernels/gla_bwd.tile, CHUNK = 64) on the GPU
beside fla's: the float64 check first, then per-kernel and total backward
times at [8, 2048, H, K] bf16, H K = 2048, V = K, for K = 64, 128, 256.

On the device, after scripts/build-ops.sh here (carry
python/tegula/_bundles, python/tegula/libtegula_rt.so and .whl, the fla,
triton and einops wheels bench/on-device.sh uses):

    python3 -m pip install -q --no-index --no-deps --no-compile \\
        --target /tmp/site .whl/*.whl && \\
    PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 \\
        python3 scripts/gpu/gla-bwd-speed.py [--no-check] [--no-fla] \
        [--picked-only] [--sizes 64,128,256]

Prints PASS/FAIL lines for the float64 check (check-gla-ops.py's
check_gla: forward and every gradient against the step recurrence's
autograd, ragged T, h0 and dht, f16 and bf16, strong and mixed gates, both
forward forms), then per size: "bwd" (autograd.grad of o alone, the
forward's graph kept; median of 3 x 20 calls), fwd and fwd+bwd, for
tegula's picked form (chunked: its scores kept for the backward), its
chunk_gla_fwd form (the backward recomputes the scores; --picked-only
leaves it out) and fla; and
"kernels" (each forward and backward kernel's GPU time from the profiler,
one call, and their sum). Exits 1 on a failed check. fla autotunes on its
first calls (222 s at K = 256 on an H200, stop 36): --sizes splits the
run under a 600 s limit.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tegula.ops  # noqa: E402
from tegula.ops import _gla  # noqa: E402

import ops_report  # noqa: E402
from ops_report import report, time_of  # noqa: E402


def check_gla_ops():
    """check-gla-ops.py as a module (its file name has dashes)."""
    spec = importlib.util.spec_from_file_location(
        "check_gla_ops", os.path.join(HERE, "check-gla-ops.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(cgo):
    """The backward's float64 check at every shipped (K, V)."""
    for form in (None, True):
        _gla.FORWARD_CHUNKED = form
        for kd, vd in _gla._prebuilt.GLA_DIMS:
            cgo.check_gla((2, 150, 2, kd), vd, torch.bfloat16, -0.3,
                          use_h0=True, gate="mixed")
            cgo.check_gla((1, 77, 3, kd), vd, torch.float16, None,
                          gate="strong")
        cgo.check_gla((2, 130, 2, 64), 128, torch.bfloat16, 0.2,
                      gate_dtype=torch.bfloat16, final=False)
        cgo.check_gla((1, 1, 2, 64), 64, torch.bfloat16, None, use_h0=True)
    _gla.FORWARD_CHUNKED = None


def median_ms(fn):
    return sorted(time_of(fn) for _ in range(3))[1]


def kernel_table(fn):
    """(name, ms) of every GPU kernel of one call of fn, by time."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    rows = [(e.key, e.device_time_total / 1e3) for e in prof.key_averages()
            if e.device_time_total > 0]
    return sorted(rows, key=lambda r: -r[1])


def speed(fla_chunk_gla, sizes):
    for d in sizes:
        b, t, h = 8, 2048, 2048 // d
        q, k, v = (torch.randn(b, t, h, d, device="cuda", dtype=torch.bfloat16,
                               requires_grad=True) for _ in range(3))
        g = F.logsigmoid(torch.randn(b, t, h, d, device="cuda")) \
            .requires_grad_()
        do = torch.randn(b, t, h, d, device="cuda", dtype=torch.bfloat16)
        # tegula's picked form (the chunked one, keeping its scores for the
        # backward), and chunk_gla_fwd's, whose backward recomputes them.
        impls = [("tegula", tegula.ops.chunk_gla, None)]
        if "--picked-only" not in sys.argv:
            impls.append(("tegula chunk_gla_fwd", tegula.ops.chunk_gla,
                          False))
        if fla_chunk_gla is not None:
            impls.append(("fla", fla_chunk_gla, None))
        times = {}
        for label, fn, form in impls:
            _gla.FORWARD_CHUNKED = form

            def fwd(fn=fn):
                with torch.no_grad():
                    fn(q, k, v, g)

            def fwd_bwd(fn=fn):
                o, _ = fn(q, k, v, g)
                torch.autograd.grad(o, (q, k, v, g), do)

            o, _ = fn(q, k, v, g)

            def bwd(o=o):
                torch.autograd.grad(o, (q, k, v, g), do, retain_graph=True)

            times[label] = (median_ms(bwd), median_ms(fwd), median_ms(fwd_bwd))
            for part, call in (("fwd", fwd), ("bwd", bwd)):
                rows = kernel_table(call)
                total = sum(ms for _, ms in rows)
                report(None, f"kernels {label} {part} [{b}, {t}, {h}, {d}]",
                       "; ".join(f"{n[:48]} {ms:.3f}" for n, ms in rows) +
                       f"; sum {total:.3f} ms")
            del o
        _gla.FORWARD_CHUNKED = None
        text = "; ".join(f"{n} bwd {a:.3f} ms (fwd {f:.3f}, fwd+bwd {c:.3f})"
                         for n, (a, f, c) in times.items())
        if "fla" in times:
            text += (f"; fla/tegula bwd {times['fla'][0] / times['tegula'][0]:.2f}"
                     f"x, fwd+bwd {times['fla'][2] / times['tegula'][2]:.2f}x")
        report(None, f"speed chunk_gla bwd [{b}, {t}, {h}, {d}] bf16", text)


def main():
    ops_report.seed_inputs(sys.argv)
    if "--no-check" not in sys.argv:
        check(check_gla_ops())
    fla_chunk_gla = None
    if "--no-fla" not in sys.argv:
        try:
            from fla.ops.gla import chunk_gla as fla_chunk_gla
        except ImportError as error:
            report(None, "speed", f"fla not importable ({error})")
    sizes = (64, 128, 256)
    if "--sizes" in sys.argv:
        sizes = [int(x) for x in sys.argv[sys.argv.index("--sizes") + 1]
                 .split(",")]
    speed(fla_chunk_gla, sizes)
    print(f"gla-bwd-speed: {ops_report.failures} failed", flush=True)
    return 1 if ops_report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
