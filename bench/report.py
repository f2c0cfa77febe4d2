#!/usr/bin/env python3
"""Makes the results table (Markdown) and the attention plot from the
results.json that bench/run.py wrote.

    python3 bench/report.py RESULTS.json [--md OUT.md] [--plot OUT.png]
"""

import argparse
import json
from collections import defaultdict


def table(result):
    rows = result["rows"]
    lines = [f"Measured {result['date']} on {result['gpu']} "
             f"(torch {result['torch']}, triton {result['triton']}, "
             f"cuDNN {result['cudnn']}); {result['timing']}.",
             f"Command: `{result['command']}`.", ""]
    # Bundles whose launches ran config 0 instead of a tuned winner.
    untuned = {b: state for b, state in result.get("tuning", {}).items()
               if state != "tuned"}
    if untuned:
        lines += [f"**WARNING: {len(untuned)} swept bundles ran without a "
                  "valid tuning table (config 0):**", ""]
        lines += [f"- {b}: {state}" for b, state in sorted(untuned.items())]
        lines.append("")

    attn = [r for r in rows if r["work"] == "attention"]
    impls = list(dict.fromkeys(r["impl"] for r in attn))
    if attn:
        lines += ["### Attention forward, bf16, TFLOP/s (higher is better)", "",
                  "FLOPs 4·Z·H·N²·D, halved when causal; Z·N = 16384 tokens, "
                  "H·D = 2048.", "",
                  "| D | N | causal | " + " | ".join(impls) + " | tegula / best peer |",
                  "| --- | --- | --- | " + " | ".join("---" for _ in impls)
                  + " | --- |"]
        groups = defaultdict(dict)
        for r in attn:
            groups[(r["D"], r["N"], r["causal"])][r["impl"]] = r["tflops"]
        for (d, n, causal), by in groups.items():
            best = max(v for k, v in by.items() if k != "tegula")
            lines.append(f"| {d} | {n} | {'yes' if causal else 'no'} | "
                         + " | ".join(f"{by[i]:.1f}" if i in by else "-"
                                      for i in impls)
                         + f" | {by['tegula'] / best:.2f} |")
        lines.append("")

    gemm = [r for r in rows if r["work"] == "gemm"]
    if gemm:
        impls = list(dict.fromkeys(r["impl"] for r in gemm))
        lines += ["### GEMM, bf16, runtime M, N, K: TFLOP/s (higher is better)",
                  "", "| M x N x K | " + " | ".join(impls)
                  + " | tegula / cublas | tegula / triton |",
                  "| --- | " + " | ".join("---" for _ in impls) + " | --- | --- |"]
        groups = defaultdict(dict)
        for r in gemm:
            groups[(r["M"], r["N"], r["K"])][r["impl"]] = r["tflops"]
        for (m, n, k), by in groups.items():
            lines.append(f"| {m} x {n} x {k} | "
                         + " | ".join(f"{by[i]:.1f}" if i in by else "-"
                                      for i in impls)
                         + f" | {by['tegula'] / by['cublas']:.2f}"
                         + f" | {by['tegula'] / by['triton']:.2f} |")
        lines.append("")
    launch = [r for r in rows if r["work"] == "launch"]
    if launch:
        lines += ["### Launch overhead: host microseconds per call of a "
                  "1024-element axpy (lower is better)", "",
                  "| implementation | us per call |", "| --- | --- |"]
        lines += [f"| {r['impl']} | {r['us_per_call']:.2f} |" for r in launch]
        lines.append("")
    norm = [r for r in rows if r["work"] == "rmsnorm"]
    if norm:
        lines += ["### RMSNorm (row loop), bf16: GB/s (higher is better)", "",
                  "| R x C | implementation | ms | GB/s |",
                  "| --- | --- | --- | --- |"]
        for r in norm:
            lines.append(f"| {r['R']} x {r['C']} | {r['impl']} | "
                         f"{r['ms']:.3f} | {r['gbps']:.0f} |")
        lines.append("")

    gelu = [r for r in rows if r["work"] == "gemm_gelu"]
    if gelu:
        lines += ["### GEMM + bias + exact GELU, bf16, runtime M, N, K: "
                  "TFLOP/s (higher is better)", "",
                  "| M x N x K | implementation | ms | TFLOP/s |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {r['M']} x {r['N']} x {r['K']} | {r['impl']} | "
                  f"{r['ms']:.3f} | {r['tflops']:.1f} |" for r in gelu]
        lines.append("")
    ce = [r for r in rows if r["work"] == "cross_entropy"]
    if ce:
        lines += ["### Fused cross-entropy, bf16 logits: GB/s of the logits "
                  "read (higher is better)", "",
                  "| R x V | implementation | ms | GB/s |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {r['R']} x {r['V']} | {r['impl']} | {r['ms']:.3f} | "
                  f"{r['gbps']:.0f} |" for r in ce]
        lines.append("")

    for work, what in (("layernorm_fwd", "forward"),
                       ("layernorm_bwd", "backward (dx, dw, db)")):
        sel = [r for r in rows if r["work"] == work]
        if not sel:
            continue
        triton = {r["N"]: r["ms"] for r in sel if r["impl"] == "triton"}
        lines += [f"### LayerNorm {what}, the Triton tutorial's, "
                  f"{sel[0]['dtype']}, M = {sel[0]['M']}: GB/s as the "
                  "tutorial counts them (higher is better)", "",
                  "| N | implementation | ms | GB/s | x Triton |",
                  "| --- | --- | --- | --- | --- |"]
        for r in sel:
            ratio = (f"{triton[r['N']] / r['ms']:.2f}" if r["N"] in triton
                     else "-")
            lines.append(f"| {r['N']} | {r['impl']} | {r['ms']:.3f} | "
                         f"{r['gbps']:.0f} | {ratio} |")
        lines.append("")

    for work, title in (("rotary", "Rotary embedding, bf16"),
                        ("linear_attention",
                         "Chunked linear attention forward, bf16")):
        sel = [r for r in rows if r["work"] == work]
        if not sel:
            continue
        lines += [f"### {title}: ms (lower is better), GB/s of the bytes "
                  "that must move", "",
                  "| shape (B, T, H, D) | implementation | ms | GB/s |",
                  "| --- | --- | --- | --- |"]
        for r in sel:
            lines.append(f"| ({r['B']}, {r['T']}, {r['H']}, {r['D']}) | "
                         f"{r['impl']} | {r['ms']:.3f} | {r['gbps']:.0f} |")
        lines.append("")

    # Every other section (the attention family, ...): one generic table
    # each, shape keys as they were recorded.
    shown = {"attention", "gemm", "rmsnorm", "launch", "gemm_gelu",
             "cross_entropy", "rotary", "linear_attention", "layernorm_fwd",
             "layernorm_bwd"}
    for work in dict.fromkeys(r["work"] for r in rows):
        if work in shown:
            continue
        sel = [r for r in rows if r["work"] == work]
        keys = [k for k in sel[0] if k not in
                ("work", "impl", "ms", "tflops", "gbps")]
        rate = "tflops" if "tflops" in sel[0] else \
            "gbps" if "gbps" in sel[0] else None
        unit = {"tflops": "TFLOP/s", "gbps": "GB/s", None: ""}[rate]
        lines += [f"### {work}: ms (lower is better)" +
                  (f", {unit}" if rate else ""), "",
                  "| shape | implementation | ms |" + (f" {unit} |" if rate else ""),
                  "| --- | --- | --- |" + (" --- |" if rate else "")]
        for r in sel:
            shape = ", ".join(f"{k}={r[k]}" for k in keys if k in r)
            lines.append(f"| {shape} | {r['impl']} | {r['ms']:.3f} |" +
                         (f" {r[rate]:.1f} |" if rate and rate in r else
                          (" |" if rate else "")))
        lines.append("")

    configs = [r for r in result["rows"] if "config" in r]
    if configs:
        lines += ["### The configs Tegula's rows ran", "",
                  "Chosen per launch by the runtime (docs/tuning.md): tuned "
                  "(the table's bucket), nearest bucket, pinned or default.",
                  "", "| work | shape | implementation | config |",
                  "| --- | --- | --- | --- |"]
        skip = {"work", "impl", "ms", "tflops", "gbps", "config"}
        for r in configs:
            shape = ", ".join(f"{k}={v}" for k, v in r.items()
                              if k not in skip)
            lines.append(f"| {r['work']} | {shape} | {r['impl']} | "
                         f"{r['config']} |")
        lines.append("")

    checks = result["checks"]
    failed = [c for c in checks if not c["pass"]]
    lines.append(f"Checks: {len(checks) - len(failed)} of {len(checks)} "
                 "passed (every peer against float64 at a ragged size, and "
                 "every output against Tegula's at the timed shape)"
                 + ("" if not failed else "; FAILED: "
                    + ", ".join(c["check"] for c in failed)) + ".")
    return "\n".join(lines) + "\n"


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # The forward's panels, or the backward's when a run timed only it.
    work = "attention"
    if not any(r["work"] == work for r in result["rows"]):
        work = "attention_bwd"
    attn = [r for r in result["rows"] if r["work"] == work]
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2), sharey=True)
    panels = [(d, c) for d in (64, 128) for c in (False, True)]
    impls = list(dict.fromkeys(r["impl"] for r in attn))
    for ax, (d, causal) in zip(axes, panels):
        for impl in impls:
            pts = sorted((r["N"], r["tflops"]) for r in attn
                         if r["impl"] == impl and r["D"] == d
                         and r["causal"] == causal)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                        label=impl)
        ax.set_xscale("log", base=2)
        ax.set_xticks([1024, 4096, 16384], ["1k", "4k", "16k"])
        ax.set_title(f"D={d}, {'causal' if causal else 'not causal'}")
        ax.set_xlabel("N (Z·N = 16k tokens)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("TFLOP/s")
    axes[0].legend()
    what = "forward" if work == "attention" else "backward (dQ, dK, dV)"
    fig.suptitle(f"Attention {what}, bf16, {result['gpu']}, "
                 f"{result['date']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results")
    parser.add_argument("--md")
    parser.add_argument("--plot")
    args = parser.parse_args()
    with open(args.results) as f:
        result = json.load(f)
    text = table(result)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    print(text)
    if args.plot:
        plot(result, args.plot)


if __name__ == "__main__":
    main()
