"""tegula.ops.chunk_linear_attention and fused_recurrent_linear_attention:
causal linear attention, o_t = scale * sum_{s <= t} (q_t . k_s) v_s, with an
optional initial state (fla's chunk_linear_attn with normalize=False).

It is gated linear attention with every gate 0 (exp(0) = 1: nothing decays),
so both forms run tegula.ops' GLA ops on zero gates: the same kernels,
forward and backward. The backward also forms the gates' gradient, which
nothing reads; a build without gates would skip that work and the gate
reads (docs/ops.md, "Limits").
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _gla


def _zero_gates(q: Tensor) -> Tensor:
    return torch.zeros(q.shape, dtype=torch.float32, device=q.device)


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
    if not isinstance(q, Tensor):
        raise TypeError(f"chunk_linear_attention: q must be a torch.Tensor, "
                        f"got {type(q).__name__}")
    return _gla._run("chunk_linear_attention", q, k, v, _zero_gates(q),
                     scale, initial_state, output_final_state,
                     recurrent=False)


def fused_recurrent_linear_attention(q: Tensor, k: Tensor, v: Tensor,
                                     scale: Optional[float] = None,
                                     initial_state: Optional[Tensor] = None,
                                     output_final_state: bool = False
                                     ) -> Tuple[Tensor, Optional[Tensor]]:
    """chunk_linear_attention's function one position at a time, for
    decoding (T = 1 with the state carried through initial_state and
    output_final_state=True). Same arguments, results and gradients."""
    if not isinstance(q, Tensor):
        raise TypeError(f"fused_recurrent_linear_attention: q must be a "
                        f"torch.Tensor, got {type(q).__name__}")
    return _gla._run("fused_recurrent_linear_attention", q, k, v,
                     _zero_gates(q), scale, initial_state,
                     output_final_state, recurrent=True)
