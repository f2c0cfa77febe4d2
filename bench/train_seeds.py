#!/usr/bin/env python3
"""The GLA training comparison's gaps across seeds (scripts/gpu/gla-seeds.sh
runs): for each seed, each run's loss curve against fla's chunk_gla run of
the same seed, on the statistics a tolerance could be stated in.

    python3 bench/train_seeds.py DIR [--plot out.png] [--md out.md]

DIR holds NAME-sSEED.json (bench/train_gla.py --out) for NAME in fla,
tegula, fla-again (fla's chunk_gla run again: is it repeatable?),
fla-recurrent (fla's fused recurrent form: how far fla's own two forms
are) and fla-elsewhere (fla's chunk_gla on another machine of the same
kind: how far fla is from itself there). Every statistic is over steps 100-199, the second half of the run:

- max gap: the largest |loss gap| of one step (the stated criterion, 0.05);
- max gap of the W-step moving averages (each average ends at the step);
- mean gap: the mean loss of the run minus fla's;
- noise correlation: the correlation of the two curves' step-to-step
  fluctuations (each loss minus its centred 9-step mean): 1 while the
  runs see the same batches on the same trajectory.

The tolerance (docs/ops.md, "The GLA training comparison's tolerance"),
printed after the table for every seed with tegula, fla and
fla-recurrent runs:

- bias: tegula's mean gap within +-BIAS_TOL on every seed;
- noise: tegula's largest one-step gaps no larger than fla's recurrent
  form's on the same seeds: the one-sided sign-flip permutation test of
  the seeds' differences (tegula's max gap minus the recurrent form's)
  gives p >= NOISE_ALPHA.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys

FIRST, LAST = 100, 200
WINDOWS = (5, 10, 20)
ORDER = ("tegula", "fla-recurrent", "fla-elsewhere", "fla-again")
PLOTTED = ORDER[:3]
BIAS_TOL = 0.02
NOISE_ALPHA = 0.05


def moving(x, w):
    """x's w-step moving averages, the i-th ending at step i (None before
    step w - 1)."""
    return [None] * (w - 1) + [sum(x[i - w + 1:i + 1]) / w
                               for i in range(w - 1, len(x))]


def fluctuations(x):
    """Each loss minus the mean of the 9 steps centred on it."""
    out = []
    for i in range(len(x)):
        part = x[max(0, i - 4):i + 5]
        out.append(x[i] - sum(part) / len(part))
    return out


def correlation(a, b):
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    den = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return num / den ** 0.5 if den > 0 else 1.0


def gaps(run, base):
    """The statistics of run's losses against base's (module docstring)."""
    stats = {"max gap": max(abs(run[i] - base[i])
                            for i in range(FIRST, LAST))}
    for w in WINDOWS:
        a, b = moving(run, w), moving(base, w)
        stats[f"max gap, {w}-step mean"] = max(abs(a[i] - b[i])
                                               for i in range(FIRST, LAST))
    stats["mean gap"] = (statistics.fmean(run[FIRST:LAST]) -
                         statistics.fmean(base[FIRST:LAST]))
    stats["noise correlation"] = correlation(
        fluctuations(run)[FIRST:LAST], fluctuations(base)[FIRST:LAST])
    return stats


def load(directory):
    """{seed: {name: run}} of DIR's NAME-sSEED.json files."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(directory, "*-s*.json"))):
        found = re.fullmatch(r"(.+)-s(\d+)\.json", os.path.basename(path))
        if found:
            with open(path) as f:
                runs.setdefault(int(found[2]), {})[found[1]] = json.load(f)
    return runs


def table(runs):
    """Markdown rows: a row per seed and run against that seed's fla."""
    names = ["max gap"] + [f"max gap, {w}-step mean" for w in WINDOWS] + \
        ["mean gap", "noise correlation"]
    lines = ["| seed | run against fla | " + " | ".join(names) +
             " | tokens/s |",
             "| --- | --- |" + " --- |" * (len(names) + 1)]
    for seed, byname in sorted(runs.items()):
        if "fla" not in byname or len(byname["fla"]["losses"]) < LAST:
            continue
        base = byname["fla"]["losses"]
        for name in ORDER:
            if name not in byname:
                continue
            s = gaps(byname[name]["losses"], base)
            cells = [f"{s[n]:+.4f}" if n == "mean gap" else f"{s[n]:.4f}"
                     for n in names]
            lines.append(f"| {seed} | {name} | " + " | ".join(cells) +
                         f" | {byname[name]['tokens_per_s']:,.0f} |")
        lines.append(f"| {seed} | fla (itself) | " +
                     " | ".join(["-"] * len(names)) +
                     f" | {byname['fla']['tokens_per_s']:,.0f} |")
    return "\n".join(lines)


def sign_flip_p(diffs):
    """One-sided p of the mean of diffs being this large by chance: the
    share of the 2^n sign patterns whose mean is at least the observed."""
    n = len(diffs)
    observed = sum(diffs)
    hits = sum(1 for mask in range(2 ** n)
               if sum(-d if mask >> i & 1 else d
                      for i, d in enumerate(diffs)) >= observed - 1e-12)
    return hits / 2 ** n


def verdict(runs):
    """The tolerance's two tests (module docstring) as text lines, and
    whether both hold; None where no seed has the three runs."""
    seeds = [s for s, by in sorted(runs.items())
             if all(n in by for n in ("fla", "tegula", "fla-recurrent"))]
    if not seeds:
        return None, []
    lines, diffs, bias_ok = [], [], True
    for seed in seeds:
        base = runs[seed]["fla"]["losses"]
        mine = gaps(runs[seed]["tegula"]["losses"], base)
        ref = gaps(runs[seed]["fla-recurrent"]["losses"], base)
        bias_ok &= abs(mine["mean gap"]) <= BIAS_TOL
        diffs.append(mine["max gap"] - ref["max gap"])
        lines.append(f"- seed {seed}: mean gap {mine['mean gap']:+.4f} "
                     f"(fla-recurrent {ref['mean gap']:+.4f}); max gap "
                     f"{mine['max gap']:.4f} (fla-recurrent "
                     f"{ref['max gap']:.4f})")
    p = sign_flip_p(diffs)
    noise_ok = p >= NOISE_ALPHA
    lines.append(f"- bias: every |mean gap| <= {BIAS_TOL}: "
                 f"{'holds' if bias_ok else 'FAILS'}")
    lines.append(f"- noise: tegula's max gaps exceed fla-recurrent's by "
                 f"{statistics.fmean(diffs):+.4f} on average over "
                 f"{len(seeds)} seeds, one-sided sign-flip p = {p:.3f} "
                 f"(needs >= {NOISE_ALPHA}): "
                 f"{'holds' if noise_ok else 'FAILS'}")
    return bias_ok and noise_ok, lines


def plot(runs, path):
    """Each seed's loss gap to fla (the run minus fla) by step."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    seeds = sorted(s for s in runs if "fla" in runs[s])
    fig, axes = plt.subplots(len(seeds), 1, figsize=(7, 2.2 * len(seeds)),
                             sharex=True, squeeze=False)
    for ax, seed in zip(axes[:, 0], seeds):
        base = runs[seed]["fla"]["losses"]
        for name in PLOTTED:
            if name in runs[seed]:
                run = runs[seed][name]["losses"]
                ax.plot([a - b for a, b in zip(run, base)], lw=0.8,
                        label=f"{name} - fla")
        ax.axhspan(-0.05, 0.05, color="0.9", zorder=0)
        ax.axvline(FIRST, color="0.6", lw=0.6)
        ax.set_ylim(-0.15, 0.15)
        ax.set_ylabel(f"seed {seed}")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("step (grey band: the former one-step criterion, 0.05)")
    fig.suptitle("GLA model: loss gap to fla's chunk_gla, by seed", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("directory")
    p.add_argument("--plot")
    p.add_argument("--md", help="write the table here too")
    args = p.parse_args(argv)
    runs = load(args.directory)
    if not runs:
        print(f"no NAME-sSEED.json runs in {args.directory}", file=sys.stderr)
        return 1
    text = table(runs)
    held, lines = verdict(runs)
    if held is not None:
        text += "\n\nTolerance (docs/ops.md):\n\n" + "\n".join(lines) + \
            f"\n- the GLA training comparison {'holds' if held else 'FAILS'}"
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    if args.plot:
        plot(runs, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
