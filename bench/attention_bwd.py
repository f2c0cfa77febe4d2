"""bench/run.py's attention_bwd section: kernels/attention_bwd.tile (the
preprocess, dK/dV and dQ launches, timed together) beside the backward of
PyTorch SDPA with its cuDNN and flash backends.

Tegula's backward reads the o and lse of Tegula's own forward
(attention_fwd_lse, untimed); the peers' backward is torch.autograd.grad of
their own forward's output, which their forward saved what it needs for.
Backward FLOPs are 2.5 x the forward's 4 Z H N^2 D (five N^2 D products
against two), halved for causal, the convention of FlashAttention's
benchmarks; Tegula's dQ kernel recomputes two of them, which the figure does
not count. Every implementation is checked against float64 autograd at a
ragged size first, and at each timed shape every peer's gradients are
compared with Tegula's.
"""
import os
import traceback

import torch

import baselines

# run.py's helpers, set by section(): timing, recording and checking.
time_cuda = record = checked = None


def bundle(tile, d, causal, kernel, default=False):
    """The forward with lse, dK/dV and dQ: the swept bundles of
    bench/stage.sh (STAGE/bench, bench/tuning/sweeps.sh), each launching
    its tuned config; the preprocess, and with `default` every backward
    kernel, as scripts/gpu/stage-kernels.sh stages them for the GPU checks
    (STAGE/kernels, sm_90a, the kernels' default blocks), as an absolute
    path, which Tegula.run's join keeps as it is."""
    c = "-causal" if causal else ""
    if kernel == "attention_fwd_lse":
        return f"attn-fwd-lse-d{d}{c}/{kernel}.json"
    if not default and kernel != "attention_bwd_preprocess":
        short = kernel[len("attention_bwd_"):]
        return f"attn-bwd-{short}-d{d}{c}/{kernel}.json"
    return os.path.abspath(os.path.join(
        tile.bundles, "..", "kernels", f"attn-bwd-d{d}{c}-sm_90a",
        f"{kernel}.json"))


# Tegula's builds: the tuned sweeps, and the kernels' defaults (spill-free
# on sm_80 and sm_90a, the blocks a user gets without a table).
BUILDS = {"tegula": False, "tegula-defaults": True}


def tegula_backward(tile, q, k, v, do, causal, scale, default):
    """Runs Tegula's forward (untimed) for o and lse, and returns
    run(bench) -> ((dq, dk, dv), ms, config): the three backward launches,
    with `bench` the sum of their median times (each timed as run.py times
    every call), and the configs dK/dV and dQ ran (None for defaults)."""
    z, h, n, d = q.shape
    # Queries (M) and keys (N) are both n; the preprocess has no keys.
    dims = dict(Z=z, H=h, M=n, N=n)
    fwd, _ = tile.run(bundle(tile, d, causal, "attention_fwd_lse"), dims,
                      dict(q=q, k=k, v=v), ["o", "lse"], dict(scale=scale),
                      bench=False)

    def run(bench):
        def launch(kernel, ins, outs, scalars=None):
            path = bundle(tile, d, causal, kernel, default)
            sizes = (dict(Z=z, H=h, M=n)
                     if kernel == "attention_bwd_preprocess" else dims)
            return tile.run(path, sizes, ins, outs, scalars, bench=bench)
        pre, ms_pre = launch("attention_bwd_preprocess",
                             dict(o=fwd["o"], do=do), ["delta"])
        ins = dict(q=q, k=k, v=v, do=do, lse=fwd["lse"], delta=pre["delta"])
        kv, ms_kv = launch("attention_bwd_dkdv", ins, ["dk", "dv"],
                           dict(scale=scale))
        config = tile.last_config and f"dkdv {tile.last_config}"
        qg, ms_q = launch("attention_bwd_dq", ins, ["dq"], dict(scale=scale))
        if config:
            config += f"; dq {tile.last_config}"
        grads = (qg["dq"], kv["dk"], kv["dv"])
        return grads, (ms_pre + ms_kv + ms_q) if bench else None, config
    return run


def sdpa_backward(backend, q, k, v, do, causal, scale):
    """fn() -> (dq, dk, dv) through SDPA's backward with one backend, the
    forward run once outside (its saved tensors are reused)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    which = {"cudnn": SDPBackend.CUDNN_ATTENTION,
             "flash": SDPBackend.FLASH_ATTENTION}[backend]
    leaves = [x.detach().requires_grad_() for x in (q, k, v)]
    with sdpa_kernel(which):
        o = torch.nn.functional.scaled_dot_product_attention(
            *leaves, is_causal=causal, scale=scale)

    def run():
        with sdpa_kernel(which):
            return torch.autograd.grad(o, leaves, do, retain_graph=True)
    return run


def ref_backward(q, k, v, do, causal, scale):
    """float64 autograd through baselines.ref_attention."""
    leaves = [x.double().requires_grad_() for x in (q, k, v)]
    o = baselines.ref_attention(*leaves, causal, scale)
    return torch.autograd.grad(o, leaves, do.double())


def check_grads(checks, label, grads, ref, tol=1e-2):
    for name, g, r in zip(("dq", "dk", "dv"), grads, ref):
        checked(f"{label} {name}", g, r, tol, checks)


def section(tile, rows, checks, time_fn, record_fn, checked_fn):
    global time_cuda, record, checked
    time_cuda, record, checked = time_fn, record_fn, checked_fn
    g = torch.Generator(device="cuda").manual_seed(8)

    def randn(*shape):
        return torch.randn(*shape, device="cuda", generator=g,
                           dtype=torch.bfloat16)

    # Every implementation against float64 at a ragged size.
    for d in (64, 128):
        for causal in (False, True):
            q, k, v, do = (randn(1, 2, 333, d) for _ in range(4))
            scale = d ** -0.5
            ref = ref_backward(q, k, v, do, causal, scale)
            label = f"N=333 D={d} causal={causal} vs float64"
            for impl, default in BUILDS.items():
                try:
                    grads, _, _ = tegula_backward(tile, q, k, v, do, causal,
                                                  scale, default)(False)
                    check_grads(checks, f"attention_bwd {impl} {label}",
                                grads, ref)
                except Exception:
                    traceback.print_exc()
                    checks.append({"check": f"attention_bwd {impl} {label} "
                                   "raised", "rel_l2": float("nan"),
                                   "tol": 0, "pass": False})
            for backend in ("cudnn", "flash"):
                try:
                    grads = sdpa_backward(backend, q, k, v, do, causal,
                                          scale)()
                except Exception as e:
                    print(f"  sdpa-{backend}: skipped ({type(e).__name__}: "
                          f"{str(e)[:160]})", flush=True)
                    continue
                check_grads(checks, f"attention_bwd sdpa-{backend} {label}",
                            grads, ref)

    # 16k tokens: H = 32 heads of 64 or 16 of 128, N = 1024 and 4096.
    for d, h in ((64, 32), (128, 16)):
        for n in (1024, 4096):
            z = 16384 // n
            for causal in (False, True):
                shape = dict(Z=z, H=h, N=n, D=d, causal=causal)
                print(f"attention_bwd {shape}", flush=True)
                flops = 10 * z * h * n * n * d // (2 if causal else 1)
                q, k, v, do = (randn(z, h, n, d) for _ in range(4))
                scale = d ** -0.5
                ours = None
                for impl, default in BUILDS.items():
                    grads, ms, config = tegula_backward(
                        tile, q, k, v, do, causal, scale, default)(True)
                    if ours is None:
                        ours = grads
                    else:
                        check_grads(checks, f"attention_bwd {impl} vs tegula "
                                    f"{shape}", grads, ours)
                    record(rows, "attention_bwd", impl, shape, ms,
                           flops=flops, config=config)
                for backend in ("cudnn", "flash"):
                    name = f"sdpa-{backend}"
                    try:
                        fn = sdpa_backward(backend, q, k, v, do, causal,
                                           scale)
                        grads = fn()
                    except Exception as e:
                        print(f"  {name}: skipped ({type(e).__name__}: "
                              f"{str(e)[:160]})", flush=True)
                        continue
                    check_grads(checks, f"attention_bwd {name} vs tegula "
                                f"{shape}", grads, ours)
                    record(rows, "attention_bwd", name, shape,
                           time_cuda(fn), flops=flops)
                    del fn, grads
                del q, k, v, do, ours
