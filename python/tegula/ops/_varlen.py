"""tegula.ops.attention_varlen: attention over packed variable-length
sequences (flash-attn's flash_attn_varlen_func) as a differentiable
PyTorch op.

Two custom ops, each with a fake implementation: tegula::
attention_varlen_forward (attention_varlen_fwd: the output and each row's
logsumexp) and tegula::attention_varlen_backward (the preprocess, dK/dV and
dQ kernels of kernels/attention_varlen_bwd.tile). Kernels are chosen from
host-known values only (shapes, dtypes, causal, and max_seqlen_q/k as
Python ints), so a call never reads the device: it runs under CUDA graphs
and torch.compile(fullgraph=True).
"""

from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

HEAD_DIMS = _prebuilt.VARLEN_HEAD_DIMS
DTYPES = (torch.bfloat16, torch.float16)


def _kernel(entry: str, q: Tensor, causal: bool, build: str = ""):
    """Kernel `entry` for q's head size and dtype; `build` "_grouped" picks
    dK/dV's build for K/V heads shared by query heads."""
    name = _prebuilt.varlen_bundle(entry + build, q.shape[-1], causal,
                                   q.dtype == torch.float16)
    return _common.kernel(name, entry, q)


def _runs(q: Tensor, k: Tensor, max_seqlen_q: int, max_seqlen_k: int) -> bool:
    """Whether any query sees any key: else every output is its initial
    value (o = 0, lse = -inf, zero gradients) and nothing is launched."""
    return (q.shape[0] > 0 and k.shape[0] > 0 and max_seqlen_q > 0
            and max_seqlen_k > 0)


@torch.library.custom_op("tegula::attention_varlen_forward", mutates_args=())
def _forward(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
             cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
             causal: bool, scale: float) -> Tuple[Tensor, Tensor]:
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    # Rows in no sequence are never written: o = 0 and lse = -inf there, as
    # for a row that sees no key.
    o = torch.zeros_like(q)
    lse = torch.full((q.shape[1], q.shape[0]), float("-inf"),
                     dtype=torch.float32, device=q.device)
    if _runs(q, k, max_seqlen_q, max_seqlen_k):
        _kernel("attention_varlen_fwd", q, causal)(
            q, k, v, o=o, lse=lse, cu_seqlens_q=cu_seqlens_q.contiguous(),
            cu_seqlens_k=cu_seqlens_k.contiguous(),
            max_seqlen_q=max_seqlen_q, scale=scale)
    return o, lse


@_forward.register_fake
def _forward_fake(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                  cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
                  causal: bool, scale: float) -> Tuple[Tensor, Tensor]:
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32))


@torch.library.custom_op("tegula::attention_varlen_backward",
                         mutates_args=())
def _backward(do: Tensor, dlse: Optional[Tensor], q: Tensor, k: Tensor,
              v: Tensor, o: Tensor, lse: Tensor, cu_seqlens_q: Tensor,
              cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
              causal: bool, scale: float) -> Tuple[Tensor, Tensor, Tensor]:
    do, q, k, v = do.contiguous(), q.contiguous(), k.contiguous(), \
        v.contiguous()
    # Rows in no sequence, and keys no query sees, get zero gradients.
    dq, dk, dv = (torch.zeros_like(t) for t in (q, k, v))
    if not _runs(q, k, max_seqlen_q, max_seqlen_k):
        return dq, dk, dv
    cu_q, cu_k = cu_seqlens_q.contiguous(), cu_seqlens_k.contiguous()
    delta = _kernel("attention_varlen_bwd_preprocess", q, False)(
        o.contiguous(), do)
    if dlse is not None:
        # d lse_i / d s_ij = P_ij: the kernels' dS = P (dP - delta) takes an
        # lse gradient g as delta - g (rows with lse = -inf have P = 0).
        delta = delta - dlse.float()
    grouped = "_grouped" if k.shape[1] != q.shape[1] else ""
    _kernel("attention_varlen_bwd_dkdv", q, causal, grouped)(
        q, k, v, do, lse.contiguous(), delta, dk=dk, dv=dv, cu_seqlens_q=cu_q,
        cu_seqlens_k=cu_k, max_seqlen_k=max_seqlen_k, scale=scale)
    _kernel("attention_varlen_bwd_dq", q, causal)(
        q, k, v, do, lse.contiguous(), delta, dq=dq, cu_seqlens_q=cu_q,
        cu_seqlens_k=cu_k, max_seqlen_q=max_seqlen_q, scale=scale)
    return dq, dk, dv


@_backward.register_fake
def _backward_fake(do: Tensor, dlse: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, o: Tensor, lse: Tensor, cu_seqlens_q: Tensor,
                   cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
                   causal: bool, scale: float
                   ) -> Tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.empty_like(t, memory_format=torch.contiguous_format)
                 for t in (q, k, v))


def _setup_context(ctx, inputs, output) -> None:
    q, k, v, cu_q, cu_k, max_q, max_k, causal, scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, cu_q, cu_k)
    ctx.max_q, ctx.max_k, ctx.causal, ctx.scale = max_q, max_k, causal, scale
    # An unused lse gets None: no subtraction in the backward.
    ctx.set_materialize_grads(False)


def _autograd_backward(ctx, do: Optional[Tensor], dlse: Optional[Tensor]):
    q, k, v, o, lse, cu_q, cu_k = ctx.saved_tensors
    if do is None:
        do = torch.zeros_like(o)
    dq, dk, dv = _backward(do, dlse, q, k, v, o, lse, cu_q, cu_k, ctx.max_q,
                           ctx.max_k, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None, None, None, None, None


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)


def _check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"attention_varlen: {name} must be a "
                            f"torch.Tensor, got {type(t).__name__}")
        if t.dim() != 3:
            want = "[total_q, H, D]" if name == "q" else "[total_k, HKV, D]"
            raise LaunchError(f"attention_varlen: argument '{name}' has shape "
                              f"{list(t.shape)}: expected {want}")
        if t.dtype not in DTYPES:
            raise LaunchError(f"attention_varlen: argument '{name}' is "
                              f"{t.dtype}: expected torch.bfloat16 or "
                              f"torch.float16")
    for name, t in (("k", k), ("v", v)):
        h, d = q.shape[1:]
        if (t.shape[2] != d or t.shape[1] < 1 or h % t.shape[1]
                or t.shape != k.shape):
            raise LaunchError(
                f"attention_varlen: argument '{name}' has shape "
                f"{list(t.shape)} but q has {list(q.shape)}: k and v must "
                f"both be [total_k, HKV, D] with q's D and HKV dividing q's "
                f"H heads (GQA; HKV = H is multi-head attention)")
        if t.dtype != q.dtype:
            raise LaunchError(f"attention_varlen: argument '{name}' is "
                              f"{t.dtype} but q is {q.dtype}")
    if q.shape[-1] not in HEAD_DIMS:
        raise LaunchError(
            f"attention_varlen: head dimension D = {q.shape[-1]} (q's last "
            f"extent): tegula.ops.attention_varlen ships D = "
            f"{' and '.join(map(str, HEAD_DIMS))}", "q")


def _check_bounds(cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                  max_seqlen_q: int, max_seqlen_k: int) -> None:
    for name, t in (("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, Tensor):
            raise TypeError(f"attention_varlen: {name} must be a "
                            f"torch.Tensor, got {type(t).__name__}")
        if t.dtype != torch.int32:
            raise LaunchError(f"attention_varlen: argument '{name}' is "
                              f"{t.dtype}: expected torch.int32")
        if t.dim() != 1 or t.shape[0] < 2:
            raise LaunchError(f"attention_varlen: argument '{name}' has shape "
                              f"{list(t.shape)}: expected [B + 1] bounds, "
                              f"B >= 1")
    if cu_seqlens_k.shape != cu_seqlens_q.shape:
        raise LaunchError(
            f"attention_varlen: argument 'cu_seqlens_k' has shape "
            f"{list(cu_seqlens_k.shape)} but cu_seqlens_q has "
            f"{list(cu_seqlens_q.shape)}: both hold the B + 1 bounds of the "
            f"same B sequences")
    for name, m in (("max_seqlen_q", max_seqlen_q),
                    ("max_seqlen_k", max_seqlen_k)):
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise LaunchError(
                f"attention_varlen: argument '{name}' is {m!r}: expected a "
                f"Python int >= 0, at least the longest sequence (a tensor "
                f"would need a device sync)")


def _check_devices(tensors) -> None:
    """Every tensor on q's CUDA device (checked last, so that the checks
    above run on any device)."""
    q = tensors[0][1]
    for name, t in tensors:
        if t.device.type != "cuda":
            raise LaunchError(f"attention_varlen: argument '{name}' is on "
                              f"{t.device}: expected a CUDA tensor")
        if t.device != q.device:
            raise LaunchError(f"attention_varlen: argument '{name}' is on "
                              f"{t.device} but q is on {q.device}")


def attention_varlen(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                     cu_seqlens_k: Tensor, max_seqlen_q: int,
                     max_seqlen_k: int, causal: bool = False,
                     scale: Optional[float] = None, return_lse: bool = False
                     ) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Attention over packed sequences (flash-attn's varlen layout),
    differentiable in q, k and v: q [total_q, H, D], k and v [total_k, HKV,
    D] (HKV dividing H; query head h reads K/V head h // (H // HKV)).
    Sequence b is q rows cu_seqlens_q[b] .. cu_seqlens_q[b+1] - 1 and k rows
    cu_seqlens_k[b] .. cu_seqlens_k[b+1] - 1 (int32, B + 1 non-decreasing
    bounds each); max_seqlen_q and max_seqlen_k are Python ints at least
    the longest query and key sequence.

    causal: aligned bottom-right per sequence, query i sees key j iff
    j <= i + len_k - len_q. A query that sees no key outputs 0, has lse
    -inf and gets zero gradients; rows in no sequence are 0 in o and in
    the gradients (-inf in lse). scale: None means D ** -0.5; any float.
    return_lse: also return lse, f32 [H, total_q] (head-major, as
    flash-attn), itself differentiable. bf16 or f16; D = 64 or 128.
    docs/ops.md has the limits.
    """
    _check_qkv(q, k, v)
    _check_bounds(cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    _check_devices((("q", q), ("k", k), ("v", v),
                    ("cu_seqlens_q", cu_seqlens_q),
                    ("cu_seqlens_k", cu_seqlens_k)))
    if scale is None:
        scale = q.shape[-1] ** -0.5
    o, lse = torch.ops.tegula.attention_varlen_forward(
        q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
        int(max_seqlen_k), bool(causal), float(scale))
    return (o, lse) if return_lse else o
