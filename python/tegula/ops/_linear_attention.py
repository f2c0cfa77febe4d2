"""tegula.ops.chunk_linear_attention and fused_recurrent_linear_attention:
causal linear attention, o_t = scale * sum_{s <= t} (q_t . k_s) v_s, with an
optional initial state (fla's chunk_linear_attn with normalize=False).

The chunked form runs kernels/linear_attention_chunked.tile, gated linear
attention's chunked algorithm without gates, as two custom ops with fake
implementations: tegula::linear_attention_forward (chunk_linear_states,
then chunk_linear_output: o and the final state) and
tegula::linear_attention_backward (the states again, chunk_linear_bwd_dh,
then chunk_linear_bwd_dqk and chunk_linear_bwd_dv). Eager calls skip the
dispatcher (an autograd.Function of the same implementation and formula,
as tegula.ops.attention) and repeat each kernel's first launch for the same
views with new pointers only (_common.Repeats). The recurrent form, for
decoding, is the same forward op with recurrent=True (recurrent_linear_fwd,
one position at a time) and the same backward.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from .. import _prebuilt
from . import _common, _gla

# The chunk of every launch (the kernels' CHUNK).
CHUNK = _prebuilt.GLA_FWD_CHUNK


def _kernel(kernel: str, q: Tensor, v: Tensor, flags: str = ""):
    name = _prebuilt.linear_bundle(kernel, q.shape[-1], v.shape[-1], flags,
                                   q.dtype == torch.float16)
    return _common.kernel(name, kernel, q)


# The kernels' repeated calls (_common.Repeats), by the inputs' views and
# the scale (the outputs follow from them).
_states_run = _common.Repeats()
_output_run = _common.Repeats()
_dh_run = _common.Repeats()
_dqk_run = _common.Repeats()
_dv_run = _common.Repeats()
_recurrent_run = _common.Repeats()


def _states(key: Optional[tuple], k: Tensor, v: Tensor,
            h0: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """hs [B, NT, H, K, V] in k's dtype (every product rounds the states
    to it, as fla's) and the final state [B, H, K, V] f32."""
    b, t, h, kd = k.shape
    hs = k.new_empty((b, -(-t // CHUNK), h, kd, v.shape[-1]))
    ht = _gla._empty_state(k, v, b)
    state, flags = _gla._initial(k, v, h0)
    _states_run.launch(key, lambda: _kernel("chunk_linear_states", k, v,
                                            flags), (k, v, state, hs, ht))
    return hs, ht


def _forward_impl(q: Tensor, k: Tensor, v: Tensor, h0: Optional[Tensor],
                  scale: float, recurrent: bool) -> Tuple[Tensor, Tensor]:
    return _forward_keyed(
        _common.optional_views_key((q, k, v, h0), scale, recurrent),
        q, k, v, h0, scale, recurrent)


def _forward_keyed(key: Optional[tuple], q: Tensor, k: Tensor, v: Tensor,
                   h0: Optional[Tensor], scale: float, recurrent: bool
                   ) -> Tuple[Tensor, Tensor]:
    """_forward_impl with its Repeats key given: _run's own (its checks'
    key, on the caller's tensors) on the eager path without autograd."""
    if recurrent:
        o, ht = torch.empty_like(v), _gla._empty_state(k, v, k.shape[0])
        state, flags = _gla._initial(k, v, h0)
        _recurrent_run.launch(
            key, lambda: _kernel("recurrent_linear_fwd", q, v, flags),
            (q, k, v, state, o, ht), scale=scale)
        return o, ht
    hs, ht = _states(key, k, v, h0)
    o = torch.empty_like(v)
    _output_run.launch(key, lambda: _kernel("chunk_linear_output", q, v),
                       (q, k, v, hs, o), scale=scale)
    return o, ht


_forward = torch.library.custom_op("tegula::linear_attention_forward",
                                   _forward_impl, mutates_args=())


@_forward.register_fake
def _forward_fake(q: Tensor, k: Tensor, v: Tensor, h0: Optional[Tensor],
                  scale: float, recurrent: bool) -> Tuple[Tensor, Tensor]:
    return torch.empty_like(v), _gla._empty_state(q, v, q.shape[0])


def _backward_impl(do: Tensor, dht: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, h0: Optional[Tensor], scale: float
                   ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    do = do.contiguous()
    dht = dht.contiguous() if dht is not None else None
    key = _common.optional_views_key((do, dht, q, k, v, h0), scale)
    hs, _ = _states(key, k, v, h0)
    flags = ("-h0" if h0 is not None else "") + \
        ("-dht" if dht is not None else "")
    dhs = torch.empty_like(hs)
    dh0 = _gla._empty_state(q, v, q.shape[0] if h0 is not None else 0)
    end_state, _ = _gla._initial(q, v, dht)
    _dh_run.launch(
        key, lambda: _kernel("chunk_linear_bwd_dh", q, v, flags),
        (q, do, end_state, dhs, dh0), scale=scale)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    _dqk_run.launch(key, lambda: _kernel("chunk_linear_bwd_dqk", q, v),
                    (q, k, v, do, hs, dhs, dq, dk), scale=scale)
    _dv_run.launch(key, lambda: _kernel("chunk_linear_bwd_dv", q, v),
                   (q, k, do, dhs, dv), scale=scale)
    return dq, dk, dv, dh0


_backward = torch.library.custom_op("tegula::linear_attention_backward",
                                    _backward_impl, mutates_args=())


@_backward.register_fake
def _backward_fake(do: Tensor, dht: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, h0: Optional[Tensor], scale: float
                   ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    dh0 = _gla._empty_state(q, v, q.shape[0] if h0 is not None else 0)
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), dh0


def _setup_context(ctx, inputs, output) -> None:
    # Both forms compute one function: the chunked backward serves both.
    q, k, v, h0, scale, _ = inputs
    ctx.save_for_backward(q, k, v, h0)
    ctx.scale = scale
    ctx.set_materialize_grads(False)


def _autograd_backward(ctx, do: Optional[Tensor], dht: Optional[Tensor]):
    q, k, v, h0 = ctx.saved_tensors
    if do is None:
        do = torch.zeros_like(v)
    run = _backward_impl if _common.eager(do, dht, q) else _backward
    dq, dk, dv, dh0 = run(do, dht, q, k, v, h0, ctx.scale)
    return dq, dk, dv, (dh0 if h0 is not None else None), None, None


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)
# The eager path (no dispatcher): the same implementation and formula.
_Eager = _common.autograd_function(_forward_impl, _setup_context,
                                   _autograd_backward)
_checked = _common.CheckedSignatures()


def _run(op: str, q: Tensor, k: Tensor, v: Tensor, scale: Optional[float],
         initial_state: Optional[Tensor], output_final_state: bool,
         recurrent: bool) -> Tuple[Tensor, Optional[Tensor]]:
    key, scale, q, k, v, _, h0 = _gla._prepare(op, _checked, q, k, v, None,
                                               scale, initial_state)
    run = _common.eager_call(_Eager, _forward_impl, q, k, v, h0) or \
        torch.ops.tegula.linear_attention_forward
    if run is _forward_impl and key is not None:
        # The caller's views and these scalars fix the views above; the
        # last element keeps these keys apart from _forward_impl's.
        o, ht = _forward_keyed(key + (scale, recurrent, "caller"),
                               q, k, v, h0, scale, recurrent)
    else:
        o, ht = run(q, k, v, h0, scale, recurrent)
    return o, (ht if output_final_state else None)


def chunk_linear_attention(q: Tensor, k: Tensor, v: Tensor,
                           scale: Optional[float] = None,
                           initial_state: Optional[Tensor] = None,
                           output_final_state: bool = False
                           ) -> Tuple[Tensor, Optional[Tensor]]:
    """Causal linear attention in chunks over q, k [B, T, H, K] and
    v [B, T, H, V] (fla's layout): with S_t = S_{t-1} + k_t^T v_t (S_0 the
    initial state [B, H, K, V], or 0), o_t = scale * q_t S_t. Returns (o in
    q's dtype, S_T f32 or None), differentiable in q, k, v and
    initial_state. scale: None means K ** -0.5; any float, negative
    included. bf16 or f16; (K, V) as chunk_gla ships them."""
    return _run("chunk_linear_attention", q, k, v, scale, initial_state,
                output_final_state, recurrent=False)


def fused_recurrent_linear_attention(q: Tensor, k: Tensor, v: Tensor,
                                     scale: Optional[float] = None,
                                     initial_state: Optional[Tensor] = None,
                                     output_final_state: bool = False
                                     ) -> Tuple[Tensor, Optional[Tensor]]:
    """chunk_linear_attention's function one position at a time, for
    decoding (T = 1 with the state carried through initial_state and
    output_final_state=True). Same arguments, results and gradients."""
    return _run("fused_recurrent_linear_attention", q, k, v, scale,
                initial_state, output_final_state, recurrent=True)
