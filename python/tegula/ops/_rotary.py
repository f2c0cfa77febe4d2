"""tegula.ops.rotary: rotary position embedding (RoPE) as a PyTorch op.

The rotation by angle t's (cos, sin) is undone by the rotation by
(cos, -sin): the backward is the forward kernel on the output gradient
with sin negated (sin is [T, R / 2], small beside x).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

DTYPES = (torch.bfloat16, torch.float16)


def _kernel(entry: str, x: Tensor, rotary_dim: int, interleaved: bool):
    name = _prebuilt.rotary_bundle(x.shape[-1], rotary_dim, interleaved,
                                   x.dtype == torch.float16)
    return _common.kernel(name, entry, x)


# The kernels' repeated calls (_common.Repeats), by the inputs and the
# pair order: the output (dense, x's shape) follows from them.
_repeats = _common.Repeats()
_repeats_inplace = _common.Repeats()


def _rotary_impl(x: Tensor, cos: Tensor, sin: Tensor,
                 interleaved: bool) -> Tensor:
    x, cos, sin = x.contiguous(), cos.contiguous(), sin.contiguous()
    out = torch.empty_like(x)
    _repeats.launch(_common.views_key((x, cos, sin), interleaved),
                    lambda: _kernel("rotary", x, 2 * cos.shape[-1],
                                    interleaved), (x, cos, sin, out))
    return out


_rotary = torch.library.custom_op("tegula::rotary", _rotary_impl,
                                  mutates_args=())


@_rotary.register_fake
def _rotary_fake(x: Tensor, cos: Tensor, sin: Tensor,
                 interleaved: bool) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output) -> None:
    _, cos, sin, interleaved = inputs
    ctx.save_for_backward(cos, sin)
    ctx.interleaved = interleaved


def _backward(ctx, dy: Tensor):
    cos, sin = ctx.saved_tensors
    run = _rotary_impl if _common.eager(dy, cos) else _rotary
    return run(dy, cos, -sin, ctx.interleaved), None, None, None


_rotary.register_autograd(_backward, setup_context=_setup_context)
_Eager = _common.autograd_function(_rotary_impl, _setup_context, _backward)


@torch.library.custom_op("tegula::rotary_", mutates_args=("x",))
def _rotary_inplace(x: Tensor, cos: Tensor, sin: Tensor,
                    interleaved: bool) -> None:
    cos, sin = cos.contiguous(), sin.contiguous()
    _repeats_inplace.launch(
        _common.views_key((x, cos, sin), interleaved),
        lambda: _kernel("rotary_inplace", x, 2 * cos.shape[-1], interleaved),
        (x, cos, sin))


@_rotary_inplace.register_fake
def _rotary_inplace_fake(x: Tensor, cos: Tensor, sin: Tensor,
                         interleaved: bool) -> None:
    return None


def _check(x: Tensor, cos: Tensor, sin: Tensor, inplace: bool) -> None:
    if x.dim() != 4:
        raise LaunchError(f"rotary: argument 'x' has shape {list(x.shape)}: "
                          f"expected [B, T, H, D] (one head per H)", "x")
    b, t, h, d = x.shape
    if x.dtype not in DTYPES or x.device.type != "cuda":
        raise LaunchError(f"rotary: argument 'x' is {x.dtype} on {x.device}: "
                          f"expected a bf16 or f16 CUDA tensor", "x")
    for name, c in (("cos", cos), ("sin", sin)):
        if c.dim() != 2 or c.shape[0] != t:
            raise LaunchError(
                f"rotary: argument '{name}' has shape {list(c.shape)}: "
                f"expected [T, R / 2] with x's T = {t}", name)
        if c.device != x.device:
            raise LaunchError(f"rotary: argument '{name}' is on {c.device}, "
                              f"x on {x.device}", name)
    if sin.shape != cos.shape:
        raise LaunchError(f"rotary: argument 'sin' has shape "
                          f"{list(sin.shape)} but cos has {list(cos.shape)}",
                          "sin")
    rotary_dim = 2 * cos.shape[1]
    if rotary_dim > d:
        raise LaunchError(
            f"rotary: cos and sin have R / 2 = {cos.shape[1]} columns, a "
            f"rotary dimension R = {rotary_dim}, but x's head dimension is "
            f"D = {d} (x is [B, T, H, D] = {list(x.shape)}): R must be at "
            f"most D. Was the model dimension H * D given where the head "
            f"dimension belongs?", "cos")
    if (d, rotary_dim) not in _prebuilt.ROTARY_DIMS:
        shipped = ", ".join(f"D = {a}, R = {b}"
                            for a, b in _prebuilt.ROTARY_DIMS)
        raise LaunchError(f"rotary: head dimension D = {d} with rotary "
                          f"dimension R = {rotary_dim} is not shipped "
                          f"({shipped})", "x")
    if inplace and not x.is_contiguous():
        raise LaunchError("rotary: inplace=True needs a contiguous x "
                          f"(strides {list(x.stride())})", "x")
    if inplace and torch.is_grad_enabled() and x.requires_grad:
        raise LaunchError("rotary: inplace=True is not differentiable; use "
                          "inplace=False where gradients flow", "x")


def rotary(x: Tensor, cos: Tensor, sin: Tensor, interleaved: bool = False,
           inplace: bool = False) -> Tensor:
    """Rotates pairs of x's features by angles given as cos and sin.

    x: [B, T, H, D] (bf16/f16); cos, sin: [T, R / 2] (cast to f32), R <= D
    (partial rotary: features d >= R pass through). Pairs (i, i + R / 2)
    (GPT-NeoX halves) or, with interleaved, (2i, 2i + 1) (GPT-J). inplace
    writes x and returns it (not differentiable). docs/ops.md has the
    shipped sizes.
    """
    _check(x, cos, sin, inplace)
    cos, sin = cos.float(), sin.float()
    if inplace:
        torch.ops.tegula.rotary_(x, cos, sin, bool(interleaved))
        return x
    run = _common.eager_call(_Eager, _rotary_impl, x, cos, sin) or \
        torch.ops.tegula.rotary
    return run(x, cos, sin, bool(interleaved))
