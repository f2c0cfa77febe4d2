#!/usr/bin/env python3
"""Times tegula.ops, forward and forward + backward, beside their peers in
one run on one GPU; the host cost of one op call; and the tokens per second
of the two training runs (bench/train_llama.py, bench/train_gla.py).

    python3 bench/ops_bench.py --out DIR [--only SECTION...] \\
        [--llama A.json B.json ...] [--gla A.json B.json ...] [--budget S]

On the GPU machine: scripts/gpu/ops-bench.sh (it installs the carried fla
wheel to /tmp/site and puts python/ first on PYTHONPATH). The ops are those
of this checkout's python/tegula with their prebuilt bundles
(scripts/build-ops.sh), called as a model author calls them.

Sections (--only; all by default):

- attention: tegula.ops.attention against torch SDPA with its cuDNN and
  flash backends (torch.nn.attention.sdpa_kernel) at [B, H, N, D] =
  (4, 16, 4096, 128) and (8, 16, 2048, 64), causal and not, and GQA at
  B 4, H 32, HKV 8, N 4096, D 128 (SDPA with enable_gqa=True, or K/V
  repeated inside the timed call where a backend refuses it);
- varlen: tegula.ops.attention_varlen over one packed batch (12 sequences
  of 256 to 3000 tokens, 16384 in all) at D = 64 and 128 (H = 2048 / D;
  HKV = H, and 4 query heads a K/V head at D = 128), causal and not,
  against PyTorch's torch.nn.attention.varlen.varlen_attn where it imports;
- rms_norm: x [16384, 4096] bf16 and w, against torch.nn.functional.rms_norm
  eager and torch.compile'd;
- cross_entropy: logits [4096, 128256] bf16, mean loss, against
  torch.nn.functional.cross_entropy on the logits cast to float, eager and
  torch.compile'd;
- rotary: x [8, 4096, 32, 128], cos/sin [4096, 64], against the eager
  PyTorch rotary of bench/baselines.py, eager and torch.compile'd;
- gla: tegula.ops.chunk_gla against fla.ops.gla.chunk_gla at head dims 64,
  128 and 256 ([8, 2048, H, D], H * D = 2048, f32 log-sigmoid gates);
- linear: tegula.ops.chunk_linear_attention against fla's
  chunk_linear_attn(normalize=False) at the same shapes;
- decode: tegula.ops.attention_decode (forward only) against gather-then-
  SDPA and the Triton paged kernel of bench/baselines.py (and flash-attn's
  flash_attn_with_kvcache where it imports) at B 32, H 32, HKV 8, D 128,
  PAGE 16, 64, 256, 1k to 8k keys a sequence (bench/attention_family.py's
  paged inputs);
- host: wall time per call over many calls (--calls, 2000) of a tiny
  problem (attention [1, 1, 128, 64], rms_norm [1, 64], cross_entropy
  [1, 128], one decoding step of fused_recurrent_gla and
  fused_recurrent_linear_attention at [1, 1, 4, 64] with a carried state)
  through tegula.ops, through the op's tegula kernel called directly, and
  eager PyTorch or fla; beside one launch of bench/run.py's Triton axpy and
  one eager add_. Python and dispatch cost, not GPU time;
- train: tokens/s and final loss of the JSON files that bench/train_llama.py
  and bench/train_gla.py wrote with --out (--llama, --gla); no GPU needed.

Timing is bench/run.py's (imported, not copied): CUDA events around each
call, 10 warm-up calls, the median of 100, every implementation of a shape
in 3 rounds with the order rotated (time_rotated), the median of the
rounds. "fwd" is the forward under torch.no_grad(); "fwd+bwd" the forward
with autograd, then torch.autograd.grad of a fixed upstream gradient with
respect to every differentiable input. Before any timing, tegula's output
and gradients are compared with each peer's at the timed shape (relative
L2 within 1e-2 for bf16, 3e-3 for f16: run.py's `checked`); a failing
comparison marks both rows. A peer that is missing or cannot run a shape
gives an INFO row; a section or shape that raises is recorded and the run
goes on. DIR/ops-results.json and DIR/ops-results.md are rewritten after
every section (a run cut off by a timeout keeps what it measured), and
DIR/ops-results.png (matplotlib, optional) at the end.
"""

import argparse
import datetime
import json
import math
import os
import signal
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ops_report import CALLS, TRITON_OP, plot, render, shape_text  # noqa: E402
ROOT = os.path.dirname(HERE)

SECTIONS = ("attention", "varlen", "rms_norm", "cross_entropy", "rotary",
            "gla", "linear", "decode", "host", "train")
# Relative L2 of tegula's outputs against a peer's, by the inputs' dtype.
TOL = {"bfloat16": 1e-2, "float16": 3e-3}
# Each table (a row's "work"), in the order of the Markdown file.
ATTENTION_SHAPES = ((4, 16, 16, 4096, 128), (8, 16, 16, 2048, 64),
                    (4, 32, 8, 4096, 128))  # B, H, HKV, N, D

# Set by load_gpu(): torch, bench/run.py (its timing and checking helpers),
# bench/baselines.py; the train section and the rendering need none of them.
torch = F = bench_run = baselines = None
# time.monotonic() after which no section or shape starts (--budget).
DEADLINE = None


class Stopped(BaseException):
    """SIGTERM (the device script's timeout): save what was measured."""


def _on_sigterm(signum, frame):
    raise Stopped("stopped by SIGTERM (timeout)")


def out_of_time():
    return DEADLINE is not None and time.monotonic() > DEADLINE


def load_gpu():
    """torch, bench/run.py's helpers and bench/baselines.py. Importing
    run.py puts this checkout's python/ first on sys.path, so each section's
    `import tegula.ops` takes this checkout's package (a failure there is
    that section's error)."""
    global torch, F, bench_run, baselines
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import torch as torch_module
    import run as run_module  # bench/run.py
    import baselines as baselines_module
    torch, F = torch_module, torch_module.nn.functional
    bench_run, baselines = run_module, baselines_module


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


class Results:
    """Rows, checks and errors of the run; save() writes the JSON and the
    Markdown (after every section)."""

    def __init__(self, out, argv):
        self.out = out
        self.rows, self.checks, self.errors = [], [], []
        self.meta = {
            "date": datetime.date.today().isoformat(),
            "command": "python3 bench/ops_bench.py " + " ".join(argv),
        }

    def add(self, **row):
        self.rows.append(row)
        return row

    def info(self, work, impl, shape, text):
        print(f"  INFO {work} {impl} {shape_text(shape)}: {text}",
              flush=True)
        self.add(work=work, impl=impl, shape=shape, info=text)

    def error(self, where, exc):
        text = f"{type(exc).__name__}: {str(exc)[:300]}"
        traceback.print_exc()
        self.errors.append({"where": where, "error": text})
        # As run.py: a part that broke counts as a failed check.
        self.checks.append({"check": f"{where}: raised {text}",
                            "rel_l2": float("nan"), "tol": 0,
                            "pass": False})

    def result(self):
        return dict(self.meta, rows=self.rows, checks=self.checks,
                    errors=self.errors)

    def save(self):
        os.makedirs(self.out, exist_ok=True)
        result = self.result()
        with open(os.path.join(self.out, "ops-results.json"), "w") as f:
            json.dump(result, f, indent=1)
        with open(os.path.join(self.out, "ops-results.md"), "w") as f:
            f.write(render(result))


def guarded(res, where, fn):
    """Runs one section or shape; an exception is recorded and the run goes
    on (device time is scarce)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - recorded, run goes on
        res.error(where, exc)
    finally:
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()


# ---------------------------------------------------------------------------
# One shape: check every implementation against tegula's, then time them.

def bench_shape(res, work, shape, impls, args, wrt=(), grad_out=None,
                grad_names=(), flops=None, nbytes=None):
    """impls: name -> fn(*args) -> the op's output tensor, "tegula" first.
    With `wrt` (inputs that require grad) also the gradients of that output
    for `grad_out` (None for a scalar) are compared and timed."""
    label = shape_text(shape)
    print(f"{work} {label}", flush=True)
    tol = TOL[dtype_name(args[0])]
    backward = bool(wrt)
    names = ["out"] + [f"d{n}" for n in grad_names]

    def fwd_bwd(fn):
        return torch.autograd.grad(fn(*args), wrt, grad_out)

    outputs, working, got, out = {}, {}, None, None
    for name, fn in impls.items():
        try:
            with torch.enable_grad() if backward else torch.no_grad():
                out = fn(*args)
                got = [out.detach()]
                if backward:
                    got += list(torch.autograd.grad(out, wrt, grad_out))
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - the peer is skipped
            text = f"{type(exc).__name__}: {str(exc)[:200]}"
            if name == "tegula":
                res.error(f"{work} tegula {label}", exc)
            else:
                res.info(work, name, shape, f"skipped ({text})")
            continue
        outputs[name], working[name] = got, fn
    status = {name: "none" for name in working}
    worst = {}
    ours = outputs.get("tegula")
    for name, got in outputs.items():
        if name == "tegula" or ours is None:
            continue
        ok = True
        for what, theirs, mine in zip(names, got, ours):
            ok &= bench_run.checked(f"{work} {name} vs tegula {label} {what}",
                                    theirs, mine, tol, res.checks)
            err = res.checks[-1]["rel_l2"]
            worst[name] = max(worst.get(name, 0.0), err) \
                if math.isfinite(err) else float("nan")
        status[name] = "pass" if ok else "FAIL"
    peers = [s for n, s in status.items() if n != "tegula"]
    if "tegula" in status and peers:
        status["tegula"] = "pass" if all(s == "pass" for s in peers) \
            else "FAIL"
        errs = list(worst.values())
        worst["tegula"] = (None if not errs else float("nan")
                           if any(math.isnan(e) for e in errs) else max(errs))
    outputs = ours = got = out = None  # free the checked tensors
    if not working:
        return

    fns = {name: (lambda fn=fn: fn(*args)) for name, fn in working.items()}
    with torch.no_grad():
        ms_fwd = bench_run.time_rotated(fns)
    ms_bwd = {}
    if backward:
        fns = {name: (lambda fn=fn: fwd_bwd(fn))
               for name, fn in working.items()}
        ms_bwd = bench_run.time_rotated(fns)
    best_fwd = min((ms for n, ms in ms_fwd.items() if n != "tegula"),
                   default=None)
    best_bwd = min((ms for n, ms in ms_bwd.items() if n != "tegula"),
                   default=None)
    for name in working:
        row = res.add(work=work, impl=name, shape=shape,
                      ms_fwd=ms_fwd.get(name), ms_fwd_bwd=ms_bwd.get(name),
                      check=status[name], rel_l2=worst.get(name))
        if flops:
            row["tflops_fwd"] = flops / row["ms_fwd"] / 1e9
            if backward:
                # The backward as 2.5 forwards (bench/attention_bwd.py).
                row["tflops_fwd_bwd"] = 3.5 * flops / row["ms_fwd_bwd"] / 1e9
        if nbytes:
            row["gbps_fwd"] = nbytes / row["ms_fwd"] / 1e6
        line = f"  {name}: fwd {row['ms_fwd']:.3f} ms"
        if best_fwd:
            line += f" ({best_fwd / row['ms_fwd']:.2f}x best peer)"
        if backward:
            line += f", fwd+bwd {row['ms_fwd_bwd']:.3f} ms"
            if best_bwd:
                line += f" ({best_bwd / row['ms_fwd_bwd']:.2f}x best peer)"
        print(line + f" [check {status[name]}]", flush=True)


def shapes_of(res, work, shapes, one):
    """Runs one(shape) for each shape, each guarded; shapes not started by
    the deadline get an INFO row."""
    for shape in shapes:
        if out_of_time():
            res.info(work, "-", shape, "skipped: out of --budget")
            continue
        guarded(res, f"{work} {shape_text(shape)}", lambda: one(shape))


def randn(g, *shape, dtype=None, grad=False):
    t = torch.randn(*shape, device="cuda", generator=g,
                    dtype=dtype or torch.bfloat16)
    return t.requires_grad_() if grad else t


# ---------------------------------------------------------------------------
# Sections.

def sdpa_impl(backend, causal, grouped, d):
    """(label, fn(q, k, v)) for SDPA with one backend; for grouped K/V heads
    enable_gqa=True when a forward and backward of it run on this torch and
    backend, else K/V repeated inside the call (so the gradients flow back
    to the grouped heads, as in a model)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    which = {"cudnn": SDPBackend.CUDNN_ATTENTION,
             "flash": SDPBackend.FLASH_ATTENTION}[backend]
    sdpa = F.scaled_dot_product_attention

    def plain(q, k, v):
        with sdpa_kernel(which):
            return sdpa(q, k, v, is_causal=causal)
    if not grouped:
        return f"sdpa-{backend}", plain

    def gqa(q, k, v):
        with sdpa_kernel(which):
            return sdpa(q, k, v, is_causal=causal, enable_gqa=True)
    try:
        g = torch.Generator(device="cuda").manual_seed(0)
        q = randn(g, 1, 4, 128, d, grad=True)
        k, v = (randn(g, 1, 1, 128, d, grad=True) for _ in range(2))
        gqa(q, k, v).sum().backward()
        torch.cuda.synchronize()
        return f"sdpa-{backend}", gqa
    except Exception as exc:  # noqa: BLE001 - older torch or backend
        print(f"  sdpa-{backend} enable_gqa: {type(exc).__name__}: "
              f"{str(exc)[:120]}; repeating K/V in the call", flush=True)

    def repeated(q, k, v):
        rep = q.shape[1] // k.shape[1]
        with sdpa_kernel(which):
            return sdpa(q, k.repeat_interleave(rep, 1),
                        v.repeat_interleave(rep, 1), is_causal=causal)
    return f"sdpa-{backend}-repeat-kv", repeated


def section_attention(res, args):
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(11)
    shapes = [dict(B=b, H=h, HKV=hkv, N=n, D=d, causal=causal)
              for b, h, hkv, n, d in ATTENTION_SHAPES
              for causal in (False, True)]

    def one(s):
        b, h, hkv, n, d, causal = (s[k] for k in
                                   ("B", "H", "HKV", "N", "D", "causal"))
        q = randn(g, b, h, n, d, grad=True)
        k, v = (randn(g, b, hkv, n, d, grad=True) for _ in range(2))
        do = randn(g, b, h, n, d)
        impls = {"tegula": lambda q, k, v: tegula.ops.attention(
            q, k, v, causal=causal)}
        for backend in ("cudnn", "flash"):
            name, fn = sdpa_impl(backend, causal, hkv != h, d)
            impls[name] = fn
        flops = 4 * b * h * n * n * d // (2 if causal else 1)
        bench_shape(res, "attention", s, impls, (q, k, v), wrt=(q, k, v),
                    grad_out=do, grad_names=("q", "k", "v"), flops=flops)
    shapes_of(res, "attention", shapes, one)


# The packed batch of bench/stage.sh's cu-bench (and scripts/gpu/
# varlen-sweep.sh's): 12 sequences, 16384 tokens.
VARLEN_LENS = [3000, 256, 1800, 700, 2048, 333, 1024, 2500, 512, 1111, 1500]
VARLEN_LENS.append(16384 - sum(VARLEN_LENS))


def torch_varlen():
    """PyTorch's torch.nn.attention.varlen.varlen_attn as fn(q, k, v, cu,
    max_len, causal) over one packed batch (the same bounds for queries and
    keys), or (None, why) where this torch lacks it."""
    import inspect
    try:
        from torch.nn.attention.varlen import varlen_attn
    except Exception as exc:  # noqa: BLE001 - older torch
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"
    params = inspect.signature(varlen_attn).parameters

    def fn(q, k, v, cu, max_len, causal):
        kw = {}
        if causal:
            # Older forms take is_causal; newer a window (-1, 0).
            if "is_causal" in params:
                kw["is_causal"] = True
            else:
                kw["window_size"] = (-1, 0)
        if k.shape[1] != q.shape[1]:
            kw["enable_gqa"] = True
        return varlen_attn(q, k, v, cu, cu, max_len, max_len, **kw)
    return fn, None


def section_varlen(res, args):
    import itertools
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(19)
    peer, why = torch_varlen()
    if why:
        print(f"torch varlen_attn not available: {why}", flush=True)
    cu = torch.tensor([0] + list(itertools.accumulate(VARLEN_LENS)),
                      dtype=torch.int32, device="cuda")
    total, longest = sum(VARLEN_LENS), max(VARLEN_LENS)
    shapes = [dict(T=total, S=len(VARLEN_LENS), H=2048 // d, HKV=hkv, D=d,
                   causal=causal)
              for d, hkv in ((64, 32), (128, 16), (128, 4))
              for causal in (False, True)]

    def one(s):
        h, hkv, d, causal = s["H"], s["HKV"], s["D"], s["causal"]
        q = randn(g, total, h, d, grad=True)
        k, v = (randn(g, total, hkv, d, grad=True) for _ in range(2))
        do = randn(g, total, h, d)
        impls = {"tegula": lambda q, k, v: tegula.ops.attention_varlen(
            q, k, v, cu, cu, longest, longest, causal=causal)}
        if peer:
            impls["torch varlen_attn"] = lambda q, k, v: peer(
                q, k, v, cu, longest, causal)
        else:
            res.info("attention_varlen", "torch varlen_attn", s,
                     f"not importable ({why})")
        flops = sum(4 * h * n * n * d // (2 if causal else 1)
                    for n in VARLEN_LENS)
        bench_shape(res, "attention_varlen", s, impls, (q, k, v),
                    wrt=(q, k, v), grad_out=do, grad_names=("q", "k", "v"),
                    flops=flops)
    shapes_of(res, "attention_varlen", shapes, one)


def section_rms_norm(res, args):
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(12)
    eps = 1e-6

    def eager(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, eps)

    def one(s):
        x = randn(g, s["R"], s["C"], grad=True)
        w = (1 + 0.1 * randn(g, s["C"], dtype=torch.float32)).to(
            torch.bfloat16).requires_grad_()
        dy = randn(g, s["R"], s["C"])
        impls = {"tegula": lambda x, w: tegula.ops.rms_norm(x, w, eps),
                 "torch eager": eager,
                 "torch.compile": torch.compile(eager, dynamic=False)}
        bench_shape(res, "rms_norm", s, impls, (x, w), wrt=(x, w),
                    grad_out=dy, grad_names=("x", "w"))
    shapes_of(res, "rms_norm", [dict(R=16384, C=4096)], one)


def section_cross_entropy(res, args):
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(13)

    def eager(logits, target):
        return F.cross_entropy(logits.float(), target)

    def one(s):
        logits = randn(g, s["R"], s["V"], grad=True)
        target = torch.randint(0, s["V"], (s["R"],), device="cuda",
                               generator=g)
        impls = {"tegula": lambda x, t: tegula.ops.cross_entropy(x, t),
                 "torch eager (float logits)": eager,
                 "torch.compile": torch.compile(eager, dynamic=False)}
        bench_shape(res, "cross_entropy", s, impls, (logits, target),
                    wrt=(logits,), grad_names=("logits",))
    shapes_of(res, "cross_entropy", [dict(R=4096, V=128256)], one)


def section_rotary(res, args):
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(14)

    def one(s):
        b, t, h, d = s["B"], s["T"], s["H"], s["D"]
        x = randn(g, b, t, h, d, grad=True)
        ang = torch.rand(t, d // 2, device="cuda", generator=g) * 6.3
        cos, sin = ang.cos(), ang.sin()
        dy = randn(g, b, t, h, d)
        impls = {"tegula": lambda x, c, s: tegula.ops.rotary(x, c, s),
                 "torch eager": baselines.eager_rotary,
                 "torch.compile": torch.compile(baselines.eager_rotary,
                                                dynamic=False)}
        bench_shape(res, "rotary", s, impls, (x, cos, sin), wrt=(x,),
                    grad_out=dy, grad_names=("x",))
    shapes_of(res, "rotary", [dict(B=8, T=4096, H=32, D=128)], one)


def fla_ops():
    """fla's chunk_gla and chunk_linear_attn (the carried wheel), or the
    reason they do not import."""
    try:
        from fla.ops.gla import chunk_gla
        from fla.ops.linear_attn import chunk_linear_attn
        return chunk_gla, chunk_linear_attn, None
    except Exception as exc:  # noqa: BLE001 - not carried, or broken
        return None, None, f"{type(exc).__name__}: {str(exc)[:200]}"


def section_gla(res, args):
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(15)
    fla_gla, fla_linear, why = fla_ops()
    if why:
        print(f"flash-linear-attention not available: {why}", flush=True)

    def one_gla(s):
        b, t, h, d = s["B"], s["T"], s["H"], s["K"]
        q, k, v = (randn(g, b, t, h, d, grad=True) for _ in range(3))
        gate = F.logsigmoid(randn(g, b, t, h, d, dtype=torch.float32)) \
            .requires_grad_()
        do = randn(g, b, t, h, d)
        impls = {"tegula": lambda q, k, v, gk: tegula.ops.chunk_gla(
            q, k, v, gk)[0]}
        if fla_gla:
            impls["fla"] = lambda q, k, v, gk: fla_gla(q, k, v, g=gk)[0]
        else:
            res.info("chunk_gla", "fla", s, f"not importable ({why})")
        bench_shape(res, "chunk_gla", s, impls, (q, k, v, gate),
                    wrt=(q, k, v, gate), grad_out=do,
                    grad_names=("q", "k", "v", "g"))
    shapes_of(res, "chunk_gla", [dict(B=8, T=2048, H=2048 // d, K=d, V=d)
                                 for d in (64, 128, 256)], one_gla)


def section_linear(res, args):
    import tegula.ops
    g = torch.Generator(device="cuda").manual_seed(16)
    _, fla_linear, why = fla_ops()
    if why:
        print(f"flash-linear-attention not available: {why}", flush=True)

    def one_linear(s):
        b, t, h, d = s["B"], s["T"], s["H"], s["K"]
        scale = d ** -0.5
        q, k, v = (randn(g, b, t, h, d, grad=True) for _ in range(3))
        do = randn(g, b, t, h, d)
        impls = {"tegula": lambda q, k, v: tegula.ops.chunk_linear_attention(
            q, k, v, scale=scale)[0]}
        if fla_linear:
            impls["fla"] = lambda q, k, v: fla_linear(
                q, k, v, scale=scale, normalize=False)[0]
        else:
            res.info("chunk_linear_attention", "fla", s,
                     f"not importable ({why})")
        bench_shape(res, "chunk_linear_attention", s, impls, (q, k, v),
                    wrt=(q, k, v), grad_out=do, grad_names=("q", "k", "v"))
    shapes_of(res, "chunk_linear_attention",
              [dict(B=8, T=2048, H=2048 // d, K=d, V=d)
               for d in (64, 128, 256)], one_linear)


def section_decode(res, args):
    import tegula.ops
    import attention_family as family  # its paged inputs
    g = torch.Generator(device="cuda").manual_seed(16)
    h, hkv, d = 32, 8, 128
    scale = d ** -0.5
    # attention_family's "many": 32 sequences of 1k to 8k keys.
    lens = [1024 + (i * 2357) % 7169 for i in range(32)]
    try:
        from flash_attn import flash_attn_with_kvcache
    except Exception as exc:  # noqa: BLE001 - not installed
        flash_attn_with_kvcache = None
        why = f"{type(exc).__name__}: {str(exc)[:120]}"

    def one(s):
        page = s["PAGE"]
        args_ = family.paged_inputs(g, lens, page, h, hkv, d)
        impls = {
            "tegula": lambda *a: tegula.ops.attention_decode(*a, scale=scale),
            "gather-sdpa": lambda *a: baselines.gather_sdpa_paged(
                *a, scale, max_len=max(lens)),
            "triton": lambda *a: baselines.triton_paged_decode(*a, scale)}
        if flash_attn_with_kvcache:
            impls["flash-attn"] = lambda q, kc, vc, table, n: \
                flash_attn_with_kvcache(
                    q[:, None], kc, vc, cache_seqlens=n, block_table=table,
                    softmax_scale=scale)[:, 0]
        else:
            res.info("attention_decode", "flash-attn", s,
                     f"not importable ({why})")
        bench_shape(res, "attention_decode", s, impls, args_,
                    flops=4 * h * sum(lens) * d,
                    nbytes=2 * 2 * sum(lens) * hkv * d)
    shapes_of(res, "attention_decode",
              [dict(B=len(lens), H=h, HKV=hkv, D=d, PAGE=page,
                    keys=sum(lens), max_len=max(lens))
               for page in (16, 64, 256)], one)


def host_loop_us(fn, calls):
    """Host microseconds per call of one loop of `calls` calls, then one
    synchronize (bench/run.py's launch section)."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def host_us(fn, calls):
    """Host microseconds per call: the median of 3 loops of `calls` calls
    after a warm-up."""
    for _ in range(min(200, calls)):
        fn()
    torch.cuda.synchronize()
    return statistics.median(host_loop_us(fn, calls) for _ in range(3))


# Rounds of the host section: every implementation once a round, the order
# rotated, the median of its rounds kept. The host's own speed drifts (a
# Triton launch measured 24.85 then 14.84 us a minute apart on the H100
# machine, stop 41): timed side by side, each ratio sees the same host.
HOST_ROUNDS = 7


def host_us_rotated(fns, calls, rounds=HOST_ROUNDS):
    """{name: host us per call} for fns {name: fn}: each warmed up, then
    `rounds` rounds of one loop of `calls` calls per fn in rotated order;
    the median of each fn's rounds."""
    names = list(fns)
    for name in names:
        for _ in range(min(200, calls)):
            fns[name]()
    torch.cuda.synchronize()
    loops = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            loops[name].append(host_loop_us(fns[name], calls))
    return {name: statistics.median(v) for name, v in loops.items()}


def fla_recurrent():
    """fla's fused_recurrent_gla and fused_recurrent_linear_attn (the
    carried wheel), or None each."""
    try:
        from fla.ops.gla import fused_recurrent_gla
        from fla.ops.linear_attn import fused_recurrent_linear_attn
        return fused_recurrent_gla, fused_recurrent_linear_attn
    except Exception as exc:  # noqa: BLE001 - not carried, or broken
        print(f"  fla: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
        return None, None


def decode_inputs(g):
    """One decoding step of a GLA or linear-attention layer: q, k, v, the
    gates [1, 1, 4, 64] and the carried state [1, 4, 64, 64] f32."""
    q, k, v = (randn(g, 1, 1, 4, 64) for _ in range(3))
    gate = F.logsigmoid(randn(g, 1, 1, 4, 64, dtype=torch.float32))
    h0 = randn(g, 1, 4, 64, 64, dtype=torch.float32)
    return dict(q=q, k=k, v=v, g=gate, h0=h0)


def decode_step(op, x, kernel, fla_op):
    """host's group of one decoding step of op (fused_recurrent_gla, or
    fused_recurrent_linear_attention without the gates): fla's form first
    (the others are checked against it), the op, its kernel directly."""
    import tegula.ops
    gated = op == "fused_recurrent_gla"
    gates = (x["g"],) if gated else ()
    fla_gates = {"gk": x["g"]} if gated else {}
    impls = {} if fla_op is None else {"fla": lambda: fla_op(
        x["q"], x["k"], x["v"], scale=0.125, initial_state=x["h0"],
        output_final_state=True, **fla_gates)[0]}
    impls["tegula.ops"] = lambda: getattr(tegula.ops, op)(
        x["q"], x["k"], x["v"], *gates, scale=0.125, initial_state=x["h0"],
        output_final_state=True)[0]
    impls["tegula kernel, direct"] = None if kernel is None else (
        lambda: kernel(x["q"], x["k"], x["v"], *gates, x["h0"],
                       scale=0.125)[0])
    return (op + " (decode step)", dict(B=1, T=1, H=4, K=64, V=64), impls)


def section_host(res, args):
    """Tiny problems, so that each call's host cost (Python, argument
    checks, the custom op's dispatch, the launch) is what is measured."""
    import tegula.ops
    from tegula.ops import _attention, _gla, _linear_attention, _loss, _norm
    g = torch.Generator(device="cuda").manual_seed(17)
    calls = args.calls
    with torch.no_grad():
        q, k, v = (randn(g, 1, 1, 128, 64) for _ in range(3))
        x = randn(g, 1, 64)
        w = randn(g, 64)
        logits = randn(g, 1, 128)
        target = torch.randint(0, 128, (1,), device="cuda", generator=g)
        xa = torch.randn(1024, device="cuda", generator=g)
        y0 = torch.randn(1024, device="cuda", generator=g)
        ya = y0.clone()

        def direct(get):
            """A tegula kernel of the op called directly (tegula.ops'
            private lookup), or None where that API moved."""
            try:
                return get()
            except Exception as exc:  # noqa: BLE001 - private API
                print(f"  direct kernel: {type(exc).__name__}: {exc}",
                      flush=True)
                return None
        attn_k = direct(lambda: _attention._kernel("attention_fwd_lse", q,
                                                   False))
        norm_k = direct(lambda: _norm._kernel("rmsnorm_fwd", x))
        loss_k = direct(lambda: _loss._kernel("cross_entropy", logits))
        decoding = decode_inputs(g)
        gla_k = direct(lambda: _gla._kernel(
            "recurrent_gla_fwd", decoding["q"], decoding["v"], "-h0"))
        linear_k = direct(lambda: _linear_attention._kernel(
            "recurrent_linear_fwd", decoding["q"], decoding["v"], "-h0"))
        fla_gla, fla_linear = fla_recurrent()
        groups = [
            ("attention", dict(B=1, H=1, N=128, D=64), {
                "torch eager (sdpa)": lambda: F.scaled_dot_product_attention(
                    q, k, v),
                "tegula.ops": lambda: tegula.ops.attention(q, k, v),
                "tegula kernel, direct": None if attn_k is None else (
                    lambda: attn_k(q, k, v, scale=0.125)[0]),
                TRITON_OP: lambda: baselines.triton_attention(
                    q, k, v, False, 0.125)}),
            ("rms_norm", dict(R=1, C=64), {
                "torch eager": lambda: F.rms_norm(x, (64,), w, 1e-6),
                "tegula.ops": lambda: tegula.ops.rms_norm(x, w, 1e-6),
                "tegula kernel, direct": None if norm_k is None else (
                    lambda: norm_k(x, w, eps=1e-6)[0]),
                TRITON_OP: lambda: baselines.triton_rmsnorm(x, w, 1e-6)}),
            ("cross_entropy", dict(R=1, V=128), {
                "torch eager (float logits)": lambda: F.cross_entropy(
                    logits.float(), target, reduction="none"),
                "tegula.ops": lambda: tegula.ops.cross_entropy(
                    logits, target, reduction="none"),
                "tegula kernel, direct": None if loss_k is None else (
                    lambda: loss_k(logits, target)[0]),
                TRITON_OP: lambda: baselines.triton_cross_entropy(
                    logits, target)[0]}),
            decode_step("fused_recurrent_gla", decoding, gla_k, fla_gla),
            decode_step("fused_recurrent_linear_attention", decoding,
                        linear_k, fla_linear),
            ("one launch (axpy, 1024 f32)", dict(N=1024), {
                "triton": lambda: baselines.triton_axpy(xa, ya, 0.5),
                "torch eager (add_)": lambda: ya.add_(xa, alpha=0.5)}),
        ]
        ya.copy_(y0)
        bench_run.checked("host axpy triton vs float64",
                          baselines.triton_axpy(xa, ya, 0.5),
                          0.5 * xa.double() + y0.double(), 1e-6, res.checks)
        # Checked first, then timed together (host_us_rotated).
        timed = {}
        for op, shape, impls in groups:
            if out_of_time():
                res.info("host", op, shape, "skipped: out of --budget")
                continue
            print(f"host {op} {shape_text(shape)}", flush=True)
            ref_name = next(iter(impls))
            ref = None
            if op != groups[-1][0]:
                try:
                    ref = impls[ref_name]()
                except Exception as exc:  # noqa: BLE001 - no check then
                    print(f"  {ref_name}: {type(exc).__name__}: {exc}",
                          flush=True)
            for name, fn in impls.items():
                if fn is None:
                    res.add(work="host", op=op, impl=name, shape=shape,
                            info="not available (see the log)")
                    continue

                def one(op=op, shape=shape, name=name, fn=fn):
                    check = "none"
                    if ref is not None and name != ref_name:
                        check = "pass" if bench_run.checked(
                            f"host {op} {name} vs {ref_name}", fn(), ref,
                            TOL["bfloat16"], res.checks) else "FAIL"
                    timed[(op, name)] = (shape, check, fn)
                guarded(res, f"host {op} {name}", one)

        def time_all():
            us = host_us_rotated({key: fn for key, (_, _, fn) in
                                  timed.items()}, calls)
            for (op, name), (shape, check, _) in timed.items():
                res.add(work="host", op=op, impl=name, shape=shape,
                        us_per_call=us[(op, name)], calls=calls,
                        rounds=HOST_ROUNDS, check=check)
                print(f"  {op} {name}: {us[(op, name)]:.2f} us per call",
                      flush=True)
        guarded(res, "host timing", time_all)


def train_label(model, run):
    impl = run.get("impl", "?")
    if model == "llama" and impl == "tegula":
        return f"tegula (attention + {run.get('tegula_ops', '?')})"
    return impl


def section_train(res, args):
    """Tokens/s and final loss of each training run's JSON (train_llama.py
    and train_gla.py --out)."""
    if not (args.llama or args.gla):
        res.info("train", "-", {}, "no --llama or --gla JSON given")
        return
    for model, paths in (("llama", args.llama), ("gla", args.gla)):
        for path in paths:
            def one(model=model, path=path):
                with open(path) as f:
                    run = json.load(f)
                row = res.add(
                    work=f"train_{model}", impl=train_label(model, run),
                    shape={}, tokens_per_s=float(run["tokens_per_s"]),
                    final_loss=float(run["losses"][-1]),
                    steps=len(run["losses"]), device=run.get("device"),
                    processes=run.get("processes", 1),
                    config=run.get("config"), file=os.path.basename(path))
                print(f"train {model} {row['impl']}: "
                      f"{row['tokens_per_s']:.0f} tokens/s, final loss "
                      f"{row['final_loss']:.4f} ({path})", flush=True)
            guarded(res, f"train {model} {path}", one)


RUNNERS = {"attention": section_attention, "rms_norm": section_rms_norm,
           "cross_entropy": section_cross_entropy, "rotary": section_rotary,
           "gla": section_gla, "linear": section_linear,
           "decode": section_decode, "varlen": section_varlen,
           "host": section_host, "train": section_train}


# ---------------------------------------------------------------------------

def main(argv=None):
    global DEADLINE
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "out"))
    parser.add_argument("--only", nargs="+", choices=SECTIONS,
                        help="run these sections only")
    parser.add_argument("--llama", nargs="+", default=[], metavar="JSON",
                        help="bench/train_llama.py --out files (train)")
    parser.add_argument("--gla", nargs="+", default=[], metavar="JSON",
                        help="bench/train_gla.py --out files (train)")
    parser.add_argument("--calls", type=int, default=CALLS,
                        help="calls per loop of the host section")
    parser.add_argument("--budget", type=float,
                        help="seconds: sections and shapes not started by "
                             "then are skipped (an INFO row each)")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    DEADLINE = time.monotonic() + args.budget if args.budget else None
    sections = [s for s in SECTIONS if not args.only or s in args.only]
    res = Results(args.out, argv)
    if any(s != "train" for s in sections):
        try:
            load_gpu()
        except Exception as exc:  # noqa: BLE001 - only train can run
            res.error("import torch, bench/run.py", exc)
            sections = [s for s in sections if s == "train"]
    if torch is not None:
        if not torch.cuda.is_available():
            sys.exit("bench/ops_bench.py: no CUDA device")
        import triton
        res.meta.update(
            gpu=torch.cuda.get_device_name(), torch=torch.__version__,
            triton=triton.__version__, cudnn=torch.backends.cudnn.version(),
            fla=_version("fla-core") or _version("flash-linear-attention"),
            timing=f"CUDA events per call, {bench_run.WARMUP} warm-up, "
                   f"median of {bench_run.REP}, every implementation of a "
                   f"shape in {bench_run.ROUNDS} rounds in rotated order, "
                   "the median of the rounds (bench/run.py); fwd under "
                   "torch.no_grad(), fwd+bwd: the forward with autograd "
                   "then torch.autograd.grad of a fixed upstream gradient "
                   "for every differentiable input; host: wall time per "
                   f"call over {args.calls} calls")
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    name = "start"
    try:
        for name in sections:
            if out_of_time():
                res.info(name, "-", {}, "section skipped: out of --budget")
                continue
            guarded(res, name, lambda: RUNNERS[name](res, args))
            res.save()
    except (Stopped, KeyboardInterrupt) as exc:
        res.errors.append({"where": name, "error": str(exc) or "interrupted"})
        res.checks.append({"check": f"{name}: {exc or 'interrupted'}",
                           "rel_l2": float("nan"), "tol": 0, "pass": False})
        print(f"{name}: {exc or 'interrupted'}; saving", flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
    res.save()
    if not args.no_plot:
        try:
            if plot(res.result(), os.path.join(args.out, "ops-results.png")):
                print(f"wrote {args.out}/ops-results.png", flush=True)
        except Exception as exc:  # noqa: BLE001 - matplotlib is optional
            print(f"no plot: {type(exc).__name__}: {exc}", flush=True)
    failed = [c["check"] for c in res.checks if not c["pass"]]
    print(f"wrote {args.out}/ops-results.json and ops-results.md; "
          f"{len(res.checks) - len(failed)} checks passed, {len(failed)} "
          f"failed", flush=True)
    return 1 if failed else 0


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return None


if __name__ == "__main__":
    sys.exit(main())
