"""tegula.ops.attention: flash attention as a differentiable PyTorch op.

Two custom ops, each with a fake implementation so that torch.compile
traces through them: tegula::attention_forward (attention_fwd_lse: the
output and each row's logsumexp) and tegula::attention_backward (the
backward's preprocess, dK/dV and dQ kernels). The forward's autograd
formula calls the backward op, so eager, torch.compile(fullgraph=True) and
CUDA graphs all run the same kernels.

The kernels take q, k, v, o, do and the gradients as strided views
[B, H, N, D]: SDPA's layout, flash-attn's [B, N, H, D] (transposed views)
and the slices of a fused qkv pass by their strides, never copied. No view
torch makes is refused at launch (strides are never negative; a read view
may alias, as an expanded one does; the written views are the op's own,
dense), so nothing falls back to a copy. Views with unit-stride rows at
16-byte offsets run the kernels' unit-stride variants (docs/runtime.md);
any other view runs their general code, correct and slower.
"""

from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

HEAD_DIMS = (64, 128)
DTYPES = (torch.bfloat16, torch.float16)


def _kernel(entry: str, q: Tensor, causal: bool, build: str = ""):
    """Kernel `entry` for q's head size and dtype; `build` picks another
    build of it ("_grouped": dK/dV for K/V heads shared by query heads)."""
    name = _prebuilt.bundle_name(entry + build, q.shape[-1], causal,
                                 q.dtype == torch.float16)
    return _common.kernel(name, entry, q)


def _like(t: Tensor) -> Tensor:
    """An empty tensor of t's shape, dense, in t's memory order: its first
    three dimensions by stride, largest first (ties in order), and D last
    (unit-stride rows). For a dense t (contiguous, a transposed
    [B, N, H, D]) that is torch.empty_like's layout; a slice of a fused qkv
    [B, N, 3, H, D] gives [B, N, H, D] memory. The outputs o, dq, dk and dv
    come back in their input's layout, and the fake implementations give
    the real ones' strides by calling this too."""
    if t.is_contiguous():
        # empty_like: no shape argument to parse (0.8 against 2.1 us).
        return torch.empty_like(t)
    order = sorted(range(3), key=lambda d: -t.stride(d)) + [3]
    strides, step = [0] * 4, 1
    for d in reversed(order):
        strides[d], step = step, step * t.shape[d]
    # Not a permuted view: a custom op's outputs may not be views.
    return t.new_empty_strided(t.shape, strides)


def _lse(q: Tensor) -> Tensor:
    """The f32 [B, H, M] buffer of each row's logsumexp (contiguous)."""
    # Extents as ints: torch parses a torch.Size argument slower (1.9
    # against 0.9 us on the development machine).
    b, h, m, _ = q.shape
    return torch.empty(b, h, m, dtype=torch.float32, device=q.device)


# The kernels' repeated calls (_common.Repeats), by q, k, v (and in the
# backward do, o, lse), causal and scale: the outputs and delta follow
# from them (_like, _lse).
_fwd = _common.Repeats()
_bwd_preprocess = _common.Repeats()
_bwd_dkdv = _common.Repeats()
_bwd_dq = _common.Repeats()


def _forward_impl(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                  scale: float) -> Tuple[Tensor, Tensor]:
    return _forward_keyed(_common.views_key((q, k, v), causal, scale),
                          q, k, v, causal, scale)


def _forward_keyed(key: Optional[tuple], q: Tensor, k: Tensor, v: Tensor,
                   causal: bool, scale: float) -> Tuple[Tensor, Tensor]:
    """_forward_impl with its Repeats key given: attention's own (its
    checks' key, in the caller's layout) on the eager path without
    autograd, so that a call reads its tensors once."""
    o, lse = _like(q), _lse(q)
    _fwd.launch(key, lambda: _kernel("attention_fwd_lse", q, causal),
                (q, k, v, o, lse), scale=scale)
    return o, lse


_forward = torch.library.custom_op("tegula::attention_forward", _forward_impl,
                                   mutates_args=())


@_forward.register_fake
def _forward_fake(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                  scale: float) -> Tuple[Tensor, Tensor]:
    return _like(q), _lse(q)


def _backward_impl(do: Tensor, dlse: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, o: Tensor, lse: Tensor, causal: bool,
                   scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    key = _common.views_key((do, q, k, v, o, lse), causal, scale)
    delta = _lse(q)
    _bwd_preprocess.launch(
        key, lambda: _kernel("attention_bwd_preprocess", q, False),
        (o, do, delta))
    if dlse is not None:
        # d lse_i / d s_ij = P_ij (s the scaled score): the kernels'
        # dS = P (dP - delta) takes an lse gradient g as delta - g.
        delta.sub_(dlse.float())
    grouped = "_grouped" if k.shape[1] != q.shape[1] else ""
    dq, dk, dv = _like(q), _like(k), _like(v)
    _bwd_dkdv.launch(
        key, lambda: _kernel("attention_bwd_dkdv", q, causal, grouped),
        (q, k, v, do, lse, delta, dk, dv), scale=scale)
    _bwd_dq.launch(key, lambda: _kernel("attention_bwd_dq", q, causal),
                   (q, k, v, do, lse, delta, dq), scale=scale)
    return dq, dk, dv


_backward = torch.library.custom_op("tegula::attention_backward",
                                    _backward_impl, mutates_args=())


@_backward.register_fake
def _backward_fake(do: Tensor, dlse: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, o: Tensor, lse: Tensor, causal: bool,
                   scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    return _like(q), _like(k), _like(v)


def _setup_context(ctx, inputs, output) -> None:
    q, k, v, causal, scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse)
    ctx.causal, ctx.scale = causal, scale
    # An output nothing reads gets None, not a zero tensor: an unused lse
    # then costs no subtraction in the backward.
    ctx.set_materialize_grads(False)


def _autograd_backward(ctx, do: Optional[Tensor], dlse: Optional[Tensor]):
    q, k, v, o, lse = ctx.saved_tensors
    if do is None:
        do = torch.zeros_like(o)
    run = _backward_impl if _common.eager(do, dlse, q) else _backward
    dq, dk, dv = run(do, dlse, q, k, v, o, lse, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)
_Eager = _common.autograd_function(_forward_impl, _setup_context,
                                   _autograd_backward)


# layout -> (q's dimension names, k's and v's): the caller's order.
LAYOUTS = {"bhnd": ("[B, H, M, D]", "[B, HKV, N, D]"),
           "bnhd": ("[B, M, H, D]", "[B, N, HKV, D]")}


def _check_layout(layout: object) -> None:
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise LaunchError(
            f"attention: argument 'layout' is {layout!r}: expected 'bhnd' "
            f"(q [B, H, M, D], k and v [B, HKV, N, D]: SDPA's) or 'bnhd' "
            f"(q [B, M, H, D], k and v [B, N, HKV, D]: flash-attn's)",
            "layout")


_checked = _common.CheckedSignatures()


def _check(q: Tensor, k: Tensor, v: Tensor, layout: str) -> None:
    """What the kernels cannot take, as LaunchError naming the argument.
    q, k and v are in the caller's layout; shapes are named in it."""
    q_dims, kv_dims = LAYOUTS[layout]
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"attention: {name} must be a torch.Tensor, "
                            f"got {type(t).__name__}")
        if t.dim() != 4:
            shape = q_dims if name == "q" else kv_dims
            raise LaunchError(f"attention: argument '{name}' has shape "
                              f"{list(t.shape)}: expected {shape}")
        if t.dtype not in DTYPES:
            raise LaunchError(f"attention: argument '{name}' is {t.dtype}: "
                              f"expected torch.bfloat16 or torch.float16")
        if not t.is_cuda:
            raise LaunchError(f"attention: argument '{name}' is on "
                              f"{t.device}: expected a CUDA tensor")
    heads = 1 if layout == "bhnd" else 2
    for name, t in (("k", k), ("v", v)):
        b, h, m, d = q.shape[0], q.shape[heads], q.shape[3 - heads], \
            q.shape[3]
        hkv = t.shape[heads]
        if (t.shape[0] != b or t.shape[3] != d or hkv < 1 or h % hkv
                or t.shape != k.shape):
            raise LaunchError(
                f"attention: argument '{name}' has shape {list(t.shape)} "
                f"but q has {list(q.shape)}: k and v must both be "
                f"{kv_dims} with q's B and D (N keys, any number; q "
                f"has M = {m} queries), and HKV dividing q's H heads (GQA; "
                f"HKV = H is multi-head attention)")
        # get_device: an int, where .device builds an object per call.
        if t.dtype != q.dtype or t.get_device() != q.get_device():
            raise LaunchError(
                f"attention: argument '{name}' is {t.dtype} on {t.device} "
                f"but q is {q.dtype} on {q.device}")
    if q.shape[-1] not in HEAD_DIMS:
        raise LaunchError(
            f"attention: head dimension D = {q.shape[-1]} (q's last "
            f"extent): tegula.ops.attention ships D = "
            f"{' and '.join(map(str, HEAD_DIMS))}", "q")


def attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False,
              scale: Optional[float] = None, return_lse: bool = False,
              layout: str = "bhnd"
              ) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """softmax(scale * q k^T) v with q [B, H, M, D] and k, v [B, HKV, N, D]
    (SDPA's layout), differentiable in q, k and v. M and N may differ
    (cross attention). k and v may have fewer heads, HKV dividing H
    (grouped-query attention; query head h reads K/V head h // (H // HKV)).

    causal: query i sees keys j <= i + N - M, aligned bottom-right as in
    FlashAttention 2.1+ (j <= i when M = N; SDPA's is_causal aligns
    top-left instead when M != N). A query that sees no key (i < M - N)
    gives o = 0, lse = -inf and no gradient. scale: None means D ** -0.5;
    any float, zero and negative included. return_lse: also return each
    row's logsumexp ln(sum_j exp(scale * q_i . k_j)), f32 [B, H, M],
    itself differentiable. layout: "bhnd" (above) or "bnhd", flash-attn's
    q [B, M, H, D] and k, v [B, N, HKV, D], o returned as [B, M, H, D] (lse
    stays [B, H, M]). Any strides are taken without a copy (a transposed
    view, the slices of a fused qkv), and o and the gradients come back in
    their input's memory order. bf16 or f16; D = 64 or 128. docs/ops.md
    has the limits.
    """
    _check_layout(layout)
    # What the checks and the kernel's call depend on, in the caller's
    # layout (the kernels' views follow from it); the layout keeps it apart
    # from _forward_impl's keys.
    key = _common.views_key((q, k, v), causal, scale, layout)
    if key not in _checked:
        _check(q, k, v, layout)
        _checked.add(key)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    if layout == "bnhd":
        # Transposed views: the kernels read [B, N, H, D] memory through
        # their strides.
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    run = _common.eager_call(_Eager, _forward_impl, q, k, v) or \
        torch.ops.tegula.attention_forward
    if run is _forward_impl:
        o, lse = _forward_keyed(key, q, k, v, bool(causal), float(scale))
    else:
        o, lse = run(q, k, v, bool(causal), float(scale))
    if layout == "bnhd":
        o = o.transpose(1, 2)
    return (o, lse) if return_lse else o
