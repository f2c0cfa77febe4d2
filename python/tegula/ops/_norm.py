"""tegula.ops.rms_norm: RMSNorm as a differentiable PyTorch op.

Forward rmsnorm_fwd (y and each row's rstd, saved for the backward);
backward rmsnorm_bwd_dx (dx, and dw's partial sums over G row groups) then
rmsnorm_bwd_dw (dw = the sum of the G partials, in a fixed order: the same
bits every run).
"""

from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
# Row groups of the backward: programs per column block, each looping over
# the rows r with r % G == g; enough to fill the GPU, few enough that the
# dw partials [G, C] stay small.
_ROW_GROUPS = 256


def _kernel(entry: str, x: Tensor):
    return _common.kernel(_prebuilt.norm_bundle(DTYPES[x.dtype]),
                          entry, x)


# The kernels' repeated calls (_common.Repeats), by the inputs and eps:
# the outputs (dense, x's rows) follow from them.
_fwd = _common.Repeats()
_infer = _common.Repeats()
_bwd_dx = _common.Repeats()
_bwd_dw = _common.Repeats()


def _forward_impl(x: Tensor, w: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    # x and w are dense (rms_norm makes them so): so are their likes.
    y = torch.empty_like(x)
    rstd = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    _fwd.launch(_common.views_key((x, w), eps),
                lambda: _kernel("rmsnorm_fwd", x), (x, w, y, rstd), eps=eps)
    return y, rstd


_forward = torch.library.custom_op("tegula::rms_norm_forward", _forward_impl,
                                   mutates_args=())


@_forward.register_fake
def _forward_fake(x: Tensor, w: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    return torch.empty_like(x), x.new_empty(x.shape[:1], dtype=torch.float32)


def _backward_impl(dy: Tensor, x: Tensor, w: Tensor,
                   rstd: Tensor) -> Tuple[Tensor, Tensor]:
    rows, cols = x.shape
    groups = max(1, min(rows, _ROW_GROUPS))
    dy = dy.contiguous()
    key = _common.views_key((x, dy, w, rstd))
    dw_part = torch.empty(groups, cols, dtype=torch.float32, device=x.device)
    # Dense whatever a trace passes (the kernels' dx and dw are).
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    dw = torch.empty_like(w, memory_format=torch.contiguous_format)
    _bwd_dx.launch(key, lambda: _kernel("rmsnorm_bwd_dx", x),
                   (x, dy, w, rstd, dx, dw_part))
    _bwd_dw.launch(key, lambda: _kernel("rmsnorm_bwd_dw", x), (dw_part, dw))
    return dx, dw


_backward = torch.library.custom_op("tegula::rms_norm_backward",
                                    _backward_impl, mutates_args=())


@_backward.register_fake
def _backward_fake(dy: Tensor, x: Tensor, w: Tensor,
                   rstd: Tensor) -> Tuple[Tensor, Tensor]:
    return torch.empty_like(x), torch.empty_like(w)


def _setup_context(ctx, inputs, output) -> None:
    x, w, _ = inputs
    ctx.save_for_backward(x, w, output[1])
    ctx.set_materialize_grads(False)


def _autograd_backward(ctx, dy, drstd):
    x, w, rstd = ctx.saved_tensors
    if dy is None:
        return None, None, None
    run = _backward_impl if _common.eager(dy, x) else _backward
    dx, dw = run(dy, x, w, rstd)
    return dx, dw, None


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)
_Eager = _common.autograd_function(_forward_impl, _setup_context,
                                   _autograd_backward)


def rms_norm(x: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    """x / sqrt(mean(x^2, -1) + eps) * w over the last dimension, f32
    inside, differentiable in x and w. x: [..., C] bf16, f16 or f32 (an
    autocast model's f32 residual stream) on CUDA; w: [C] of x's dtype.
    Deterministic backward."""
    # What the checks and the no-grad kernel call depend on (the rows and
    # w the kernel takes follow from x's and w's layouts).
    key = _common.views_key((x, w), eps)
    if key not in _checked:
        _check(x, w)
        _checked.add(key)
    # Rows already [R, C] and dense: no view made or undone (2 of 6 us of
    # Python a call, stop 41).
    flat = x.dim() == 2 and x.is_contiguous()
    rows = x if flat else x.reshape(-1, x.shape[-1]).contiguous()
    if not w.is_contiguous():
        w = w.contiguous()
    run = _common.eager_call(_Eager, _forward_impl, rows, w) or \
        torch.ops.tegula.rms_norm_forward
    if run is _forward_impl:
        # Nothing to differentiate: the kernel without rstd (the same code
        # and blocks but its one store: the same y, bit for bit), and no
        # rstd to allocate (2-4 us a call on the H100 machine's host).
        y = torch.empty_like(rows)
        _infer.launch(key, lambda: _kernel("rmsnorm", rows), (rows, w, y),
                      eps=float(eps))
    else:
        y, _ = run(rows, w, float(eps))
    return y if flat else y.view(x.shape)


_checked = _common.CheckedSignatures()


def _check(x: Tensor, w: Tensor) -> None:
    """What the kernels cannot take, as LaunchError naming the argument."""
    if x.dim() < 1 or w.dim() != 1 or w.shape[0] != x.shape[-1]:
        raise LaunchError(f"rms_norm: argument 'w' has shape {list(w.shape)} "
                          f"but x has {list(x.shape)}: w must be [C] with x's "
                          f"last extent", "w")
    if x.dtype not in DTYPES or not x.is_cuda:
        raise LaunchError(f"rms_norm: argument 'x' is {x.dtype} on {x.device}"
                          f": expected a bf16, f16 or f32 CUDA tensor", "x")
    if w.dtype != x.dtype or w.get_device() != x.get_device():
        raise LaunchError(f"rms_norm: argument 'w' is {w.dtype} on "
                          f"{w.device} but x is {x.dtype} on {x.device}", "w")
