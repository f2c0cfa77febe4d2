#!/usr/bin/env python3
"""tegula.ops on the GPU (needs torch; no tilec, no network).

    here:       scripts/build-ops.sh   (python/tegula/_bundles, libtegula_rt.so)
    on the GPU: python3 scripts/gpu/check-ops.py [--installed]
                (carry python/tegula/_bundles and python/tegula/libtegula_rt.so)

With --installed the checks import the package that `pip install ./python`
put in a fresh virtual environment (tilec is on no PATH there); otherwise
python/ itself. Every op, forward and backward, against a float64 reference
on fresh random inputs (the seed is printed; --seed N draws it again) at
ragged and multiple-of-16 sizes, outputs poisoned first (the caching allocator's blocks hold NaN);
gradients against PyTorch autograd of the float64 reference; errors raised
before launch; torch.library.opcheck; torch.compile(fullgraph=True) and a
CUDA graph replay bit-identical to eager. One PASS/FAIL/INFO line per
check; exits non-zero on any failure.
"""

import itertools
import os
import sys

if "--installed" not in sys.argv:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "python"))

import torch  # noqa: E402

import tegula  # noqa: E402
import tegula.ops  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_report  # noqa: E402
from ops_layouts import attention_inputs, check_layout_speed  # noqa: E402
from ops_report import poison, rel_l2, report, time_of  # noqa: E402

def reference(q, k, v, causal, scale):
    """softmax(scale q k^T) v and the row logsumexp, in float64; K/V heads
    repeated for grouped-query attention (autograd sums their gradients
    over each group). q has M rows, k and v N; causal is aligned
    bottom-right (query i sees keys j <= i + N - M, flash-attn's rule), and
    a query with no key gets o = 0 and lse = -inf (its masked scores' zero
    gradient stops autograd's NaN there)."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = scale * (q @ k.transpose(-1, -2))
    if causal:
        m, n = q.shape[-2], k.shape[-2]
        keep = torch.ones(m, n, dtype=torch.bool, device=q.device).tril(n - m)
        s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    finite = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse)
    return torch.exp(s - finite[..., None]) @ v, lse


def check_attention(shape, dtype, causal, scale, tol=1e-2, use_o=True,
                    kv_heads=None, keys=None, layout="bhnd"):
    """Forward and backward of one call; with use_o=False the loss reads
    only the logsumexp (o's gradient never reaches the op); kv_heads < H is
    grouped-query attention; `keys` (N) other than q's M rows is cross
    attention, causal bottom-right (rows with no key: o = 0, lse = -inf,
    which must match the reference's exactly; the loss's lse term is then
    infinite, its gradient still dlse). `layout` (attention_inputs): how
    q, k and v lie in memory; o must come back in q's ([B, M, H, D]
    contiguous for "bnhd" and "qkv")."""
    b, h, m, d = shape
    n = m if keys is None else keys
    kv_shape = (b, kv_heads or h, n, d)
    name = (f"attention {list(shape)} {str(dtype)[6:]} "
            f"{'causal ' if causal else ''}scale={scale}"
            f"{f' HKV={kv_heads}' if kv_heads else ''}"
            f"{f' N={keys}' if keys is not None else ''}"
            f"{'' if use_o else ' (loss of lse alone)'}"
            f"{'' if layout == 'bhnd' else f' layout {layout}'}")
    (q, k, v), given, layout_arg = attention_inputs(shape, kv_shape, dtype,
                                                    layout)
    do = torch.randn(shape, device="cuda").to(dtype)
    dlse = torch.randn(shape[:3], device="cuda")
    poison()
    o, lse = tegula.ops.attention(*given, causal=causal, scale=scale,
                                  return_lse=True, layout=layout_arg)
    if layout_arg == "bnhd":
        layout_ok = o.is_contiguous() and o.shape == given[0].shape
        o = o.transpose(1, 2)
    else:
        layout_ok = o.stride() == q.stride()
    loss = (lse * dlse).sum()
    if use_o:
        loss = loss + (o.float() * do.float()).sum()
    # Gradients of the tensors the op got, in the reference's order.
    dq, dk, dv = torch.autograd.grad(loss, given)
    if layout_arg == "bnhd":
        dq, dk, dv = (g.transpose(1, 2) for g in (dq, dk, dv))
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    c = d ** -0.5 if scale is None else scale
    o64, lse64 = reference(q64, k64, v64, causal, c)
    loss64 = (lse64 * dlse.double()).sum()
    if use_o:
        loss64 = loss64 + (o64 * do.double()).sum()
    loss64.backward()
    # lse is -inf exactly where no key is seen, finite elsewhere.
    empty = torch.isneginf(lse64)
    errors = {"o": rel_l2(o, o64),
              "lse": rel_l2(lse[~empty], lse64.detach()[~empty]),
              "dq": rel_l2(dq, q64.grad), "dk": rel_l2(dk, k64.grad),
              "dv": rel_l2(dv, v64.grad)}
    finite = (torch.equal(torch.isneginf(lse), empty)
              and torch.isfinite(lse[~empty]).all().item()
              and all(torch.isfinite(t).all().item()
                      for t in (o, dq, dk, dv)))
    worst = max(errors.values())
    report(finite and worst <= tol and layout_ok, name,
           " ".join(f"{key} {err:.2e}" for key, err in errors.items()) +
           f" (rel L2, tol {tol:g})" + ("" if finite else " NOT FINITE") +
           ("" if layout_ok else f" o strides {list(o.stride())}"))


def check_attention_layouts():
    """flash-attn's [B, N, H, D] (layout="bnhd") and a fused qkv's slices
    through their strides, at ragged N, both dtypes and head sizes, causal
    and not, GQA and MQA, cross attention in [B, N, H, D]."""
    for layout in ("bnhd", "qkv"):
        for d in (64, 128):
            for dtype in (torch.bfloat16, torch.float16):
                for causal in (False, True):
                    check_attention((2, 3, 333, d), dtype, causal, None,
                                    layout=layout)
            check_attention((2, 8, 250, d), torch.bfloat16, True, None,
                            kv_heads=2, layout=layout)
        check_attention((1, 4, 200, 128), torch.float16, True, -0.3,
                        kv_heads=1, layout=layout)
        check_attention((2, 2, 512, 64), torch.bfloat16, False, None,
                        layout=layout)
    check_attention((2, 4, 77, 64), torch.bfloat16, True, None, kv_heads=2,
                    keys=333, layout="bnhd")
    check_attention((1, 2, 333, 128), torch.float16, True, None, keys=77,
                    use_o=False, layout="bnhd")


def varlen_reference(q, k, v, cu_q, cu_k, causal, scale):
    """attention_varlen in float64, one sequence at a time: o [TQ, H, D]
    (0 where a row sees no key or lies in no sequence) and lse [H, TQ]
    (-inf there). Rows without keys are kept off the logsumexp, so autograd
    gives them (and their keys) exact zeros, as the op documents."""
    group = q.shape[1] // k.shape[1]
    o = q.new_zeros(q.shape)
    lse = q.new_full((q.shape[1], q.shape[0]), float("-inf"))
    bounds_q, bounds_k = cu_q.tolist(), cu_k.tolist()
    for b in range(len(bounds_q) - 1):
        q0, q1, k0, k1 = bounds_q[b], bounds_q[b + 1], bounds_k[b], \
            bounds_k[b + 1]
        qb = q[q0:q1].transpose(0, 1)
        kb, vb = (t[k0:k1].transpose(0, 1).repeat_interleave(group, 0)
                  for t in (k, v))
        s = scale * (qb @ kb.transpose(-1, -2))
        i = torch.arange(q1 - q0, device=q.device)[:, None]
        j = torch.arange(k1 - k0, device=q.device)[None, :]
        keep = (j <= i + (k1 - k0) - (q1 - q0)) if causal else \
            torch.ones_like(i + j, dtype=torch.bool)
        sees = keep.any(-1)
        s = s.masked_fill(~keep, float("-inf"))
        s_safe = torch.where(sees[:, None], s, 0.0)
        l_safe = torch.logsumexp(s_safe, dim=-1) if k1 > k0 else \
            s_safe.new_zeros(s_safe.shape[:-1])
        p = torch.where(sees[:, None], torch.exp(s - l_safe[..., None]), 0.0)
        o = o.index_copy(0, torch.arange(q0, q1, device=q.device),
                         (p @ vb).transpose(0, 1))
        lse = lse.index_copy(1, torch.arange(q0, q1, device=q.device),
                             torch.where(sees, l_safe, float("-inf")))
    return o, lse


def check_attention_varlen(lens_q, lens_k, h, hkv, d, dtype, causal, scale,
                           pad=0, tol=1e-2):
    """Forward and backward of one call over sequences of lens_q queries
    and lens_k keys (pad more rows of each in no sequence), against
    varlen_reference with autograd; the loss reads o and the finite lse."""
    name = (f"attention_varlen q{lens_q} k{lens_k} H={h} HKV={hkv} D={d} "
            f"{str(dtype)[6:]} {'causal ' if causal else ''}scale={scale}"
            f"{f' pad={pad}' if pad else ''}")
    cu_q, cu_k = (torch.tensor([0, *itertools.accumulate(n)],
                               dtype=torch.int32, device="cuda")
                  for n in (lens_q, lens_k))
    tq, tk = sum(lens_q) + pad, sum(lens_k) + pad
    q = torch.randn(tq, h, d, device="cuda").to(dtype).requires_grad_()
    k, v = (torch.randn(tk, hkv, d, device="cuda").to(dtype).requires_grad_()
            for _ in range(2))
    do = torch.randn(tq, h, d, device="cuda").to(dtype)
    dlse = torch.randn(h, tq, device="cuda")
    poison()
    o, lse = tegula.ops.attention_varlen(
        q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=causal,
        scale=scale, return_lse=True)
    finite = torch.isfinite(lse)
    loss = (torch.where(finite, lse, 0.0) * dlse).sum() + \
        (o.float() * do.float()).sum()
    loss.backward()
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    c = d ** -0.5 if scale is None else scale
    o64, lse64 = varlen_reference(q64, k64, v64, cu_q, cu_k, causal, c)
    finite64 = torch.isfinite(lse64)
    loss64 = (torch.where(finite64, lse64, 0.0) * dlse.double()).sum() + \
        (o64 * do.double()).sum()
    loss64.backward()
    errors = {"o": rel_l2(o, o64),
              "lse": rel_l2(lse[finite64], lse64[finite64]),
              "dq": rel_l2(q.grad, q64.grad), "dk": rel_l2(k.grad, k64.grad),
              "dv": rel_l2(v.grad, v64.grad)}
    # -inf exactly where the reference has it; everything else finite.
    same_inf = torch.equal(finite, finite64)
    ok = all(torch.isfinite(t).all().item()
             for t in (o, q.grad, k.grad, v.grad))
    worst = max(errors.values())
    report(ok and same_inf and worst <= tol, name,
           " ".join(f"{key} {err:.2e}" for key, err in errors.items()) +
           f" (rel L2, tol {tol:g})" + ("" if ok else " NOT FINITE") +
           ("" if same_inf else " lse -inf rows differ"))


def check_attention_varlens():
    """Ragged lengths with empty sequences of each side, len_q != len_k
    (causal rows that see no key), GQA and MQA, both dtypes and head
    sizes, zero and negative scales, rows in no sequence."""
    lens_q, lens_k = [1, 300, 0, 129, 77, 64], [3, 250, 40, 129, 0, 200]
    for d in (64, 128):
        for dtype in (torch.bfloat16, torch.float16):
            for causal in (False, True):
                check_attention_varlen(lens_q, lens_k, 4, 4, d, dtype, causal,
                                       None)
                check_attention_varlen(lens_q, lens_k, 8, 2, d, dtype, causal,
                                       None)
    check_attention_varlen([500, 33], [17, 700], 4, 1, 128, torch.bfloat16,
                           True, None, pad=5)
    check_attention_varlen([1], [1], 2, 2, 64, torch.float16, True, -0.3)
    check_attention_varlen([200, 7], [190, 9], 2, 1, 64, torch.bfloat16, True,
                           0.0)
    check_attention_varlen([0, 0], [5, 0], 2, 2, 64, torch.bfloat16, False,
                           None)


def rotary_reference(x, cos, sin, interleaved):
    """x [B, T, H, D] rotated in float64 by cos, sin [T, R / 2]."""
    half = cos.shape[1]
    r = 2 * half
    x = x.double()
    c, s = cos.double()[None, :, None, :], sin.double()[None, :, None, :]
    if interleaved:
        x1, x2 = x[..., 0:r:2], x[..., 1:r:2]
    else:
        x1, x2 = x[..., :half], x[..., half:r]
    y1, y2 = x1 * c - x2 * s, x2 * c + x1 * s
    rotated = (torch.stack((y1, y2), -1).flatten(-2) if interleaved
               else torch.cat((y1, y2), -1))
    return torch.cat((rotated, x[..., r:]), -1)


def check_rotary(shape, rotary_dim, interleaved, dtype, tol=1e-2):
    b, t, h, d = shape
    name = (f"rotary {list(shape)} R={rotary_dim} {str(dtype)[6:]}"
            f"{' interleaved' if interleaved else ''}")
    x = torch.randn(shape, device="cuda").to(dtype).requires_grad_()
    angles = torch.rand(t, rotary_dim // 2, device="cuda") * 6.3
    cos, sin = angles.cos(), angles.sin()
    dy = torch.randn(shape, device="cuda").to(dtype)
    poison()
    y = tegula.ops.rotary(x, cos, sin, interleaved=interleaved)
    y.backward(dy)
    x64 = x.detach().double().requires_grad_()
    y64 = rotary_reference(x64, cos, sin, interleaved)
    y64.backward(dy.double())
    inplace = x.detach().clone()
    with torch.no_grad():
        tegula.ops.rotary(inplace, cos, sin, interleaved=interleaved,
                          inplace=True)
    errors = {"y": rel_l2(y, y64), "dx": rel_l2(x.grad, x64.grad),
              "inplace": rel_l2(inplace, y64)}
    same = torch.equal(inplace, y.detach())
    report(max(errors.values()) <= tol and same, name,
           " ".join(f"{k} {e:.2e}" for k, e in errors.items()) +
           f" (rel L2, tol {tol:g}); in place {'=' if same else '!='} out of "
           f"place")


def check_rms_norm(shape, dtype, eps=1e-5, tol=1e-2):
    name = f"rms_norm {list(shape)} {str(dtype)[6:]}"
    x = torch.randn(shape, device="cuda").to(dtype).requires_grad_()
    w = (1 + 0.5 * torch.randn(shape[-1], device="cuda")).to(dtype)
    w.requires_grad_()
    dy = torch.randn(shape, device="cuda").to(dtype)
    poison()
    y = tegula.ops.rms_norm(x, w, eps)
    y.backward(dy)
    x64, w64 = (t.detach().double().requires_grad_() for t in (x, w))
    y64 = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * w64
    y64.backward(dy.double())
    errors = {"y": rel_l2(y, y64), "dx": rel_l2(x.grad, x64.grad),
              "dw": rel_l2(w.grad, w64.grad)}
    again = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    tegula.ops.rms_norm(x, w, eps).backward(dy)
    same = torch.equal(again[0], x.grad) and torch.equal(again[1], w.grad)
    # Without autograd the op runs the kernel without rstd: the same y.
    poison()
    with torch.no_grad():
        y_infer = tegula.ops.rms_norm(x, w, eps)
    inferred = torch.equal(y_infer, y.detach())
    report(max(errors.values()) <= tol and same and inferred, name,
           " ".join(f"{k} {e:.2e}" for k, e in errors.items()) +
           f" (rel L2, tol {tol:g}); backward "
           f"{'deterministic' if same else 'NOT deterministic'}; no_grad y "
           f"{'bit-identical' if inferred else 'DIFFERS'}")


def check_cross_entropy(rows, vocab, dtype, reduction, tol=1e-2,
                        ignore_index=-100, target_dtype=torch.int64):
    name = f"cross_entropy [{rows}, {vocab}] {str(dtype)[6:]} {reduction}" \
        f" ignore_index {ignore_index} {str(target_dtype)[6:]} targets"
    logits = (3 * torch.randn(rows, vocab, device="cuda")).to(dtype)
    logits.requires_grad_()
    target = torch.randint(0, vocab, (rows,), device="cuda")
    target[::5] = ignore_index  # ignored rows
    poison()
    loss = tegula.ops.cross_entropy(logits, target.to(target_dtype),
                                    ignore_index=ignore_index,
                                    reduction=reduction)
    grad = torch.randn_like(loss)
    loss.backward(grad)
    l64 = logits.detach().double().requires_grad_()
    ref = torch.nn.functional.cross_entropy(l64, target,
                                            ignore_index=ignore_index,
                                            reduction=reduction)
    ref.backward(grad.double())
    errors = {"loss": rel_l2(loss, ref), "dlogits": rel_l2(logits.grad,
                                                           l64.grad)}
    zero = bool((logits.grad[::5] == 0).all())
    report(max(errors.values()) <= tol and zero, name,
           " ".join(f"{k} {e:.2e}" for k, e in errors.items()) +
           f" (rel L2, tol {tol:g}); ignored rows' gradient "
           f"{'zero' if zero else 'NOT zero'}")


def check_fast_path():
    """Each op again at a shape checked above: fresh inputs in new
    allocations, the same shapes, dtypes and scalars, so every kernel runs
    its kept first call with new pointers (tegula.ops._common.Repeats;
    Kernel._fast_call for the ops without), with and
    without gradients (_common.eager_call runs the implementation itself
    when nothing needs one)."""
    ops_report.prefix = "again (fast path) "
    try:
        check_attention((2, 8, 333, 64), torch.bfloat16, True, None,
                        kv_heads=2)
        check_attention((2, 3, 77, 128), torch.bfloat16, False, None,
                        keys=333)
        check_rotary((2, 37, 3, 64), 32, False, torch.bfloat16)
        for layout in ("bnhd", "qkv"):
            # Strided views again, in new allocations: each kernel's repeat
            # (_fast.Repeat) takes their storages' bases from the offsets
            # of its first call.
            check_attention((2, 8, 250, 64), torch.bfloat16, True, None,
                            kv_heads=2, layout=layout)
        check_rms_norm((7, 3001), torch.bfloat16)
        check_cross_entropy(37, 32003, torch.bfloat16, "mean")
        # attention_decode's three paths (split, flat, paged), each twice
        # (check_decodes runs after this): the second call a repeat with
        # new caches and page tables.
        for _ in range(2):
            check_decode([50, 0, 7], 16, 1, 128, 16, torch.bfloat16, 3)
            check_decode([129, 2], 4, 4, 64, 256, torch.float16, 16,
                         layout4=True)
            for page in (16, 64, 256):
                check_decode(RAGGED_DECODE, 8, 2, 128, page, torch.bfloat16,
                             1)
        with torch.no_grad():
            q, k, v = (torch.randn(2, 3, 77, 64, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(3))
            tegula.ops.attention(q, k, v)  # the first call of this key
            q, k, v = (torch.randn_like(t) for t in (q, k, v))
            poison()
            o = tegula.ops.attention(q, k, v)
            ref = torch.nn.functional.scaled_dot_product_attention(
                q.double(), k.double(), v.double())
            error = rel_l2(o, ref)
            report(error <= 1e-2 and o.grad_fn is None,
                   "attention no_grad [2, 3, 77, 64]",
                   f"o rel L2 {error:.2e} (tol 1e-2), no autograd node: "
                   f"{o.grad_fn is None}")
        # The repeats above went through each op's kept first calls (the
        # backward's on autograd's thread).
        from tegula.ops import _attention, _decode, _loss, _norm, _rotary
        kept = {name: repeats.served
                for name, repeats in (
                    ("attention fwd", _attention._fwd),
                    ("attention dq", _attention._bwd_dq),
                    ("rms_norm fwd", _norm._fwd),
                    ("rms_norm no_grad", _norm._infer),
                    ("rms_norm dx", _norm._bwd_dx),
                    ("cross_entropy fwd", _loss._fwd),
                    ("cross_entropy bwd", _loss._bwd),
                    ("rotary", _rotary._repeats),
                    ("decode paged", _decode._paged),
                    ("decode flat", _decode._flat),
                    ("decode split", _decode._split),
                    ("decode combine", _decode._combine))}
        report(all(kept.values()), "calls served by repeats "
               "(tegula.ops._common.Repeats)",
               ", ".join(f"{name} {n}" for name, n in kept.items()))
    finally:
        ops_report.prefix = ""


def check_errors():
    good = torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.bfloat16)
    cases = [
        ("D = 96", (torch.randn(1, 2, 64, 96, device="cuda",
                                dtype=torch.bfloat16),) * 3, "D = 96"),
        ("k's B", (good, torch.cat((good, good)), good), "argument 'k'"),
        ("v's heads", (good, good, good[:, :1]), "argument 'v'"),
        ("f32", (good.float(), good.float(), good.float()), "float32"),
        ("CPU", (good.cpu(), good.cpu(), good.cpu()), "cpu"),
        ("rank 3", (good[0], good[0], good[0]), "[B, H, M, D]"),
        ("k's D", (good, good[..., :32], good[..., :32]), "argument 'k'"),
        ("v's keys", (good, good[:, :, :40], good), "argument 'v'"),
    ]
    x = torch.randn(2, 10, 16, 128, device="cuda", dtype=torch.bfloat16)
    wide = torch.randn(10, 16 * 128 // 2, device="cuda")
    try:
        tegula.ops.rotary(x, wide, wide)
        report(False, "error rotary model dimension", "no LaunchError")
    except tegula.LaunchError as error:
        text = str(error)
        report("D = 128" in text and "R = 2048" in text, "error rotary model "
               "dimension", text)
    for label, call, text in (
            ("rms_norm w", lambda: tegula.ops.rms_norm(x, x[0, 0, 0, :64]),
             "argument 'w'"),
            ("rms_norm f64", lambda: tegula.ops.rms_norm(
                x.double(), x[0, 0, 0].double()), "argument 'x'"),
            ("cross_entropy target", lambda: tegula.ops.cross_entropy(
                x[0, 0], torch.zeros(3, dtype=torch.long, device="cuda")),
             "expected [R, V] and [R]"),
            ("cross_entropy float target", lambda: tegula.ops.cross_entropy(
                x[0, 0], x[0, 0, :, 0]), "argument 'target'")):
        try:
            call()
            report(False, f"error {label}", "no LaunchError")
        except tegula.LaunchError as error:
            report(text in str(error), f"error {label}", str(error))
    for label, args, text in cases:
        try:
            tegula.ops.attention(*args)
        except tegula.LaunchError as error:
            report(text in str(error), f"error {label}", str(error))
        else:
            report(False, f"error {label}", "no LaunchError")


def check_varlen_errors():
    """attention_varlen's LaunchErrors, raised before any launch."""
    q = torch.randn(10, 4, 64, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(12, 2, 64, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0, 4, 10], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 5, 12], dtype=torch.int32, device="cuda")
    wide = torch.randn(10, 4, 96, device="cuda", dtype=torch.bfloat16)
    cases = [
        ("D = 96", (wide, wide[:, :2], wide[:, :2], cu, cu_k, 6, 7),
         "D = 96"),
        ("k's D", (q, kv[..., :32], kv, cu, cu_k, 6, 7), "argument 'k'"),
        ("v's heads", (q, kv, kv[:, :1].expand(12, 3, 64), cu, cu_k, 6, 7),
         "argument 'v'"),
        ("f32", (q.float(), kv.float(), kv.float(), cu, cu_k, 6, 7),
         "float32"),
        ("CPU", (q.cpu(), kv.cpu(), kv.cpu(), cu, cu_k, 6, 7), "cpu"),
        ("rank 4", (q[None], kv, kv, cu, cu_k, 6, 7), "[total_q, H, D]"),
        ("cu int64", (q, kv, kv, cu.long(), cu_k, 6, 7),
         "argument 'cu_seqlens_q' is torch.int64: expected torch.int32"),
        ("cu length", (q, kv, kv, cu, cu_k[:2], 6, 7),
         "argument 'cu_seqlens_k' has shape [2] but cu_seqlens_q has [3]"),
        ("cu rank", (q, kv, kv, cu[None], cu_k, 6, 7),
         "argument 'cu_seqlens_q' has shape [1, 3]: expected [B + 1]"),
        ("cu on CPU", (q, kv, kv, cu, cu_k.cpu(), 6, 7),
         "argument 'cu_seqlens_k' is on cpu"),
        ("max_seqlen tensor", (q, kv, kv, cu, cu_k, torch.tensor(6), 7),
         "argument 'max_seqlen_q'"),
        ("max_seqlen negative", (q, kv, kv, cu, cu_k, 6, -1),
         "argument 'max_seqlen_k' is -1"),
    ]
    for label, args, text in cases:
        try:
            tegula.ops.attention_varlen(*args)
        except tegula.LaunchError as error:
            report(text in str(error), f"error varlen {label}", str(error))
        else:
            report(False, f"error varlen {label}", "no LaunchError")


def check_varlen_compile_and_graph():
    """opcheck of the forward op; torch.compile(fullgraph=True) and a CUDA
    graph replay of forward and backward, bit-identical to eager (no
    device sync: max_seqlen_* are Python ints)."""
    cu_q = torch.tensor([0, 100, 100, 333], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 80, 150, 400], dtype=torch.int32, device="cuda")
    q = torch.randn(333, 4, 128, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k, v = (torch.randn(400, 2, 128, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True) for _ in range(2))
    do = torch.randn(333, 4, 128, device="cuda", dtype=torch.bfloat16)
    try:
        torch.library.opcheck(torch.ops.tegula.attention_varlen_forward,
                              (q, k, v, cu_q, cu_k, 233, 250, True, 0.1))
        report(True, "opcheck attention_varlen_forward", "schema, fake, "
               "autograd, aot_dispatch_dynamic")
    except Exception as error:  # noqa: BLE001 - reported, not raised
        report(False, "opcheck attention_varlen_forward", repr(error)[:400])

    def fn(q, k, v):
        return tegula.ops.attention_varlen(q, k, v, cu_q, cu_k, 233, 250,
                                           causal=True)

    check_compiled_and_graphed(fn, q, k, v, do, label="varlen ")


def check_opcheck():
    # M = N, then cross attention (M != N: the fakes take o and lse from q,
    # the gradients from q, k, v each).
    for label, keys in (("", 80), (" M != N", 48)):
        q = torch.randn(1, 2, 80, 64, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        k, v = (torch.randn(1, 2, keys, 64, device="cuda",
                            dtype=torch.bfloat16, requires_grad=True)
                for _ in range(2))
        try:
            torch.library.opcheck(torch.ops.tegula.attention_forward,
                                  (q, k, v, True, 0.125))
            report(True, f"opcheck attention_forward{label}", "schema, fake, "
                   "autograd, aot_dispatch_dynamic")
        except Exception as error:  # noqa: BLE001 - reported, not raised
            report(False, f"opcheck attention_forward{label}",
                   repr(error)[:400])
    x = torch.randn(2, 9, 3, 64, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    cos, sin = (torch.rand(9, 32, device="cuda") for _ in range(2))
    for op, args in ((torch.ops.tegula.rotary, (x, cos, sin, False)),
                     (torch.ops.tegula.rotary_,
                      (x.detach().clone(), cos, sin, True))):
        try:
            torch.library.opcheck(op, args)
            report(True, f"opcheck {op}", "schema, fake, autograd, "
                   "aot_dispatch_dynamic")
        except Exception as error:  # noqa: BLE001
            report(False, f"opcheck {op}", repr(error)[:400])


def grads(fn, q, k, v, do):
    for t in (q, k, v):
        t.grad = None
    fn(q, k, v).backward(do)
    return [t.grad.clone() for t in (q, k, v)]


def check_compiled_and_graphed(fn, q, k, v, do, label=""):
    """fn (an op call on q, k, v) under torch.compile(fullgraph=True) and one
    forward + backward captured in a CUDA graph: both bit-identical to eager.
    `label` prefixes the report lines."""
    eager_o = fn(q, k, v).detach()
    eager = grads(fn, q, k, v, do)
    try:
        compiled = torch.compile(fn, fullgraph=True)
        o = compiled(q, k, v).detach()
        got = grads(compiled, q, k, v, do)
        same = torch.equal(o, eager_o) and all(
            torch.equal(a, b) for a, b in zip(got, eager))
        report(same, f"{label}torch.compile(fullgraph=True)",
               "forward and backward bit-identical to eager" if same else
               "differs from eager")
    except Exception as error:  # noqa: BLE001
        report(False, f"{label}torch.compile(fullgraph=True)",
               repr(error)[:400])

    # One training-like step captured in a CUDA graph, replayed.
    sq, sk, sv = (t.detach().clone().requires_grad_() for t in (q, k, v))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):  # warm up: load modules, fill the fast path
            grads(fn, sq, sk, sv, do)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    for t in (sq, sk, sv):
        t.grad = None
    with torch.cuda.graph(graph):
        out = fn(sq, sk, sv)
        out.backward(do)
    graph.replay()
    torch.cuda.synchronize()
    same = torch.equal(out.detach(), eager_o) and all(
        torch.equal(t.grad, e) for t, e in zip((sq, sk, sv), eager))
    report(same, f"{label}CUDA graph", "replay bit-identical to eager" if same
           else "replay differs from eager")


def check_compile_and_graph():
    shape = (2, 4, 300, 128)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=torch.bfloat16)

    def fn(q, k, v):
        return tegula.ops.attention(q, k, v, causal=True)

    check_compiled_and_graphed(fn, q, k, v, do)


def decode_reference(q, k_cache, v_cache, table, lens, scale):
    """float64 softmax(scale q k^T) v of each sequence's one query over its
    keys gathered from the pages (zeros for an empty sequence)."""
    b, h, d = q.shape
    page, hkv = k_cache.shape[1], k_cache.shape[2]
    out = torch.zeros(b, h, d, dtype=torch.float64, device=q.device)
    for i, n in enumerate(lens):
        if n == 0:
            continue
        rows = torch.arange(n, device=q.device)
        slots = table[i, rows // page].long() * page + rows % page
        k = k_cache.reshape(-1, hkv, d)[slots].double()   # [n, HKV, D]
        v = v_cache.reshape(-1, hkv, d)[slots].double()
        k = k.repeat_interleave(h // hkv, 1).transpose(0, 1)  # [H, n, D]
        v = v.repeat_interleave(h // hkv, 1).transpose(0, 1)
        p = torch.softmax(scale * (q[i].double()[:, None] @
                                   k.transpose(1, 2)), -1)
        out[i] = (p @ v)[:, 0]
    return out


def check_decode(lens, h, hkv, d, page, dtype, splits, layout4=False):
    """attention_decode against float64: pages scattered at random."""
    b = len(lens)
    used = [-(-n // page) for n in lens]
    pages = sum(used) + 3
    perm = torch.randperm(pages, device="cuda")
    table = torch.zeros(b, max(max(used), 1) + 1, dtype=torch.int32,
                        device="cuda")
    at = 0
    for i, n in enumerate(used):
        table[i, :n] = perm[at:at + n].int()
        at += n
    q = torch.randn(b, h, d, device="cuda").to(dtype)
    k_cache, v_cache = (torch.randn(pages, page, hkv, d, device="cuda")
                        .to(dtype) for _ in range(2))
    seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    poison()
    o = tegula.ops.attention_decode(q[:, None] if layout4 else q, k_cache,
                                    v_cache, table, seq_lens, splits=splits)
    want = decode_reference(q, k_cache, v_cache, table, lens, d ** -0.5)
    got = o[:, 0] if layout4 else o
    err = rel_l2(got, want)
    chosen = splits or tegula.ops._decode.splits_for(q, k_cache, table)
    report(err <= 1e-2 and torch.isfinite(o).all().item() and
           got.shape == want.shape,
           f"attention_decode lens {lens[:4]}{'...' if b > 4 else ''} "
           f"H={h} HKV={hkv} D={d} PAGE={page} {str(dtype)[6:]} "
           f"splits={splits} (ran {chosen}){' [B, 1, H, D]' if layout4 else ''}",
           f"o rel L2 {err:.2e} (tol 0.01)")


# Sequence lengths of a batch: empty, one key, ragged, a page's multiple.
RAGGED_DECODE = [1, 0, 333, 17, 1000, 64]


def check_decodes():
    for d in (64, 128):
        for page in (16, 64, 256):
            check_decode(RAGGED_DECODE, 8, 2, d, page, torch.bfloat16, 1)
            check_decode(RAGGED_DECODE, 8, 2, d, page, torch.bfloat16, 5)
    check_decode([4000, 77], 32, 8, 128, 16, torch.bfloat16, None)
    check_decode([300] * 40, 32, 8, 128, 64, torch.float16, None)
    check_decode([129, 2], 4, 4, 64, 256, torch.float16, 16, layout4=True)
    check_decode([50, 0, 7], 16, 1, 128, 16, torch.bfloat16, 3)
    q = torch.randn(2, 4, 128, device="cuda", dtype=torch.bfloat16)
    cache = torch.randn(3, 32, 2, 128, device="cuda", dtype=torch.bfloat16)
    table = torch.zeros(2, 2, dtype=torch.int32, device="cuda")
    lens = torch.ones(2, dtype=torch.int32, device="cuda")
    for label, call, text in (
            ("PAGE = 32", lambda: tegula.ops.attention_decode(
                q, cache, cache, table, lens), "PAGE = 32"),
            ("int64 lengths", lambda: tegula.ops.attention_decode(
                q, cache[:, :16], cache[:, :16], table, lens.long()),
             "argument 'seq_lens'"),
            ("heads", lambda: tegula.ops.attention_decode(
                q[:, :3], cache[:, :16], cache[:, :16], table, lens),
             "HKV must divide H")):
        try:
            call()
            report(False, f"error attention_decode {label}", "no LaunchError")
        except tegula.LaunchError as error:
            report(text in str(error), f"error attention_decode {label}",
                   str(error))


def check_two_devices():
    """The runtime loads each kernel's module once per CUDA context: calls
    alternating between two GPUs of one process each run on their own
    device, forward and backward, against float64 (nvidia-h100-x2)."""
    count = torch.cuda.device_count()
    if count < 2:
        report(None, "two devices", f"{count} GPU: skipped")
        return
    for index in (0, 1, 0, 1):
        with torch.cuda.device(index):
            q, k, v = (torch.randn(1, 2, 130, 64, device=f"cuda:{index}",
                                   dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            o = tegula.ops.attention(q, k, v, causal=True)
            o.float().sum().backward()
            q64, k64, v64 = (t.detach().double().requires_grad_()
                             for t in (q, k, v))
            o64, _ = reference(q64, k64, v64, True, 64 ** -0.5)
            o64.sum().backward()
            errors = [rel_l2(o, o64), rel_l2(q.grad, q64.grad),
                      rel_l2(k.grad, k64.grad), rel_l2(v.grad, v64.grad)]
            on = {t.device.index for t in (o, q.grad, k.grad, v.grad)}
            report(max(errors) <= 1e-2 and on == {index},
                   f"attention on cuda:{index}",
                   f"o dq dk dv rel L2 {' '.join(f'{e:.1e}' for e in errors)}"
                   f" (tol 0.01), results on cuda:{sorted(on)}")


def check_speed():
    """The op's forward + backward beside the kernels called directly."""
    from tegula import _prebuilt
    shape = (4, 16, 4096, 128)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    cap = torch.cuda.get_device_capability()

    def kern(entry, causal=False):
        return _prebuilt.kernel(_prebuilt.bundle_name(entry, 128, causal,
                                                      False), entry, cap)

    def direct():
        o, lse = kern("attention_fwd_lse")(q, k, v, scale=0.088)
        delta = kern("attention_bwd_preprocess")(o, do)
        kern("attention_bwd_dkdv")(q, k, v, do, lse, delta, scale=0.088)
        kern("attention_bwd_dq")(q, k, v, do, lse, delta, scale=0.088)

    def op():
        # autograd.grad, not backward(): .grad accumulating across calls
        # would add three elementwise sums the direct calls do not run.
        o = tegula.ops.attention(q, k, v, scale=0.088)
        torch.autograd.grad(o, (q, k, v), do)

    rounds = [(time_of(direct), time_of(op)) for _ in range(3)]
    t_direct = sorted(r[0] for r in rounds)[1]
    t_op = sorted(r[1] for r in rounds)[1]
    report(None, "speed fwd+bwd [4, 16, 4096, 128] bf16",
           f"op {t_op:.3f} ms, kernels directly {t_direct:.3f} ms "
           f"({t_op / t_direct:.3f}x; median of 3 rounds of 20)")


def main():
    ops_report.seed_inputs(sys.argv)
    print(f"INFO tegula from {os.path.dirname(tegula.__file__)}", flush=True)
    for d in (64, 128):
        for dtype in (torch.bfloat16, torch.float16):
            for causal in (False, True):
                check_attention((2, 3, 333, d), dtype, causal, None)
                check_attention((1, 2, 512, d), dtype, causal, None)
    check_attention((1, 2, 200, 64), torch.bfloat16, True, -0.3)
    check_attention((1, 2, 200, 128), torch.bfloat16, False, 0.0)
    check_attention((1, 1, 1, 64), torch.bfloat16, True, None)
    check_attention((2, 2, 250, 64), torch.bfloat16, True, None, use_o=False)
    for d in (64, 128):
        for causal in (False, True):
            check_attention((2, 8, 333, d), torch.bfloat16, causal, None,
                            kv_heads=2)
    check_attention((1, 4, 200, 128), torch.float16, True, None, kv_heads=1)
    check_attention((1, 2, 300, 128), torch.float16, False, 0.2, use_o=False)
    # Cross attention (M != N): fewer queries than keys (the decode and
    # chunked-prefill shapes), more (rows with no key, causal), both
    # dtypes and head sizes, GQA and MQA, a loss of lse alone.
    for d in (64, 128):
        for causal in (False, True):
            check_attention((2, 3, 77, d), torch.bfloat16, causal, None,
                            keys=333)
            check_attention((2, 3, 333, d), torch.bfloat16, causal, None,
                            keys=77)
    check_attention((1, 8, 200, 64), torch.float16, True, None, kv_heads=2,
                    keys=517)
    check_attention((1, 8, 517, 128), torch.float16, True, -0.3, kv_heads=2,
                    keys=200)
    check_attention((2, 4, 1, 64), torch.bfloat16, True, None, kv_heads=1,
                    keys=300)
    check_attention((1, 4, 300, 128), torch.bfloat16, True, None,
                    kv_heads=1, keys=1)
    check_attention((1, 2, 250, 64), torch.float16, True, None, use_o=False,
                    keys=100)
    for d, r in ((64, 64), (64, 32), (128, 128), (128, 64)):
        for interleaved in (False, True):
            check_rotary((2, 37, 3, d), r, interleaved, torch.bfloat16)
    check_rotary((1, 300, 16, 128), 128, False, torch.float16)
    for shape in ((7, 3001), (2, 33, 2048), (64, 16384)):
        check_rms_norm(shape, torch.bfloat16)
    check_rms_norm((300, 4096), torch.float16)
    check_rms_norm((77, 2048), torch.float32, tol=1e-5)
    for reduction in ("mean", "sum", "none"):
        check_cross_entropy(37, 32003, torch.bfloat16, reduction)
    check_cross_entropy(64, 128256, torch.bfloat16, "mean")
    check_cross_entropy(16, 32000, torch.float16, "mean")
    for reduction in ("mean", "none"):
        # A non-negative ignore_index: rewritten to the kernels' -1.
        check_cross_entropy(37, 32003, torch.bfloat16, reduction,
                            ignore_index=0)
    # int32 targets: converted to the kernels' int64.
    check_cross_entropy(37, 32003, torch.bfloat16, "mean",
                        target_dtype=torch.int32)
    check_fast_path()
    check_attention_layouts()
    check_decodes()
    check_attention_varlens()
    check_errors()
    check_varlen_errors()
    check_opcheck()
    check_compile_and_graph()
    check_varlen_compile_and_graph()
    check_two_devices()
    check_speed()
    check_layout_speed()
    print(f"check-ops: {ops_report.failures} failed", flush=True)
    return 1 if ops_report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
