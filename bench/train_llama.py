#!/usr/bin/env python3
"""Train a small Llama (transformers, random initialization) with its
attention, RMSNorm, rotary embedding and loss through tegula.ops, beside
the same model on SDPA (and PyTorch's RMSNorm, rotary and loss).

    python3 bench/train_llama.py --impl tegula --out /tmp/tegula.json
    python3 bench/train_llama.py --impl sdpa-cudnn --out /tmp/cudnn.json
    python3 bench/train_llama.py --compare /tmp/tegula.json /tmp/cudnn.json \
        --plot /tmp/loss.png
    torchrun --nproc-per-node 2 bench/train_llama.py --ddp --out /tmp/ddp.json
    python3 bench/train_llama.py --graph-check --layers 2

Every run starts from the same seed: the same weights and the same batches.
The data is synthetic but learnable (no download): token sequences of a
fixed random Markov chain with few likely successors per token, so the loss
falls from ln(vocab) towards the chain's entropy and two attention
implementations can be compared on a real training curve. Writes the loss
of every step and the tokens per second (after warm-up) as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_common import (add_run_arguments, compare as compare_runs,  # noqa: E402
                          markov_batches, report_run)

IMPLS = ("tegula", "sdpa-cudnn", "sdpa-flash", "sdpa-math")


def tegula_attention(module, query, key, value, attention_mask, scaling=None,
                     dropout=0.0, **kwargs):
    """transformers' attention-function interface over tegula.ops.attention:
    query [B, H, N, D], key/value [B, HKV, N, D] (grouped heads are not
    repeated: the op reads head h // (H // HKV)), causal, no padding mask.
    Returns [B, N, H, D] as the SDPA integration does."""
    import tegula.ops
    if dropout:
        raise ValueError("tegula attention: dropout is not supported")
    causal = getattr(module, "is_causal", True)
    out = tegula.ops.attention(query, key, value, causal=causal,
                               scale=scaling)
    return out.transpose(1, 2).contiguous(), None


def tegula_rms_norm_forward(self, hidden_states):
    """LlamaRMSNorm.forward through tegula.ops.rms_norm."""
    import tegula.ops
    return tegula.ops.rms_norm(hidden_states, self.weight,
                               self.variance_epsilon)


def tegula_apply_rotary_pos_emb(q, k, cos, sin, position_ids=None,
                                unsqueeze_dim=1):
    """transformers' apply_rotary_pos_emb through tegula.ops.rotary: q, k
    are [B, H, N, D] views of [B, N, H, D] projections (transposed back
    without a copy); cos, sin are [B, N, D] with both halves equal (the
    NeoX pairing); every batch row has the same positions here."""
    import tegula.ops
    half = cos.shape[-1] // 2
    c, s = cos[0, :, :half].float(), sin[0, :, :half].float()

    def rotate(x):
        return tegula.ops.rotary(x.transpose(1, 2), c, s).transpose(1, 2)

    return rotate(q), rotate(k)


def use_tegula_ops(ops):
    """Routes transformers' Llama through tegula.ops: attention always
    (registered below), RMSNorm and rotary when `ops` says so."""
    from transformers.models.llama import modeling_llama
    if "norm" in ops:
        modeling_llama.LlamaRMSNorm.forward = tegula_rms_norm_forward
    if "rotary" in ops:
        modeling_llama.apply_rotary_pos_emb = tegula_apply_rotary_pos_emb


def build_model(args, device):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(
        vocab_size=args.vocab, hidden_size=args.hidden,
        intermediate_size=args.intermediate, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.seq, rms_norm_eps=1e-5,
        tie_word_embeddings=False)
    torch.manual_seed(args.seed)
    model = LlamaForCausalLM(config).to(device=device, dtype=torch.bfloat16)
    if args.impl == "tegula":
        use_tegula_ops(args.tegula_ops)
        from transformers import AttentionInterface
        AttentionInterface.register("tegula", tegula_attention)
        model.config._attn_implementation = "tegula"
    else:
        model.config._attn_implementation = "sdpa"
    return model


def sdpa_backend(impl):
    from torch.nn.attention import SDPBackend
    return {"sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
            "sdpa-flash": SDPBackend.FLASH_ATTENTION,
            "sdpa-math": SDPBackend.MATH}.get(impl)


def setup_distributed(args):
    """With --ddp (launched by torchrun, one process per GPU): joins the
    NCCL process group; returns (device, rank, world size)."""
    if not args.ddp:
        return torch.device("cuda"), 0, 1
    import torch.distributed as dist
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    world = dist.get_world_size()
    if args.batch % world:
        raise SystemExit(f"--batch {args.batch} must divide among {world} "
                         f"processes")
    return torch.device("cuda", local), dist.get_rank(), world


def loss_of(args, model, tokens, backend):
    """The step's mean next-token loss over `tokens` [B, seq + 1]."""
    inputs, labels = tokens[:, :-1], tokens[:, 1:]
    if backend is not None:
        from torch.nn.attention import sdpa_kernel
        with sdpa_kernel(backend):
            logits = model(input_ids=inputs).logits
    else:
        logits = model(input_ids=inputs).logits
    if args.impl == "tegula" and "loss" in args.tegula_ops:
        import tegula.ops
        return tegula.ops.cross_entropy(
            logits.view(-1, logits.shape[-1]), labels.reshape(-1))
    return torch.nn.functional.cross_entropy(
        logits.float().view(-1, logits.shape[-1]), labels.reshape(-1))


def make_optimizer(args, model, capturable=False):
    return torch.optim.AdamW(model.parameters(), lr=args.lr,
                             betas=(0.9, 0.95), weight_decay=0.1,
                             foreach=True, capturable=capturable)


def train(args):
    device, rank, world = setup_distributed(args)
    model = build_model(args, device)
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model, device_ids=[device.index])
    optimizer = make_optimizer(args, model)
    # Linear warm-up of the learning rate over the first steps.
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / max(1, args.lr_warmup)))
    backend = sdpa_backend(args.impl)
    losses, times = [], []
    zipf = args.data == "zipf"
    # Every process draws the whole global batch (the same one a single
    # GPU trains on) and takes its rows: DDP's mean of the processes'
    # gradients is then the global batch's gradient.
    rows = args.batch // world
    batches = markov_batches(args.vocab, args.batch, args.seq, args.steps,
                             args.seed + 1, device,
                             successors=64 if zipf else 4, zipf=zipf)
    for step, tokens in enumerate(batches):
        torch.cuda.synchronize()
        start = time.perf_counter()
        loss = loss_of(args, model, tokens[rank * rows:(rank + 1) * rows],
                       backend)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        if world > 1:
            import torch.distributed as dist
            loss = loss.detach().clone()
            dist.all_reduce(loss)
            loss /= world
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        if rank == 0 and (step % 20 == 0 or step == args.steps - 1):
            print(f"{args.impl} step {step} loss {losses[-1]:.4f} "
                  f"{times[-1] * 1e3:.1f} ms", flush=True)
    warm = times[args.warmup:]
    tokens_per_s = args.batch * args.seq * len(warm) / sum(warm)
    return {"impl": args.impl, "tegula_ops": args.tegula_ops,
            "processes": world, "losses": losses, "step_s": times,
            "tokens_per_s": tokens_per_s, "device": torch.cuda.get_device_name(),
            "torch": torch.__version__, "config": {
                k: getattr(args, k) for k in (
                    "layers", "hidden", "intermediate", "heads", "kv_heads",
                    "seq", "batch", "vocab", "steps", "lr", "seed",
                    "lr_warmup", "data")}}


def graph_check(args, steps=2):
    """One training step (forward, loss, backward, gradient clipping, AdamW)
    captured in a CUDA graph and replayed `steps` times, against the same
    steps run eagerly from the same state on the same batches: the loss and
    every parameter must come out with the same bits. Deterministic
    algorithms are required on both sides (cuBLAS's fixed workspace)."""
    torch.use_deterministic_algorithms(True, warn_only=True)
    device = torch.device("cuda")
    model = build_model(args, device)
    optimizer = make_optimizer(args, model, capturable=True)
    backend = sdpa_backend(args.impl)
    batches = list(markov_batches(args.vocab, args.batch, args.seq,
                                  3 + steps, args.seed + 1, device,
                                  successors=64, zipf=True))
    static = batches[0].clone()

    def step():
        loss = loss_of(args, model, static, backend)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: optimizer state, modules
        for tokens in batches[:3]:
            static.copy_(tokens)
            optimizer.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream().wait_stream(side)
    state = [p.data for p in model.parameters()] + [
        v for s in optimizer.state.values() for v in s.values()
        if isinstance(v, torch.Tensor)]
    saved = [t.clone() for t in state]
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):  # records the step, runs none of it
        static_loss = step()
    replayed = []
    for tokens in batches[3:]:
        static.copy_(tokens)
        graph.replay()
        replayed.append(static_loss.clone())
    after_graph = [p.detach().clone() for p in model.parameters()]
    for t, s in zip(state, saved):
        t.copy_(s)
    eager = []
    for tokens in batches[3:]:
        static.copy_(tokens)
        optimizer.zero_grad(set_to_none=True)
        eager.append(step().detach())
    same_loss = all(torch.equal(a, b) for a, b in zip(replayed, eager))
    differ = sum(not torch.equal(a, p) for a, p in
                 zip(after_graph, model.parameters()))
    ok = same_loss and differ == 0
    print(f"{'PASS' if ok else 'FAIL'} graph-check ({args.impl}, "
          f"{args.tegula_ops if args.impl == 'tegula' else 'PyTorch ops'}): "
          f"{steps} replays of one captured training step against eager: "
          f"losses {[round(x.item(), 6) for x in replayed]} vs "
          f"{[round(x.item(), 6) for x in eager]} "
          f"({'bit-identical' if same_loss else 'DIFFER'}); "
          f"{differ} of {len(after_graph)} parameters differ", flush=True)
    return ok


def llama_title(c):
    """The plot's title for a Llama run's config."""
    return (f"Llama {c['layers']}L h{c['hidden']} {c['heads']}/"
            f"{c['kv_heads']} heads, seq {c['seq']}, bf16, AdamW "
            f"(seed {c['seed']})")


def compare(paths, tol, plot):
    """train_common.compare with the Llama plot title."""
    return compare_runs(paths, tol, plot, llama_title)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--impl", choices=IMPLS, default="tegula")
    p.add_argument("--tegula-ops", default="norm,rotary,loss",
                   help="with --impl tegula: besides attention, which of "
                   "norm, rotary, loss run through tegula.ops")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--intermediate", type=int, default=5632)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    add_run_arguments(p, lr_warmup=0, data="markov")
    p.add_argument("--ddp", action="store_true",
                   help="DistributedDataParallel over NCCL, one process per "
                   "GPU (torchrun --nproc-per-node N); --batch is global")
    p.add_argument("--graph-check", action="store_true",
                   help="capture one training step in a CUDA graph and "
                   "check its replays bit-identical to eager steps")
    args = p.parse_args()
    if args.compare:
        return 0 if compare(args.compare, args.tol, args.plot) else 1
    if args.graph_check:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        return 0 if graph_check(args) else 1
    result = train(args)
    if args.ddp:
        import torch.distributed as dist
        rank = dist.get_rank()
        dist.destroy_process_group()
        if rank:
            return 0
    report_run(args, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
