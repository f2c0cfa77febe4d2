"""tegula.ops.attention: flash attention as a differentiable PyTorch op.

Two custom ops, each with a fake implementation so that torch.compile
traces through them: tegula::attention_forward (attention_fwd_lse: the
output and each row's logsumexp) and tegula::attention_backward (the
backward's preprocess, dK/dV and dQ kernels). The forward's autograd
formula calls the backward op, so eager, torch.compile(fullgraph=True) and
CUDA graphs all run the same kernels.
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


@torch.library.custom_op("tegula::attention_forward", mutates_args=())
def _forward(q: Tensor, k: Tensor, v: Tensor, causal: bool,
             scale: float) -> Tuple[Tensor, Tensor]:
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o, lse = _kernel("attention_fwd_lse", q, causal)(q, k, v, scale=scale)
    return o, lse


@_forward.register_fake
def _forward_fake(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                  scale: float) -> Tuple[Tensor, Tensor]:
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty(q.shape[:3], dtype=torch.float32))


@torch.library.custom_op("tegula::attention_backward", mutates_args=())
def _backward(do: Tensor, dlse: Optional[Tensor], q: Tensor, k: Tensor,
              v: Tensor, o: Tensor, lse: Tensor, causal: bool,
              scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    do, q, k, v = do.contiguous(), q.contiguous(), k.contiguous(), \
        v.contiguous()
    delta = _kernel("attention_bwd_preprocess", q, False)(o, do)
    if dlse is not None:
        # d lse_i / d s_ij = P_ij (s the scaled score): the kernels'
        # dS = P (dP - delta) takes an lse gradient g as delta - g.
        delta = delta - dlse.float()
    grouped = "_grouped" if k.shape[1] != q.shape[1] else ""
    dk, dv = _kernel("attention_bwd_dkdv", q, causal, grouped)(
        q, k, v, do, lse, delta, scale=scale)
    dq = _kernel("attention_bwd_dq", q, causal)(
        q, k, v, do, lse, delta, scale=scale)
    return dq, dk, dv


@_backward.register_fake
def _backward_fake(do: Tensor, dlse: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, o: Tensor, lse: Tensor, causal: bool,
                   scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.empty_like(t, memory_format=torch.contiguous_format)
                 for t in (q, k, v))


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
    dq, dk, dv = _backward(do, dlse, q, k, v, o, lse, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)


def _check(q: Tensor, k: Tensor, v: Tensor) -> None:
    """What the kernels cannot take, as LaunchError naming the argument."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"attention: {name} must be a torch.Tensor, "
                            f"got {type(t).__name__}")
        if t.dim() != 4:
            shape = "[B, H, M, D]" if name == "q" else "[B, HKV, N, D]"
            raise LaunchError(f"attention: argument '{name}' has shape "
                              f"{list(t.shape)}: expected {shape}")
        if t.dtype not in DTYPES:
            raise LaunchError(f"attention: argument '{name}' is {t.dtype}: "
                              f"expected torch.bfloat16 or torch.float16")
        if t.device.type != "cuda":
            raise LaunchError(f"attention: argument '{name}' is on "
                              f"{t.device}: expected a CUDA tensor")
    for name, t in (("k", k), ("v", v)):
        b, h, m, d = q.shape
        if (t.shape[0] != b or t.shape[3] != d or t.shape[1] < 1
                or h % t.shape[1] or t.shape != k.shape):
            raise LaunchError(
                f"attention: argument '{name}' has shape {list(t.shape)} "
                f"but q has {list(q.shape)}: k and v must both be "
                f"[B, HKV, N, D] with q's B and D (N keys, any number; q "
                f"has M = {m} queries), and HKV dividing q's H heads (GQA; "
                f"HKV = H is multi-head attention)")
        if t.dtype != q.dtype or t.device != q.device:
            raise LaunchError(
                f"attention: argument '{name}' is {t.dtype} on {t.device} "
                f"but q is {q.dtype} on {q.device}")
    if q.shape[-1] not in HEAD_DIMS:
        raise LaunchError(
            f"attention: head dimension D = {q.shape[-1]} (q's last "
            f"extent): tegula.ops.attention ships D = "
            f"{' and '.join(map(str, HEAD_DIMS))}", "q")


def attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False,
              scale: Optional[float] = None, return_lse: bool = False
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
    itself differentiable. bf16 or f16; D = 64 or 128. docs/ops.md has the
    limits.
    """
    _check(q, k, v)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    o, lse = torch.ops.tegula.attention_forward(q, k, v, bool(causal),
                                                float(scale))
    return (o, lse) if return_lse else o
