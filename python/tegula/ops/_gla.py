"""tegula.ops.chunk_gla and fused_recurrent_gla: gated linear attention
(flash-linear-attention's chunk_gla / fused_recurrent_gla) as
differentiable PyTorch ops.

Per (b, h), with S_0 the initial state (or 0) and g log-space gates per key
feature:  S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,  o_t = scale q_t S_t.

Two custom ops, each with a fake implementation:
tegula::gla_forward (kernels/gla.tile: chunk_gla_fwd, or recurrent_gla_fwd
for the recurrent form) returns o and the final state S_T;
tegula::gla_backward recomputes the per-chunk states (chunk_gla_states),
walks them back for dS (chunk_gla_bwd_dh), recomputes the gate sums
(chunk_gla_cumsum) and takes the forward's intra-chunk scores when its
chunked form kept them (with a backward to come it picks that form past
one chunk), else recomputes them (chunk_gla_intra), forms the scores'
gradient (chunk_gla_bwd_da) and from it the intra-chunk dq, dk
(chunk_gla_bwd_dqk_intra), then dq, dk, dg (chunk_gla_bwd_dqkg) and dv
(chunk_gla_bwd_dv), kernels/gla_bwd.tile (its header says why in this
form). Both forms share the backward: they compute the same function.

Eager calls skip the dispatcher (an autograd.Function of the same
implementation and formula, as tegula.ops.attention), check each signature
once, and repeat each kernel's first launch for the same views with new
pointers only (_common.Repeats): a decoding step is one launch's host
cost, not the custom op's dispatch.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

DTYPES = (torch.bfloat16, torch.float16)
GATE_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
# The chunk of the backward's recomputed states (gla_bwd.tile's CHUNK).
BWD_CHUNK = _prebuilt.GLA_BWD_CHUNK


def _kernel(kernel: str, q: Tensor, v: Tensor, flags: str = ""):
    name = _prebuilt.gla_bundle(kernel, q.shape[-1], v.shape[-1], flags,
                                q.dtype == torch.float16)
    return _common.kernel(name, kernel, q)


# The forward's form: None picks by shape (_chunked); True or False forces
# one (check-gla-ops.py times and checks both).
FORWARD_CHUNKED: Optional[bool] = None


def _chunked(q: Tensor) -> bool:
    """The chunked forward (states, gate sums, scores, outputs: a program
    per chunk of 64) past one chunk, else chunk_gla_fwd (a program per head
    and block of V walking all of T: one launch). On an H100 at [8, 2048,
    2048 / K, K] bf16 (docs/measurements/2026-11-27-h100-s40.log, call 5)
    the chunked form took 0.77 ms at K = 64 (forward and backward 2.932
    less the backward's 2.166; fla's forward 0.855) against chunk_gla_fwd's
    0.99, and 0.92 at K = 128 (chunk_gla_fwd 2.23, call 2); with fewer
    programs than multiprocessors chunk_gla_fwd also leaves the GPU idle.
    Whether a backward follows does not change the pick; the chunked
    form's scores spare the backward their recomputation."""
    if FORWARD_CHUNKED is not None:
        return FORWARD_CHUNKED
    return q.shape[1] > _prebuilt.GLA_FWD_CHUNK


def _no_scores(q: Tensor) -> Tensor:
    return q.new_empty((0,), dtype=torch.float32)


def _keeps_scores(q: Tensor, recurrent: bool, keep_scores: bool) -> bool:
    """Whether the forward returns the chunked form's scores a [B, T, H,
    64] f32 for the backward (fla keeps its A too), else an empty tensor."""
    return keep_scores and not recurrent and _chunked(q)


def _empty_state(q: Tensor, v: Tensor, n: int) -> Tensor:
    _, _, h, k = q.shape
    return q.new_empty((n, h, k, v.shape[-1]), dtype=torch.float32)


_no_states: Dict[tuple, Tensor] = {}


def _initial(q: Tensor, v: Tensor, h0: Optional[Tensor]
             ) -> Tuple[Tensor, str]:
    """The state tensor a kernel takes for an optional input state (h0 or
    dht): the tensor itself, or an empty [0, H, K, V] made once per device
    and shape (a new one cost 1-2 us a call); and the flag of its build
    ("-h0" for a state given). Never an op's output: it is shared."""
    if h0 is not None:
        return h0, "-h0"
    key = (q.get_device(), q.shape[2], q.shape[3], v.shape[-1])
    empty = _no_states.get(key)
    if empty is None:
        empty = _no_states[key] = _empty_state(q, v, 0)
    return empty, ""


# The kernels' repeated calls (_common.Repeats), by the op's views of its
# inputs and its scalars (optional_views_key): forward, then backward.
_recurrent_run = _common.Repeats()
_fwd_run = _common.Repeats()
_cumsum_run = _common.Repeats()
_states_run = _common.Repeats()
_intra_run = _common.Repeats()
_output_run = _common.Repeats()
_dh_run = _common.Repeats()
_da_run = _common.Repeats()
_dqk_intra_run = _common.Repeats()
_dqkg_run = _common.Repeats()
_dv_run = _common.Repeats()


def _forward_impl(q: Tensor, k: Tensor, v: Tensor, g: Tensor,
                  h0: Optional[Tensor], scale: float, recurrent: bool,
                  keep_scores: bool) -> Tuple[Tensor, Tensor, Tensor]:
    key = _common.optional_views_key((q, k, v, g, h0), scale, recurrent,
                                     keep_scores, _chunked(q))
    return _forward_keyed(key, q, k, v, g, h0, scale, recurrent,
                          keep_scores)


def _forward_keyed(key: Optional[tuple], q: Tensor, k: Tensor, v: Tensor,
                   g: Tensor, h0: Optional[Tensor], scale: float,
                   recurrent: bool, keep_scores: bool
                   ) -> Tuple[Tensor, Tensor, Tensor]:
    """_forward_impl with its Repeats key given: _run's own (its checks'
    key, on the caller's tensors) on the eager path without autograd."""
    state, flags = _initial(q, v, h0)
    o, ht = torch.empty_like(v), _empty_state(q, v, q.shape[0])
    if recurrent:
        _recurrent_run.launch(
            key, lambda: _kernel("recurrent_gla_fwd", q, v, flags),
            (q, k, v, g, state, o, ht), scale=scale)
        return o, ht, _no_scores(q)
    b, t, h, kd = q.shape
    if _chunked(q):
        nt = -(-t // _prebuilt.GLA_FWD_CHUNK)
        # In q's dtype: chunk_gla_output rounds the states to it before its
        # product, so storing them rounded is exact and halves their bytes.
        hs = q.new_empty((b, nt, h, kd, v.shape[-1]))
        gc = torch.empty_like(g, dtype=torch.float32)
        _cumsum_run.launch(key, lambda: _kernel("chunk_gla_cumsum", q, v),
                           (g, gc))
        # The states read the chunk sums (GC builds), not the gates.
        _states_run.launch(
            key, lambda: _kernel("chunk_gla_states", q, v, flags),
            (k, v, gc, state, hs, ht))
        a = q.new_empty((b, t, h, _prebuilt.GLA_FWD_CHUNK),
                        dtype=torch.float32)
        _intra_run.launch(key, lambda: _kernel("chunk_gla_intra", q, v),
                          (q, k, gc, a))
        _output_run.launch(key, lambda: _kernel("chunk_gla_output", q, v),
                           (q, v, gc, a, hs, o), scale=scale)
        return o, ht, (a if keep_scores else _no_scores(q))
    # Every tensor is passed: chunk_gla_fwd writes no hs without
    # STORE_STATES.
    no_states = q.new_empty((b, 0, h, kd, v.shape[-1]), dtype=torch.float32)
    _fwd_run.launch(key, lambda: _kernel("chunk_gla_fwd", q, v, flags),
                    (q, k, v, g, state, o, ht, no_states), scale=scale)
    return o, ht, _no_scores(q)


_forward = torch.library.custom_op("tegula::gla_forward", _forward_impl,
                                   mutates_args=())


@_forward.register_fake
def _forward_fake(q: Tensor, k: Tensor, v: Tensor, g: Tensor,
                  h0: Optional[Tensor], scale: float, recurrent: bool,
                  keep_scores: bool) -> Tuple[Tensor, Tensor, Tensor]:
    b, t, h, _ = q.shape
    a = (q.new_empty((b, t, h, _prebuilt.GLA_FWD_CHUNK), dtype=torch.float32)
         if _keeps_scores(q, recurrent, keep_scores) else _no_scores(q))
    return torch.empty_like(v), _empty_state(q, v, q.shape[0]), a


def _backward_impl(do: Tensor, dht: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, g: Tensor, h0: Optional[Tensor], a: Tensor,
                   scale: float
                   ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    do = do.contiguous()
    dht = dht.contiguous() if dht is not None else None
    key = _common.optional_views_key((do, dht, q, k, v, g, h0, a), scale)
    b, t, h, kd = q.shape
    nt = -(-t // BWD_CHUNK)
    # The states and their gradients in q's dtype, as fla's (every dot
    # rounds them to it; gla_bwd.tile's header bounds what dg loses).
    hs = q.new_empty((b, nt, h, kd, v.shape[-1]))
    state, h0_flag = _initial(q, v, h0)
    # The states and dh read the chunk sums (GC builds), not the gates.
    gc = torch.empty_like(g, dtype=torch.float32)
    _cumsum_run.launch(key, lambda: _kernel("chunk_gla_cumsum", q, v),
                       (g, gc))
    _states_run.launch(
        key, lambda: _kernel("chunk_gla_states", q, v, h0_flag),
        (k, v, gc, state, hs, _empty_state(q, v, b)))
    end_state, _ = _initial(q, v, dht)
    dh_flags = h0_flag + ("-dht" if dht is not None else "")
    dhs = torch.empty_like(hs)
    dh0 = _empty_state(q, v, b if h0_flag else 0)
    _dh_run.launch(key, lambda: _kernel("chunk_gla_bwd_dh", q, v, dh_flags),
                   (q, gc, do, end_state, dhs, dh0), scale=scale)
    # The forward's scores when it kept them (_keeps_scores), else again.
    if a.numel() == 0:
        a = q.new_empty((b, t, h, BWD_CHUNK), dtype=torch.float32)
        _intra_run.launch(key, lambda: _kernel("chunk_gla_intra", q, v),
                          (q, k, gc, a))
    da = torch.empty_like(a)
    _da_run.launch(key, lambda: _kernel("chunk_gla_bwd_da", q, v),
                   (v, do, da), scale=scale)
    dqi, dki = torch.empty_like(gc), torch.empty_like(gc)
    _dqk_intra_run.launch(
        key, lambda: _kernel("chunk_gla_bwd_dqk_intra", q, v),
        (q, k, gc, da, dqi, dki))
    dq, dk, dv, dg = (torch.empty_like(t) for t in (q, k, v, g))
    _dqkg_run.launch(
        key, lambda: _kernel("chunk_gla_bwd_dqkg", q, v),
        (q, k, v, gc, do, hs, dhs, dqi, dki, dq, dk, dg), scale=scale)
    _dv_run.launch(key, lambda: _kernel("chunk_gla_bwd_dv", q, v),
                   (k, gc, a, do, dhs, dv), scale=scale)
    return dq, dk, dv, dg, dh0


_backward = torch.library.custom_op("tegula::gla_backward", _backward_impl,
                                    mutates_args=())


@_backward.register_fake
def _backward_fake(do: Tensor, dht: Optional[Tensor], q: Tensor, k: Tensor,
                   v: Tensor, g: Tensor, h0: Optional[Tensor], a: Tensor,
                   scale: float
                   ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    dh0 = _empty_state(q, v, q.shape[0] if h0 is not None else 0)
    return (torch.empty_like(q), torch.empty_like(k), torch.empty_like(v),
            torch.empty_like(g), dh0)


def _setup_context(ctx, inputs, output) -> None:
    q, k, v, g, h0, scale, _, _ = inputs
    ctx.save_for_backward(q, k, v, g, h0, output[2])
    ctx.scale = scale
    ctx.set_materialize_grads(False)


def _autograd_backward(ctx, do: Optional[Tensor], dht: Optional[Tensor],
                       da: Optional[Tensor]):
    # The scores are no input's function the caller sees: da is ignored.
    q, k, v, g, h0, a = ctx.saved_tensors
    if do is None:
        do = torch.zeros_like(v)
    run = _backward_impl if _common.eager(do, dht, q) else _backward
    dq, dk, dv, dg, dh0 = run(do, dht, q, k, v, g, h0, a, ctx.scale)
    return (dq, dk, dv, dg, (dh0 if h0 is not None else None), None, None,
            None)


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)
# The eager path (no dispatcher): the same implementation and formula.
_Eager = _common.autograd_function(_forward_impl, _setup_context,
                                   _autograd_backward)
_checked = _common.CheckedSignatures()


def _check(op: str, q: Tensor, k: Tensor, v: Tensor, g: Optional[Tensor],
           initial_state: Optional[Tensor]) -> None:
    """What the kernels cannot take, as LaunchError naming the argument
    (g None: linear attention, no gates)."""
    gates = (("g", g),) if g is not None else ()
    for name, t in (("q", q), ("k", k), ("v", v)) + gates:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, "
                            f"got {type(t).__name__}")
        if t.dim() != 4:
            raise LaunchError(f"{op}: argument '{name}' has shape "
                              f"{list(t.shape)}: expected [B, T, H, "
                              f"{'V' if name == 'v' else 'K'}]", name)
        if t.device.type != "cuda" or t.device != q.device:
            raise LaunchError(f"{op}: argument '{name}' is on {t.device}: "
                              f"expected a CUDA tensor on q's device", name)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dtype not in DTYPES or t.dtype != q.dtype:
            raise LaunchError(f"{op}: argument '{name}' is {t.dtype}: "
                              f"expected torch.bfloat16 or torch.float16, "
                              f"as q", name)
    if g is not None and g.dtype not in GATE_DTYPES:
        raise LaunchError(f"{op}: argument 'g' is {g.dtype}: expected a "
                          f"float32, bfloat16 or float16 tensor", "g")
    for name, t in (("k", k),) + gates:
        if t.shape != q.shape:
            raise LaunchError(f"{op}: argument '{name}' has shape "
                              f"{list(t.shape)} but q has {list(q.shape)}: "
                              f"{'q, k and g' if g is not None else 'q and k'}"
                              f" must be [B, T, H, K] alike", name)
    if v.shape[:3] != q.shape[:3]:
        raise LaunchError(f"{op}: argument 'v' has shape {list(v.shape)} but "
                          f"q has {list(q.shape)}: v must be [B, T, H, V] "
                          f"with q's B, T and H", "v")
    b, _, h, kd = q.shape
    vd = v.shape[-1]
    if (kd, vd) not in _prebuilt.GLA_DIMS:
        shipped = ", ".join(f"K={a} V={c}" for a, c in _prebuilt.GLA_DIMS)
        raise LaunchError(f"{op}: key and value head dimensions K = {kd} "
                          f"(q's last extent) and V = {vd} (v's): "
                          f"tegula.ops ships {shipped}", "q")
    if initial_state is not None:
        want = [b, h, kd, vd]
        if (not isinstance(initial_state, Tensor)
                or list(initial_state.shape) != want
                or initial_state.device != q.device):
            shape = (list(initial_state.shape)
                     if isinstance(initial_state, Tensor) else
                     type(initial_state).__name__)
            raise LaunchError(f"{op}: argument 'initial_state' is {shape}: "
                              f"expected [B, H, K, V] = {want} on "
                              f"{q.device}", "initial_state")


def _prepare(op: str, checked: _common.CheckedSignatures, q: Tensor,
             k: Tensor, v: Tensor, g: Optional[Tensor],
             scale: Optional[float], initial_state: Optional[Tensor]):
    """What a GLA or linear-attention call does before its forward: the
    checks, once per signature of the caller's views (`checked`; a key of
    None, an argument that is no plain tensor, always checks), the default
    scale, and the kernels' views: q, k, v contiguous, the gates (None:
    linear attention) and the initial state f32 and contiguous (the casts
    are differentiable). Returns (key, scale, q, k, v, g32, h0)."""
    key = _common.optional_views_key((q, k, v, g, initial_state))
    if key not in checked:
        _check(op, q, k, v, g, initial_state)
        checked.add(key)
    scale = q.shape[-1] ** -0.5 if scale is None else float(scale)
    g32 = g.float().contiguous() if g is not None else None
    h0 = (initial_state.float().contiguous()
          if initial_state is not None else None)
    return key, scale, q.contiguous(), k.contiguous(), v.contiguous(), g32, h0


def _run(op: str, q: Tensor, k: Tensor, v: Tensor, g: Tensor,
         scale: Optional[float], initial_state: Optional[Tensor],
         output_final_state: bool, recurrent: bool
         ) -> Tuple[Tensor, Optional[Tensor]]:
    key, scale, q, k, v, g32, h0 = _prepare(op, _checked, q, k, v, g, scale,
                                            initial_state)
    run = _common.eager_call(_Eager, _forward_impl, q, k, v, g32, h0) or \
        torch.ops.tegula.gla_forward
    # With a backward to come, the forward keeps its chunked scores.
    keep = torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (q, k, v, g32, h0))
    if run is _forward_impl and key is not None:
        # The caller's views and these scalars fix the views above; the
        # last element keeps these keys apart from _forward_impl's.
        o, ht, _ = _forward_keyed(
            key + (scale, recurrent, _chunked(q), "caller"),
            q, k, v, g32, h0, scale, recurrent, False)
    else:
        o, ht, _ = run(q, k, v, g32, h0, scale, recurrent, keep)
    return o, (ht if output_final_state else None)


def chunk_gla(q: Tensor, k: Tensor, v: Tensor, g: Tensor,
              scale: Optional[float] = None,
              initial_state: Optional[Tensor] = None,
              output_final_state: bool = False
              ) -> Tuple[Tensor, Optional[Tensor]]:
    """Gated linear attention in chunks, as fla.ops.gla.chunk_gla
    (head_first=False): q, k, g [B, T, H, K], v [B, T, H, V], g the
    log-space forget gates (fla's are <= 0, e.g. logsigmoid outputs; any
    real works, see docs/ops.md for the bound). Returns (o [B, T, H, V] in
    q's dtype, the final state [B, H, K, V] f32 or None), differentiable in
    q, k, v, g and initial_state [B, H, K, V].

    scale: None means K ** -0.5; any float, negative included. bf16 or f16
    q, k, v; g f32, bf16 or f16. (K, V) one of _prebuilt.GLA_DIMS."""
    return _run("chunk_gla", q, k, v, g, scale, initial_state,
                output_final_state, recurrent=False)


def fused_recurrent_gla(q: Tensor, k: Tensor, v: Tensor, g: Tensor,
                        scale: Optional[float] = None,
                        initial_state: Optional[Tensor] = None,
                        output_final_state: bool = False
                        ) -> Tuple[Tensor, Optional[Tensor]]:
    """chunk_gla's function one position at a time (fla's
    fused_recurrent_gla with gk = g): for decoding, T = 1 with the state
    carried in initial_state and returned with output_final_state=True.
    Same arguments, results and gradients as chunk_gla."""
    return _run("fused_recurrent_gla", q, k, v, g, scale, initial_state,
                output_final_state, recurrent=True)
