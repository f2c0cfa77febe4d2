"""What bench/train_llama.py and bench/train_gla.py share: the synthetic
token batches (no download), the run arguments, the result's report and
the loss-curve comparison with its stated tolerance and plot."""

from __future__ import annotations

import json

import torch


def markov_batches(vocab, batch, seq, steps, seed, device, successors=4,
                   zipf=False):
    """`steps` batches [batch, seq + 1] of a random Markov chain whose every
    token has `successors` likely next tokens (entropy about
    ln(successors)); the generator depends on `seed` alone. With `zipf`,
    successors are drawn from a Zipfian popularity over the vocabulary and
    taken with Zipfian weights, as in text: the model learns the frequent
    tokens first and the loss falls gradually instead of in one drop (whose
    timing moves with any rounding difference)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    if zipf:
        popularity = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
        table = torch.multinomial(popularity, vocab * successors,
                                  replacement=True,
                                  generator=g).view(vocab, successors)
        weights = 1.0 / torch.arange(1, successors + 1, dtype=torch.float64)
    else:
        table = torch.randint(0, vocab, (vocab, successors), generator=g)
    for _ in range(steps):
        tokens = torch.empty(batch, seq + 1, dtype=torch.long)
        tokens[:, 0] = torch.randint(0, vocab, (batch,), generator=g)
        if zipf:
            choice = torch.multinomial(weights, batch * seq, replacement=True,
                                       generator=g).view(batch, seq)
        else:
            choice = torch.randint(0, successors, (batch, seq), generator=g)
        for t in range(seq):
            tokens[:, t + 1] = table[tokens[:, t], choice[:, t]]
        yield tokens.to(device, non_blocking=True)


def run_name(run):
    """A run's name in reports: its impl, and its process count under
    DDP."""
    procs = run.get("processes", 1)
    return run["impl"] + (f", {procs} GPUs (DDP)" if procs > 1 else "")


def compare(paths, tol, plot, title):
    """Loss curves of runs from one seed: the largest gap between each run
    and the first over the last half of the steps (where both have left
    the initial plateau), and the mean gap over all steps. `title(config)`
    names the model in the plot (config: the first run's "config")."""
    runs = [json.load(open(p)) for p in paths]
    base = runs[0]
    ok = True
    for run in runs[1:]:
        gaps = [abs(a - b) for a, b in zip(run["losses"], base["losses"])]
        half = gaps[len(gaps) // 2:]
        worst = max(half)
        mean = sum(gaps) / len(gaps)
        fine = worst <= tol
        ok &= fine
        print(f"{'PASS' if fine else 'FAIL'} {run_name(run)} vs {run_name(base)}: "
              f"max |loss gap| over steps {len(gaps) // 2}-{len(gaps) - 1} "
              f"{worst:.4f} (tol {tol}), mean over all {mean:.4f}; final "
              f"{run['losses'][-1]:.4f} vs {base['losses'][-1]:.4f}")
    for run in runs:
        print(f"INFO {run_name(run)}: {run['tokens_per_s']:.0f} tokens/s")
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        for run in runs:
            ax.plot(run["losses"], label=f"{run_name(run)} "
                    f"({run['tokens_per_s'] / 1e3:.1f}k tok/s)", lw=1)
        ax.set_title(title(base["config"]), fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.legend()
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
    return ok


def add_run_arguments(p, lr_warmup, data):
    """The arguments both training comparisons share: batch shape, data,
    schedule, seed, output and --compare. lr_warmup and data are the
    script's defaults (the Llama run keeps its first ones)."""
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10,
                   help="first steps left out of tokens per second")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--lr-warmup", type=int, default=lr_warmup,
                   help="steps of linear learning-rate warm-up")
    p.add_argument("--data", choices=("markov", "zipf"), default=data,
                   help="markov: 4 equally likely successors a token (the "
                   "loss falls in one drop); zipf: 64 Zipf-weighted "
                   "successors of Zipf-popular tokens (a gradual fall)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out")
    p.add_argument("--compare", nargs="+")
    p.add_argument("--tol", type=float, default=0.05,
                   help="with --compare: the largest loss gap to the first "
                   "run allowed over the second half of the steps")
    p.add_argument("--plot")


def report_run(args, result):
    """Writes a run's result to --out (when given) and prints its last loss
    and tokens per second."""
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f)
    print(f"{args.impl}: final loss {result['losses'][-1]:.4f}, "
          f"{result['tokens_per_s']:.0f} tokens/s", flush=True)
