"""tegula.ops.cross_entropy: the fused cross-entropy loss as a
differentiable PyTorch op.

Forward cross_entropy (each row's loss and logsumexp, the logits read
once); backward cross_entropy_bwd (dlogits = (softmax - onehot) * dloss
per row, ignored rows zero). The reduction is ordinary PyTorch over the
per-row losses, so its gradient reaches the kernel as dloss.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

DTYPES = (torch.bfloat16, torch.float16)
REDUCTIONS = ("mean", "sum", "none")


def _kernel(entry: str, logits: Tensor):
    return _common.kernel(
        _prebuilt.loss_bundle(logits.dtype == torch.float16), entry, logits)


# The kernels' repeated calls (_common.Repeats), by the inputs: the
# outputs (dense) follow from them.
_fwd = _common.Repeats()
_bwd = _common.Repeats()


def _forward_impl(logits: Tensor, target: Tensor) -> Tuple[Tensor, Tensor]:
    return _forward_keyed(_common.views_key((logits, target)), logits,
                          target)


def _forward_keyed(key: Optional[tuple], logits: Tensor,
                   target: Tensor) -> Tuple[Tensor, Tensor]:
    """_forward_impl with its Repeats key given: cross_entropy's own (its
    checks' key, of the caller's logits and target) on the eager path
    without autograd, so that a call reads its tensors once."""
    rows, device = logits.shape[0], logits.device
    loss = torch.empty(rows, dtype=torch.float32, device=device)
    lse = torch.empty(rows, dtype=torch.float32, device=device)
    _fwd.launch(key, lambda: _kernel("cross_entropy", logits),
                (logits, target, loss, lse))
    return loss, lse


_forward = torch.library.custom_op("tegula::cross_entropy_forward",
                                   _forward_impl, mutates_args=())


@_forward.register_fake
def _forward_fake(logits: Tensor, target: Tensor) -> Tuple[Tensor, Tensor]:
    rows = logits.new_empty(logits.shape[:1], dtype=torch.float32)
    return rows, torch.empty_like(rows)


def _backward_impl(dloss: Tensor, logits: Tensor, target: Tensor,
                   lse: Tensor) -> Tensor:
    dloss = dloss.float().contiguous()
    # Dense whatever a trace passes (the kernel's dlogits is).
    dlogits = torch.empty_like(logits, memory_format=torch.contiguous_format)
    _bwd.launch(_common.views_key((logits, target, lse, dloss)),
                lambda: _kernel("cross_entropy_bwd", logits),
                (logits, target, lse, dloss, dlogits))
    return dlogits


_backward = torch.library.custom_op("tegula::cross_entropy_backward",
                                    _backward_impl, mutates_args=())


@_backward.register_fake
def _backward_fake(dloss: Tensor, logits: Tensor, target: Tensor,
                   lse: Tensor) -> Tensor:
    return torch.empty_like(logits)


def _setup_context(ctx, inputs, output) -> None:
    logits, target = inputs
    ctx.save_for_backward(logits, target, output[1])
    ctx.set_materialize_grads(False)


def _autograd_backward(ctx, dloss, dlse):
    logits, target, lse = ctx.saved_tensors
    if dloss is None:
        return None, None
    run = _backward_impl if _common.eager(dloss, logits) else _backward
    return run(dloss, logits, target, lse), None


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)
_Eager = _common.autograd_function(_forward_impl, _setup_context,
                                   _autograd_backward)


def cross_entropy(logits: Tensor, target: Tensor, ignore_index: int = -100,
                  reduction: str = "mean") -> Tensor:
    """torch.nn.functional.cross_entropy over logits [R, V] (bf16/f16, any
    vocabulary size) and integer targets [R], accumulated in f32, without
    materializing the softmax. Rows whose target is ignore_index count zero
    (and are left out of the mean). reduction: "mean", "sum" or "none"."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"cross_entropy: reduction '{reduction}' is not one "
                         f"of {', '.join(REDUCTIONS)}")
    # What the checks and the kernel's call depend on (the logits and
    # targets the kernel takes follow from the caller's and ignore_index;
    # the name keeps it apart from _forward_impl's keys).
    key = _common.views_key((logits, target), "cross_entropy", ignore_index)
    if key not in _checked:
        _check(logits, target)
        _checked.add(key)
    # The kernels take a negative target as "ignored": a negative
    # ignore_index (-100, the default) needs no rewrite, and int64 targets
    # (PyTorch's) no conversion: no launch but the kernel's on every call
    # (the int32 conversion cost 12.6 us a call on the H100 machine's
    # host, stop 41).
    target64 = target if ignore_index < 0 else \
        torch.where(target == ignore_index, -1, target)
    if target64.dtype != torch.int64:
        target64 = target64.to(torch.int64)
    logits = logits.contiguous()
    run = _common.eager_call(_Eager, _forward_impl, logits, target64) or \
        torch.ops.tegula.cross_entropy_forward
    if run is _forward_impl:
        loss, _ = _forward_keyed(key, logits, target64)
    else:
        loss, _ = run(logits, target64)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (target != ignore_index).sum()


_checked = _common.CheckedSignatures()


def _check(logits: Tensor, target: Tensor) -> None:
    """What the kernels cannot take, as LaunchError naming the argument."""
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise LaunchError(f"cross_entropy: logits {list(logits.shape)} and "
                          f"target {list(target.shape)}: expected [R, V] and "
                          f"[R]", "target")
    if logits.dtype not in DTYPES or not logits.is_cuda:
        raise LaunchError(f"cross_entropy: argument 'logits' is "
                          f"{logits.dtype} on {logits.device}: expected a "
                          f"bf16 or f16 CUDA tensor", "logits")
    if target.dtype.is_floating_point or \
            target.get_device() != logits.get_device():
        raise LaunchError(f"cross_entropy: argument 'target' is "
                          f"{target.dtype} on {target.device}: expected "
                          f"integers on {logits.device}", "target")
