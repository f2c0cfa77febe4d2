"""Tegula's kernel library as differentiable PyTorch ops.

    import tegula.ops
    o = tegula.ops.attention(q, k, v, causal=True)    # [B, H, N, D]
    o.sum().backward()

Each op is a torch.library custom op with a fake implementation and an
autograd formula, so eager, torch.compile(fullgraph=True) and CUDA graphs
run it. The kernels ship prebuilt in the package (cubins for sm_80 and
sm_90a, PTX for other GPUs; scripts/build-ops.sh): no tilec is needed.
docs/ops.md documents every op, its shapes and its limits.
"""

try:
    import torch  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the machine
    raise ImportError("tegula.ops needs PyTorch (pip install torch); "
                      "tegula.load() and tegula.compile() do not") from error

from ._attention import attention
from ._decode import attention_decode
from ._gla import chunk_gla, fused_recurrent_gla
from ._linear_attention import (chunk_linear_attention,
                                fused_recurrent_linear_attention)
from ._loss import cross_entropy
from ._norm import rms_norm
from ._rotary import rotary
from ._varlen import attention_varlen

__all__ = ["attention", "attention_decode", "attention_varlen", "chunk_gla", "chunk_linear_attention", "cross_entropy",
           "fused_recurrent_gla", "fused_recurrent_linear_attention",
           "rms_norm", "rotary"]
