#!/usr/bin/env python3
"""Train a GLA language model (gated linear attention, Yang et al. 2024, as
flash-linear-attention builds it) with its GLA kernel through tegula.ops,
beside the same model on fla's chunk_gla.

    python3 bench/train_gla.py --impl tegula --out /tmp/tegula.json
    PYTHONPATH=/tmp/site python3 bench/train_gla.py --impl fla --out /tmp/fla.json
    python3 bench/train_gla.py --compare /tmp/fla.json /tmp/tegula.json \
        --plot /tmp/gla-loss.png

The model is plain PyTorch (no transformers, no fla.layers: the fla wheel
the bench carries has fla.ops and fla.modules only), randomly initialized
from the seed, and the runs differ in one call: the chunked GLA kernel of
every layer (--impl tegula: tegula.ops.chunk_gla; fla:
fla.ops.gla.chunk_gla; naive: the pure-PyTorch chunked form below, for
small runs on the CPU). Everything else (projections, norms, MLP, loss,
AdamW) is the same PyTorch code. The data and the comparison are
bench/train_llama.py's (train_common.py): Zipf-Markov tokens with a
50-step learning-rate warm-up by default, the largest loss gap over the
second half of the run against the stated tolerance, tokens per second
after the first steps.

Per layer, as fla's GLABlock with GatedLinearAttention's defaults
(expand_k 0.5, expand_v 1, low-rank gate of rank 16, gate_logit_normalizer
16, swish output gate with a fused per-head RMSNorm, no short convolution)
and GatedMLP (intermediate = 8/3 hidden rounded up to 256):

    h = x + o_proj(rmsnorm_head(gla(q, k, v, gk)) * silu(g_proj(xn)))
    y = h + down_proj(silu(gate_proj(hn)) * up_proj(hn))

with xn = rmsnorm(x), hn = rmsnorm(h), q/k/v projections of xn laid out
[B, T, H, K] / [B, T, H, V] (fla's head_first=False), and
gk = logsigmoid(gk_proj(xn)) / 16 in float32. Initialization as fla's
GLAPreTrainedModel: every Linear and the embedding N(0, 0.02), biases 0,
norm weights 1.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import (add_run_arguments, compare as compare_runs,  # noqa: E402
                          markov_batches, report_run)

IMPLS = ("tegula", "fla", "fla-recurrent", "naive")


# The GLA function in pure PyTorch: S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,
# o_t = scale q_t S_t, per batch row and head; q, k, g [B, T, H, K],
# v [B, T, H, V]. Both forms compute in float32 (float64 for float64
# inputs), return o in q's dtype and the final state [B, H, K, V] in the
# compute dtype (or None), as fla's chunk_gla does.

def _compute_dtype(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def naive_recurrent_gla(q, k, v, g, scale=None, initial_state=None,
                        output_final_state=False):
    """The recurrence itself, one position at a time."""
    dtype = q.dtype
    b, t, h, kd = q.shape
    acc = _compute_dtype(q)
    if scale is None:
        scale = kd ** -0.5
    q, k, v, g = (x.to(acc).transpose(1, 2) for x in (q, k, v, g))
    state = (initial_state.to(acc) if initial_state is not None else
             q.new_zeros(b, h, kd, v.shape[-1]))
    out = []
    for i in range(t):
        state = (state * g[:, :, i].exp()[..., None]
                 + k[:, :, i, :, None] * v[:, :, i, None, :])
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, :, i] * scale, state))
    o = torch.stack(out, 2).transpose(1, 2)
    return o.to(dtype), (state if output_final_state else None)


def naive_chunk_gla(q, k, v, g, scale=None, initial_state=None,
                    output_final_state=False, chunk=16):
    """The chunked form: within a chunk, o_i = scale * sum_{j <= i}
    (q_i * exp(G_i - G_j)) . k_j v_j with G the cumulative sum of g from
    the chunk's start; across chunks, the state carried over. T need not
    be a multiple of `chunk` (the tail is padded with g = 0, k = v = 0,
    which leaves the state unchanged)."""
    dtype = q.dtype
    b, t, h, kd = q.shape
    vd = v.shape[-1]
    acc = _compute_dtype(q)
    if scale is None:
        scale = kd ** -0.5
    pad = (-t) % chunk
    n = (t + pad) // chunk

    def blocks(x):
        x = F.pad(x.to(acc).transpose(1, 2), (0, 0, 0, pad))
        return x.reshape(b, h, n, chunk, x.shape[-1])

    q, k, v, g = (blocks(x) for x in (q, k, v, g))
    gc = g.cumsum(-2)                                   # [B, H, N, C, K]
    # exp(G_i - G_j) for j <= i; the entries above the diagonal (where
    # G_i - G_j may be large and positive) are masked before the exp.
    causal = torch.ones(chunk, chunk, dtype=torch.bool,
                        device=q.device).tril()
    diff = gc[..., :, None, :] - gc[..., None, :, :]    # [B, H, N, C, C, K]
    decay = torch.where(causal[..., None], diff,
                        torch.full((), -math.inf, dtype=acc,
                                   device=q.device)).exp()
    scores = (q[..., :, None, :] * k[..., None, :, :] * decay).sum(-1)
    o_intra = (scores * scale) @ v                      # [B, H, N, C, V]
    state = (initial_state.to(acc) if initial_state is not None else
             q.new_zeros(b, h, kd, vd))
    out = []
    for i in range(n):
        g_i = gc[:, :, i]                               # [B, H, C, K]
        g_last = g_i[:, :, -1]                          # [B, H, K]
        out.append(o_intra[:, :, i]
                   + (q[:, :, i] * g_i.exp() * scale) @ state)
        k_decayed = k[:, :, i] * (g_last[:, :, None] - g_i).exp()
        state = (state * g_last.exp()[..., None]
                 + k_decayed.transpose(-1, -2) @ v[:, :, i])
    o = torch.stack(out, 2).reshape(b, h, n * chunk, vd)[:, :, :t]
    return o.transpose(1, 2).to(dtype), (
        state if output_final_state else None)


def gla_kernel(impl):
    """The chunked GLA call of `impl`: (q, k, v, gk) -> o [B, T, H, V],
    scale K ** -0.5, no initial state, no final state."""
    if impl == "tegula":
        import tegula.ops

        def call(q, k, v, gk):
            return tegula.ops.chunk_gla(q, k, v, gk)[0]
    elif impl == "fla":
        from fla.ops.gla import chunk_gla

        def call(q, k, v, gk):
            return chunk_gla(q, k, v, g=gk)[0]
    elif impl == "fla-recurrent":
        # fla's other form of the same function (one step per position,
        # f32 state): its gap to fla's chunked form is the noise floor of
        # the comparison, two valid roundings of one model.
        from fla.ops.gla import fused_recurrent_gla

        def call(q, k, v, gk):
            return fused_recurrent_gla(q, k, v, gk=gk)[0]
    elif impl == "naive":
        def call(q, k, v, gk):
            return naive_chunk_gla(q, k, v, gk)[0]
    else:
        raise ValueError(f"unknown impl {impl!r}")
    return call


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dimension, in
    float32 (as transformers' LlamaRMSNorm)."""

    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


class GatedRMSNorm(RMSNorm):
    """fla's FusedRMSNormGated with the swish gate: rmsnorm(o) * weight *
    silu(g) over the last dimension (one head's values), in float32."""

    def forward(self, o, g):
        x = o.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        x = x * self.weight.float() * F.silu(g.float())
        return x.to(o.dtype)


class GatedLinearAttention(nn.Module):
    def __init__(self, hidden, heads, kernel, expand_k=0.5, expand_v=1.0,
                 gate_low_rank=16, gate_logit_normalizer=16, eps=1e-6):
        super().__init__()
        self.heads = heads
        self.key_dim = int(hidden * expand_k)
        self.value_dim = int(hidden * expand_v)
        assert self.key_dim % heads == 0 and self.value_dim % heads == 0
        self.head_k = self.key_dim // heads
        self.head_v = self.value_dim // heads
        self.kernel = kernel
        self.gate_logit_normalizer = gate_logit_normalizer
        self.q_proj = nn.Linear(hidden, self.key_dim, bias=False)
        self.k_proj = nn.Linear(hidden, self.key_dim, bias=False)
        self.v_proj = nn.Linear(hidden, self.value_dim, bias=False)
        self.g_proj = nn.Linear(hidden, self.value_dim, bias=False)
        self.gk_proj = nn.Sequential(
            nn.Linear(hidden, gate_low_rank, bias=False),
            nn.Linear(gate_low_rank, self.key_dim, bias=True))
        self.o_proj = nn.Linear(self.value_dim, hidden, bias=False)
        self.g_norm = GatedRMSNorm(self.head_v, eps)

    def forward(self, x):
        b, t, _ = x.shape
        hk, hv = (self.heads, self.head_k), (self.heads, self.head_v)
        q = self.q_proj(x).view(b, t, *hk)
        k = self.k_proj(x).view(b, t, *hk)
        v = self.v_proj(x).view(b, t, *hv)
        # The gates in float32 for every implementation (the same inputs).
        gk = (F.logsigmoid(self.gk_proj(x).float())
              / self.gate_logit_normalizer).view(b, t, *hk)
        o = self.kernel(q, k, v, gk)
        g = self.g_proj(x).view(b, t, *hv)
        o = self.g_norm(o, g).reshape(b, t, self.value_dim)
        return self.o_proj(o)


class GatedMLP(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class GLABlock(nn.Module):
    def __init__(self, args, kernel):
        super().__init__()
        self.attn_norm = RMSNorm(args.hidden, args.norm_eps)
        self.attn = GatedLinearAttention(
            args.hidden, args.heads, kernel, args.expand_k, args.expand_v,
            eps=args.norm_eps)
        self.mlp_norm = RMSNorm(args.hidden, args.norm_eps)
        self.mlp = GatedMLP(args.hidden, args.intermediate)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class GLAForCausalLM(nn.Module):
    def __init__(self, args, kernel):
        super().__init__()
        self.embeddings = nn.Embedding(args.vocab, args.hidden)
        self.layers = nn.ModuleList(GLABlock(args, kernel)
                                    for _ in range(args.layers))
        self.norm = RMSNorm(args.hidden, args.norm_eps)
        self.lm_head = nn.Linear(args.hidden, args.vocab, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0,
                                std=args.initializer_range)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, input_ids):
        x = self.embeddings(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def default_intermediate(hidden):
    """fla's GatedMLP with hidden_ratio 4: 2/3 of 4 x hidden, rounded up to
    a multiple of 256 (5632 at hidden 2048, Llama's)."""
    size = int(hidden * 4 * 2 / 3)
    return 256 * ((size + 255) // 256)


def build_model(args, device):
    """The weights depend on the seed alone: built on the CPU in float32,
    then moved and cast."""
    torch.manual_seed(args.seed)
    model = GLAForCausalLM(args, gla_kernel(args.impl))
    return model.to(device=device, dtype=torch.bfloat16)


def train(args):
    device = torch.device(args.device)
    sync = (torch.cuda.synchronize if device.type == "cuda" else
            (lambda: None))
    model = build_model(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                  betas=(0.9, 0.95), weight_decay=0.1,
                                  foreach=True)
    # Linear warm-up of the learning rate over the first steps.
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / max(1, args.lr_warmup)))
    losses, times = [], []
    zipf = args.data == "zipf"
    batches = markov_batches(args.vocab, args.batch, args.seq, args.steps,
                             args.seed + 1, device,
                             successors=64 if zipf else 4, zipf=zipf)
    for step, tokens in enumerate(batches):
        sync()
        start = time.perf_counter()
        inputs, labels = tokens[:, :-1], tokens[:, 1:]
        logits = model(inputs)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]),
                               labels.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        sync()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        if step % 20 == 0 or step == args.steps - 1:
            print(f"{args.impl} step {step} loss {losses[-1]:.4f} "
                  f"{times[-1] * 1e3:.1f} ms", flush=True)
    # Tokens per second after the first `warmup` steps (kernel compilation,
    # autotuning, allocator growth); all steps when the run is shorter.
    warm = times[args.warmup:] or times
    tokens_per_s = args.batch * args.seq * len(warm) / sum(warm)
    head_k = int(args.hidden * args.expand_k) // args.heads
    head_v = int(args.hidden * args.expand_v) // args.heads
    return {"impl": args.impl, "model": "gla", "losses": losses,
            "step_s": times, "tokens_per_s": tokens_per_s,
            "device": (torch.cuda.get_device_name(device)
                       if device.type == "cuda" else device.type),
            "torch": torch.__version__, "config": dict(
                {k: getattr(args, k) for k in (
                    "layers", "hidden", "intermediate", "heads", "expand_k",
                    "expand_v", "seq", "batch", "vocab", "steps", "warmup",
                    "lr", "seed", "lr_warmup", "data")},
                head_k=head_k, head_v=head_v)}


def gla_title(c):
    """The plot's title for a GLA run's config."""
    return (f"GLA {c['layers']}L h{c['hidden']} {c['heads']} heads "
            f"(K {c['head_k']}, V {c['head_v']}), seq {c['seq']}, bf16, "
            f"AdamW (seed {c['seed']})")


def compare(paths, tol, plot):
    """train_common.compare (train_llama.py's comparison) with the GLA
    plot title."""
    return compare_runs(paths, tol, plot, gla_title)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--impl", choices=IMPLS, default="tegula",
                   help="the chunked GLA kernel: tegula.ops.chunk_gla, "
                   "fla.ops.gla.chunk_gla, or the pure-PyTorch chunked form "
                   "(small runs)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--intermediate", type=int,
                   help="MLP width (default: 8/3 hidden rounded up to 256, "
                   "5632 at hidden 2048)")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--expand-k", type=float, default=0.5,
                   help="key dimension / hidden (head K = hidden * expand_k "
                   "/ heads: 64 by default)")
    p.add_argument("--expand-v", type=float, default=1.0,
                   help="value dimension / hidden (head V: 128 by default)")
    p.add_argument("--norm-eps", type=float, default=1e-6)
    p.add_argument("--initializer-range", type=float, default=0.02)
    add_run_arguments(p, lr_warmup=50, data="zipf")
    args = p.parse_args(argv)
    if args.compare:
        return 0 if compare(args.compare, args.tol, args.plot) else 1
    if args.intermediate is None:
        args.intermediate = default_intermediate(args.hidden)
    result = train(args)
    report_run(args, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
