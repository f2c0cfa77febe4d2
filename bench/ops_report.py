"""bench/ops_bench.py's tables and plot: the Markdown of ops-results.json
and its bar chart (rendering only; ops_bench.py measures)."""

import json

# Section titles, by the work a row belongs to.
TITLES = {
    "attention": "attention (tegula.ops.attention), bf16",
    "attention_varlen": "attention_varlen (packed sequences), bf16",
    "rms_norm": "rms_norm, bf16",
    "cross_entropy": "cross_entropy, bf16 logits, mean loss",
    "rotary": "rotary, bf16",
    "chunk_gla": "chunk_gla, bf16 q/k/v, f32 gates",
    "chunk_linear_attention": "chunk_linear_attention, bf16",
    "attention_decode": "attention_decode (paged KV, forward only), bf16",
}
# Calls a host-cost row times when it does not say.
CALLS = 2000


def shape_text(shape):
    return " ".join(f"{k}={v}" if not isinstance(v, bool) else
                    (k if v else f"not {k}") for k, v in shape.items())



def fmt(value, spec=".3f"):
    return "-" if value is None else format(value, spec)


def best_peer(rows, key):
    vals = [r[key] for r in rows if r["impl"] != "tegula"
            and r.get(key) is not None]
    return min(vals) if vals else None


def op_table(work, rows):
    """One op's table: per shape, each implementation's times and its speed
    against the fastest peer (best peer's ms / this row's ms)."""
    rate = any("tflops_fwd" in r for r in rows)
    gbps = any("gbps_fwd" in r for r in rows)
    head = ["shape", "implementation", "ms fwd", "ms fwd+bwd",
            "x best peer fwd", "x best peer fwd+bwd"]
    if rate:
        head += ["TFLOP/s fwd", "TFLOP/s fwd+bwd"]
    if gbps:
        head += ["GB/s fwd (K/V read)"]
    head += ["check"]
    lines = [f"### {TITLES.get(work, work)}", "",
             "| " + " | ".join(head) + " |",
             "|" + " --- |" * len(head)]
    groups = {}
    for r in rows:
        groups.setdefault(json.dumps(r["shape"], sort_keys=True), []).append(r)
    for group in groups.values():
        timed = [r for r in group if "info" not in r]
        best_f, best_b = best_peer(timed, "ms_fwd"), \
            best_peer(timed, "ms_fwd_bwd")
        for r in group:
            cells = [shape_text(r["shape"]), r["impl"]]
            if "info" in r:
                cells += [f"INFO: {r['info']}"] + [""] * (len(head) - 3)
            else:
                cells += [fmt(r.get("ms_fwd")), fmt(r.get("ms_fwd_bwd")),
                          fmt(best_f / r["ms_fwd"] if best_f and
                              r.get("ms_fwd") else None, ".2f"),
                          fmt(best_b / r["ms_fwd_bwd"] if best_b and
                              r.get("ms_fwd_bwd") else None, ".2f")]
                if rate:
                    cells += [fmt(r.get("tflops_fwd"), ".1f"),
                              fmt(r.get("tflops_fwd_bwd"), ".1f")]
                if gbps:
                    cells += [fmt(r.get("gbps_fwd"), ".0f")]
                check = r.get("check", "none")
                if r.get("rel_l2") is not None and check != "none":
                    check += f" ({r['rel_l2']:.1e})"
                cells += ["**FAIL**" + check[4:] if check.startswith("FAIL")
                          else check]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


TRITON_OP = "triton (bench kernel)"


def host_table(rows):
    triton = [r["us_per_call"] for r in rows
              if r.get("impl") == "triton" and "us_per_call" in r]
    floor = triton[0] if triton else None
    # The same op through a Triton kernel of bench/baselines.py, with the
    # allocation of its outputs: like with like.
    same_op = {r["op"]: r["us_per_call"] for r in rows
               if r.get("impl") == TRITON_OP and "us_per_call" in r}
    calls = next((r["calls"] for r in rows if "calls" in r), CALLS)
    rounds = next((r["rounds"] for r in rows if "rounds" in r), None)
    how = (f"the median of {rounds} rounds, each timing every row once in "
           "rotated order, so that each ratio sees the same host"
           if rounds else "the median of 3 loops")
    lines = ["### Host cost per call (Python + dispatch + launch, not GPU "
             "time): microseconds, lower is better", "",
             f"Wall time of {calls} calls of a tiny "
             f"problem, one synchronize after them ({how}). "
             "\"tegula kernel, direct\" calls the op's tegula kernel without "
             "the torch custom op around it; the axpy rows are one bare "
             "launch of a Triton kernel (bench/run.py's) and of an eager "
             "PyTorch op. \"x Triton op\": over the row of the same op "
             f"through a Triton kernel (\"{TRITON_OP}\": bench/baselines.py"
             "'s kernel and its wrapper, which allocates the outputs).", "",
             "| op | shape | implementation | us per call | x Triton launch "
             "| x Triton op | check |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "info" in r:
            lines.append(f"| {r.get('op', '-')} | {shape_text(r['shape'])} "
                         f"| {r['impl']} | INFO: {r['info']} | | | |")
            continue
        us = r["us_per_call"]
        op = same_op.get(r["op"])
        lines.append(f"| {r['op']} | {shape_text(r['shape'])} | {r['impl']} "
                     f"| {us:.2f} | "
                     f"{fmt(us / floor if floor else None, '.2f')} | "
                     f"{fmt(us / op if op else None, '.2f')} | "
                     f"{r.get('check', 'none')} |")
    lines.append("")
    return lines


def train_table(work, rows):
    model = {"train_llama": "Llama (bench/train_llama.py)",
             "train_gla": "GLA (bench/train_gla.py)"}[work]
    timed = [r for r in rows if "info" not in r]
    best = max((r["tokens_per_s"] for r in timed
                if not r["impl"].startswith("tegula")), default=None)
    lines = [f"### Training, {model}: tokens per second (higher is better)",
             "", "\"x best peer\": tokens/s over the fastest non-tegula "
             "run's.", "",
             "| implementation | tokens/s | x best peer | final loss | "
             "steps | device | file |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in timed:
        ratio = r["tokens_per_s"] / best if best else None
        lines.append(f"| {r['impl']} | {r['tokens_per_s']:.0f} | "
                     f"{fmt(ratio, '.2f')} | {r['final_loss']:.4f} | "
                     f"{r['steps']} | "
                     f"{r.get('device') or '-'} | {r['file']} |")
    configs = {json.dumps(r.get("config"), sort_keys=True) for r in timed}
    if len(configs) > 1:
        lines += ["", "**The runs' configs differ**: compare with care."]
    lines.append("")
    return lines


def render(result):
    rows = result["rows"]
    env = ", ".join(f"{k} {result[k]}" for k in ("torch", "triton", "fla",
                                                 "cudnn") if result.get(k))
    lines = ["# tegula.ops beside their peers", "",
             f"Measured {result['date']}"
             + (f" on {result['gpu']}" if result.get("gpu") else "")
             + (f" ({env})" if env else "") + "."
             + (f" Timing: {result['timing']}." if result.get("timing")
                else ""),
             f"Command: `{result['command']}`.", "",
             "\"x best peer\": the fastest peer's ms over this row's ms "
             "(above 1: faster than every peer).", ""]
    works = list(dict.fromkeys(r["work"] for r in rows))
    for work in TITLES:
        if work in works:
            lines += op_table(work, [r for r in rows if r["work"] == work])
    if "host" in works:
        lines += host_table([r for r in rows if r["work"] == "host"])
    for work in ("train_llama", "train_gla"):
        if work in works:
            lines += train_table(work, [r for r in rows
                                        if r["work"] == work])
    shown = set(TITLES) | {"host", "train_llama", "train_gla"}
    notes = [r for r in rows if r["work"] not in shown and "info" in r]
    if notes:
        lines += ["### Notes", ""]
        lines += [f"- {r['work']}: INFO: {r['info']}" for r in notes]
        lines.append("")
    if result.get("errors"):
        lines += ["### Errors", ""]
        lines += [f"- {e['where']}: `{e['error']}`" for e in result["errors"]]
        lines.append("")
    checks = result["checks"]
    failed = [c for c in checks if not c["pass"]]
    lines.append(f"Checks: {len(checks) - len(failed)} of {len(checks)} "
                 "passed (at each timed shape, tegula's output and "
                 "gradients against each peer's; relative L2 within 1e-2 "
                 "for bf16, 3e-3 for f16)"
                 + ("" if not failed else "; FAILED: "
                    + ", ".join(c["check"] for c in failed)) + ".")
    return "\n".join(lines) + "\n"


def plot(result, path):
    """tegula's speed against the fastest peer, per op and shape: forward
    and forward + backward (above 1: faster than every peer)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels, fwd, bwd = [], [], []
    for work in TITLES:
        rows = [r for r in result["rows"] if r["work"] == work
                and "info" not in r]
        groups = {}
        for r in rows:
            groups.setdefault(json.dumps(r["shape"], sort_keys=True),
                              []).append(r)
        for group in groups.values():
            ours = [r for r in group if r["impl"] == "tegula"]
            best_f, best_b = best_peer(group, "ms_fwd"), \
                best_peer(group, "ms_fwd_bwd")
            if not ours or best_f is None:
                continue
            labels.append(f"{work} {shape_text(ours[0]['shape'])}")
            fwd.append(best_f / ours[0]["ms_fwd"])
            bwd.append(best_b / ours[0]["ms_fwd_bwd"]
                       if best_b and ours[0].get("ms_fwd_bwd") else 0.0)
    if not labels:
        return False
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(labels) + 1.4))
    y = list(range(len(labels)))
    ax.barh([i - 0.2 for i in y], fwd, height=0.4, label="fwd")
    ax.barh([i + 0.2 for i in y], bwd, height=0.4, label="fwd+bwd")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("fastest peer's ms / tegula's ms (above 1: tegula faster)")
    ax.set_title("tegula.ops beside their peers, "
                 f"{result.get('gpu') or 'GPU'}, {result['date']}",
                 fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True
