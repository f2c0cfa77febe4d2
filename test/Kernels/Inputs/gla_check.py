#!/usr/bin/env python3
"""Gated linear attention (kernels/gla.tile) against a float64 numpy
reference, in the interpreter (tilec --run).

The reference is fla's definition (naive_recurrent_gla), step by step per
position, in float64 on the exact inputs the kernel reads (rounded to their
dtypes first):
    S_0 = h0 (or 0),  S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t,
    o_t = scale * q_t S_t,  ht = S_T,  hs[c] = S before position c * CHUNK.

    gla_check.py inputs DIR [--B 2 --T 37 ...]   write inputs and references
    gla_check.py sweep [--tilec PATH] [--quick]  run both kernels on a matrix
                                                 of sizes and compare
    gla_check.py bwd-sweep [--tilec PATH] [--quick]  the backward
                                                 (kernels/gla_bwd.tile), same
    gla_check.py fd-check                        the float64 backward against
                                                 finite differences

`inputs` writes q, k, v, g (and h0 with --h0) as .npy in DIR, with o_ref,
ht_ref and hs_ref (float64) for tilec's --ref. `sweep` runs chunk_gla_fwd,
the chunked form (chunk_gla_states, chunk_gla_cumsum, chunk_gla_intra,
chunk_gla_output) and recurrent_gla_fwd on fresh inputs for each case
(outputs left to the
runner, which poisons them and fails on any element not written), compares
o, ht and hs with the reference by relative L2 (bf16 1e-2, f16 2e-3, f32
1e-5: docs/runtime.md, Tolerances) and the forms' o with each other,
and exits 1 on any failure.

The backward's reference (reference_bwd) is the adjoint of the same step
recurrence, in float64, with G_t = dL/dS_t for L = sum(o dO) + sum(ht dht):
dq_t = scale dO_t S_t^T, dk_t = v_t G_t^T, dv_t = k_t G_t,
dg_t = exp(g_t) rowsum(G_t o S_{t-1}), dh0 = dL/dS_0; it computes dg
directly, not by the cumulative-sum identity the kernel uses. `fd-check`
holds it to central differences of `reference` (relative L2 < 1e-6; about
1e-9 measured). `inputs --bwd` also writes do (and dht with --dht) and
dq_ref, dk_ref, dv_ref, dg_ref, dh0_ref and dhs_ref (the gradient of the
state after each chunk, from later positions). `bwd-sweep` runs the
backward's launches (chunk_gla_states, chunk_gla_bwd_dh, chunk_gla_cumsum,
chunk_gla_intra, chunk_gla_bwd_da, chunk_gla_bwd_dqk_intra,
chunk_gla_bwd_dqkg, chunk_gla_bwd_dv: kernels/gla_bwd.tile's header) on
fresh inputs per case and compares every output (dg at the looser of DT's and GT's
tolerance, as it is stored in GT).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "..", "kernels", "gla.tile")
TOL = {"bf16": 1e-2, "f16": 2e-3, "f32": 1e-5}


def round_to(x, dtype):
    """x (float64) rounded to dtype, as float32 (bf16, f32) or float16."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "f16":
        return x.astype(np.float16)
    x = x.astype(np.float32)
    if dtype == "bf16":
        # Round to nearest even on the upper 16 bits (inputs are finite).
        bits = x.view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
        x = bits.astype(np.uint32).view(np.float32)
    return x


def gates(rng, shape, kind):
    """Log-space forget gates. 'logsigmoid': fla's tests, log(sigmoid(n));
    'strong': down to about -25 a step, so that exp(-cumsum(g)) over one
    block of 16 overflows f32 (a formulation splitting exp(gc_i - gc_j)
    into exp(gc_i) exp(-gc_j) gives inf or NaN); 'mixed': any real, some
    positive (growth), as the kernels must accept."""
    n = rng.standard_normal(shape)
    if kind == "logsigmoid":
        return -np.logaddexp(0.0, -n)
    if kind == "strong":
        return -np.logaddexp(0.0, -(4.0 * n - 6.0))
    if kind == "mixed":
        return 0.3 * n - 0.1
    raise ValueError(kind)


def reference(q, k, v, g, scale, h0, chunk):
    """float64 o [B, T, H, V], ht [B, H, K, V], hs [B, NT, H, K, V]."""
    q, k, v, g = (np.asarray(x, dtype=np.float64) for x in (q, k, v, g))
    B, T, H, K = q.shape
    V = v.shape[-1]
    s = np.zeros((B, H, K, V)) if h0 is None else np.array(h0, np.float64)
    o = np.zeros((B, T, H, V))
    hs = np.zeros((B, -(-T // chunk), H, K, V))
    for t in range(T):
        if t % chunk == 0:
            hs[:, t // chunk] = s
        s = np.exp(g[:, t])[..., None] * s + k[:, t, :, :, None] * v[:, t, :, None, :]
        o[:, t] = scale * np.einsum("bhk,bhkv->bhv", q[:, t], s)
    return o, s, hs


def reference_bwd(q, k, v, g, scale, h0, do, dht, chunk):
    """float64 gradients of L = sum(o * do) + sum(ht * dht) through the
    step recurrence, written from its adjoint (not the chunked form): with
    G_t = dL/dS_t and Ga_t = dL/dS_t through positions after t only
    (Ga_T = dht),
        G_t = Ga_t + scale q_t^T do_t,  Ga_{t-1} = diag(exp(g_t)) G_t,
        dq_t = scale do_t S_t^T,  dk_t = v_t G_t^T,  dv_t = k_t G_t,
        dg_t = exp(g_t) o rowsum(G_t o S_{t-1}),  dh0 = Ga_0.
    Returns dq, dk, dv, dg, dh0 and dhs [B, NT, H, K, V], dhs[c] = Ga at
    the last position of chunk c (what chunk_gla_bwd_dh stores)."""
    q, k, v, g, do = (np.asarray(x, dtype=np.float64) for x in (q, k, v, g, do))
    B, T, H, K = q.shape
    V = v.shape[-1]
    s = np.zeros((B, H, K, V)) if h0 is None else np.array(h0, np.float64)
    states = [s]
    for t in range(T):
        s = np.exp(g[:, t])[..., None] * s + k[:, t, :, :, None] * v[:, t, :, None, :]
        states.append(s)
    ga = np.zeros((B, H, K, V)) if dht is None else np.array(dht, np.float64)
    dq, dk, dg = (np.zeros((B, T, H, K)) for _ in range(3))
    dv = np.zeros((B, T, H, V))
    dhs = np.zeros((B, -(-T // chunk), H, K, V))
    for t in range(T - 1, -1, -1):
        if t % chunk == chunk - 1 or t == T - 1:
            dhs[:, t // chunk] = ga
        gt = ga + scale * q[:, t, :, :, None] * do[:, t, :, None, :]
        dq[:, t] = scale * np.einsum("bhv,bhkv->bhk", do[:, t], states[t + 1])
        dk[:, t] = np.einsum("bhkv,bhv->bhk", gt, v[:, t])
        dv[:, t] = np.einsum("bhk,bhkv->bhv", k[:, t], gt)
        dg[:, t] = np.exp(g[:, t]) * np.sum(gt * states[t], axis=-1)
        ga = np.exp(g[:, t])[..., None] * gt
    return dq, dk, dv, dg, ga, dhs


def fd_check(seed=0, eps=1e-6):
    """reference_bwd against central differences of the forward reference
    (float64) at a tiny size, every element of q, k, v, g, h0; with dht,
    mixed-sign gates and a negative scale. Returns the largest relative
    error over the gradients."""
    rng = np.random.default_rng(seed)
    B, T, H, K, V, chunk, scale = 2, 7, 2, 3, 4, 3, -0.6
    x = {"q": rng.standard_normal((B, T, H, K)),
         "k": rng.standard_normal((B, T, H, K)),
         "v": rng.standard_normal((B, T, H, V)),
         "g": gates(rng, (B, T, H, K), "mixed"),
         "h0": rng.standard_normal((B, H, K, V))}
    do = rng.standard_normal((B, T, H, V))
    dht = rng.standard_normal((B, H, K, V))

    def loss(y):
        o, ht, _ = reference(y["q"], y["k"], y["v"], y["g"], scale, y["h0"], chunk)
        return float(np.sum(o * do) + np.sum(ht * dht))

    an = dict(zip(("q", "k", "v", "g", "h0"),
                  reference_bwd(x["q"], x["k"], x["v"], x["g"], scale, x["h0"],
                                do, dht, chunk)[:5]))
    worst = 0.0
    for n in x:
        fd = np.zeros_like(x[n])
        for i in np.ndindex(x[n].shape):
            y = {m: z.copy() for m, z in x.items()}
            y[n][i] += eps
            lp = loss(y)
            y[n][i] -= 2 * eps
            fd[i] = (lp - loss(y)) / (2 * eps)
        e = np.linalg.norm(fd - an[n]) / np.linalg.norm(fd)
        print(f"fd d{n}: rel_l2 {e:.2e}")
        worst = max(worst, e)
    return worst


def make_case(rng, B, T, H, K, V, dt, gt, use_h0, gate_kind):
    q = round_to(rng.standard_normal((B, T, H, K)), dt)
    k = round_to(rng.standard_normal((B, T, H, K)), dt)
    v = round_to(rng.standard_normal((B, T, H, V)), dt)
    g = round_to(gates(rng, (B, T, H, K), gate_kind), gt)
    h0 = rng.standard_normal((B, H, K, V)).astype(np.float32) if use_h0 else None
    return q, k, v, g, h0


def write_inputs(d, q, k, v, g, h0, scale, chunk):
    os.makedirs(d, exist_ok=True)
    for name, x in (("q", q), ("k", k), ("v", v), ("g", g), ("h0", h0)):
        if x is not None:
            np.save(os.path.join(d, name + ".npy"), x)
    o, ht, hs = reference(q, k, v, g, scale, h0, chunk)
    np.save(os.path.join(d, "o_ref.npy"), o)
    np.save(os.path.join(d, "ht_ref.npy"), ht)
    np.save(os.path.join(d, "hs_ref.npy"), hs)
    return o, ht, hs


def make_grads(rng, B, T, H, K, V, dt, use_dht):
    """Upstream gradients: dO [B, T, H, V] in DT, dht [B, H, K, V] f32."""
    do = round_to(rng.standard_normal((B, T, H, V)), dt)
    dht = rng.standard_normal((B, H, K, V)).astype(np.float32) if use_dht else None
    return do, dht


def write_bwd(d, q, k, v, g, h0, scale, chunk, do, dht):
    """do.npy, dht.npy (if any) and the float64 gradients *_ref.npy."""
    for name, x in (("do", do), ("dht", dht)):
        if x is not None:
            np.save(os.path.join(d, name + ".npy"), x)
    refs = dict(zip(("dq", "dk", "dv", "dg", "dh0", "dhs"),
                    reference_bwd(q, k, v, g, scale, h0, do, dht, chunk)))
    for n, x in refs.items():
        np.save(os.path.join(d, n + "_ref.npy"), x)
    return refs


def rel_l2(x, ref):
    """Relative L2 error; absolute where the reference is all zero (as
    tilec --check); inf for any NaN or inf (the runner's poison is NaN)."""
    x = np.asarray(x, np.float64)
    if not np.all(np.isfinite(x)):
        return float("inf")
    norm = np.linalg.norm(ref)
    return float(np.linalg.norm(x - ref) / (norm if norm > 0 else 1.0))


def tilec_run(tilec, path, kernel, defs, dims, scale, ins, outs, d):
    """Run one kernel in the interpreter; ins and outs map names to files."""
    cmd = [tilec, path, "-k", kernel, "--run"]
    for n, x in defs.items():
        cmd += ["-D", f"{n}={x}"]
    if dims:
        cmd += ["--dims", ",".join(f"{n}={x}" for n, x in dims.items())]
    if scale is not None:
        cmd += ["--scalar", f"scale={scale!r}"]
    for n, f in ins.items():
        cmd += ["--in", f"{n}={f}"]
    files = {n: os.path.join(d, f"{kernel}-{n}.npy") for n in outs}
    for n, f in files.items():
        cmd += ["--out", f"{n}={f}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    return files


def run_kernel(tilec, d, kernel, defs, dims, scale, outs, use_h0, skip=(),
               extra=None):
    """A forward kernel of gla.tile on the case's inputs in `d`, plus
    `extra` (name to file); returns its outputs as arrays."""
    names = ("q", "k", "v", "g") + (("h0",) if use_h0 else ())
    ins = {n: os.path.join(d, n + ".npy") for n in names if n not in skip}
    ins.update(extra or {})
    files = tilec_run(tilec, KERNEL, kernel, defs, dims, scale, ins, outs, d)
    return {n: np.load(f) for n, f in files.items()}


def check_case(tilec, tmp, case, seed):
    (B, T, H, K, V, dt, gt, use_h0, gate_kind, scale, chunk_defs,
     rec_defs) = case
    rng = np.random.default_rng(seed)
    q, k, v, g, h0 = make_case(rng, B, T, H, K, V, dt, gt, use_h0, gate_kind)
    chunk = chunk_defs.get("CHUNK", 64)
    d = os.path.join(tmp, f"case{seed}")
    o_ref, ht_ref, hs_ref = write_inputs(d, q, k, v, g, h0, scale, chunk)
    common = {"K": K, "V": V, "DT": dt, "GT": gt,
              "USE_H0": "true" if use_h0 else "false"}
    n0 = B if use_h0 else 0
    # The reference reads the rounded inputs, so the tolerance is that of
    # the arithmetic: DT's (bf16/f16 dot operands), f32 without dots.
    tol = TOL[dt]
    results = []
    ok = True
    outs = {}
    if dt != "f32":
        nt = -(-T // chunk)
        dims = {"B": B, "T": T, "H": H, "N0": n0, "NT": nt}
        got = run_kernel(tilec, d, "chunk_gla_fwd",
                         {**common, "STORE_STATES": "true", **chunk_defs},
                         dims, scale, ("o", "ht", "hs"), use_h0)
        outs["chunk"] = got["o"]
        for n, ref in (("o", o_ref), ("ht", ht_ref), ("hs", hs_ref)):
            e = rel_l2(got[n], ref)
            ok &= e <= tol
            results.append(f"chunk {n} {e:.2e}")
        # The chunked form: states, gate sums, scores, then o from them.
        got = run_kernel(tilec, d, "chunk_gla_states", {**common, **chunk_defs},
                         dims, None, ("hs", "ht"), use_h0, skip=("q",))
        for n, ref in (("hs", hs_ref), ("ht", ht_ref)):
            e = rel_l2(got[n], ref)
            ok &= e <= tol
            results.append(f"states {n} {e:.2e}")
        outs["chunks"] = chunked_output(tilec, d, K, V, dt, gt, chunk, scale,
                                        chunk_defs)
        e = rel_l2(outs["chunks"], o_ref)
        ok &= e <= tol
        results.append(f"chunks o {e:.2e}")
    got = run_kernel(tilec, d, "recurrent_gla_fwd", {**common, **rec_defs},
                     {"B": B, "T": T, "H": H, "N0": n0}, scale, ("o", "ht"),
                     use_h0)
    outs["recurrent"] = got["o"]
    for n, ref in (("o", o_ref), ("ht", ht_ref)):
        e = rel_l2(got[n], ref)
        ok &= e <= tol
        results.append(f"recurrent {n} {e:.2e}")
    # Each form rounds o to DT once; they agree within the same tolerance.
    for a, b in (("chunk", "recurrent"), ("chunks", "chunk")):
        if a in outs:
            e = rel_l2(outs[a], np.asarray(outs[b], np.float64))
            ok &= e <= tol
            results.append(f"{a}~{b} {e:.2e}")
    return ok, tol, results


def chunked_output(tilec, d, K, V, dt, gt, chunk, scale, chunk_defs):
    """chunk_gla_cumsum, chunk_gla_intra and chunk_gla_output on the case
    in `d` and chunk_gla_states' hs there; returns o."""
    f = {n: os.path.join(d, n + ".npy") for n in ("q", "k", "v", "g")}
    gc = tilec_run(tilec, KERNEL, "chunk_gla_cumsum",
                   {"K": K, "CHUNK": chunk, "GT": gt}, {}, None,
                   {"g": f["g"]}, ("gc",), d)["gc"]
    a = tilec_run(tilec, KERNEL, "chunk_gla_intra",
                  {"K": K, "CHUNK": chunk, "DT": dt}, {}, None,
                  {"q": f["q"], "k": f["k"], "gc": gc}, ("a",), d)["a"]
    defs = {"K": K, "V": V, "CHUNK": chunk, "DT": dt,
            **{n: x for n, x in chunk_defs.items() if n == "BLOCK_V"}}
    ins = {"q": f["q"], "v": f["v"], "gc": gc, "a": a,
           "hs": os.path.join(d, "chunk_gla_states-hs.npy")}
    o = tilec_run(tilec, KERNEL, "chunk_gla_output", defs, {}, scale, ins,
                  ("o",), d)["o"]
    return np.load(o)


def cases(quick):
    """(B, T, H, K, V, DT, GT, h0, gates, scale, chunk -D, recurrent -D)."""
    small = {"BLOCK_V": 16, "WARPS": 1}
    c = [
        # The 8-wide key head, padded to 16 inside.
        (2, 37, 3, 8, 8, "bf16", "f32", False, "logsigmoid", 8 ** -0.5, small, {"BLOCK_V": 8}),
        (1, 100, 2, 8, 64, "bf16", "f32", True, "logsigmoid", -0.35, {}, {}),
        (2, 1, 2, 16, 64, "bf16", "f32", True, "logsigmoid", 0.25, {}, {}),
        (1, 130, 2, 16, 8, "bf16", "bf16", False, "strong", -1.5, small, {"BLOCK_V": 8}),
        (2, 37, 1, 32, 64, "f16", "f32", True, "mixed", 0.2, {"CHUNK": 32}, {}),
        (1, 130, 2, 64, 64, "bf16", "f32", True, "logsigmoid", 0.125, {}, {}),
        (1, 100, 1, 100, 128, "bf16", "f32", False, "strong", -0.1, {"BLOCK_T": 32, "BLOCK_V": 32}, {}),
        (2, 37, 1, 128, 64, "bf16", "bf16", True, "logsigmoid", 128 ** -0.5, {"WARPS": 4}, {}),
        (1, 130, 1, 64, 8, "f32", "f32", True, "mixed", -0.3, {}, {"BLOCK_V": 8}),
    ]
    if not quick:
        c += [
            (1, 37, 2, 256, 64, "bf16", "f32", True, "logsigmoid", 0.0625, {"BLOCK_V": 16}, {}),
            (1, 100, 1, 128, 128, "f16", "f16", True, "logsigmoid", -0.09, {}, {}),
            (1, 130, 1, 100, 256, "bf16", "f32", True, "mixed", 0.1, {}, {}),
            (2, 1, 1, 256, 256, "bf16", "f32", True, "strong", -0.0625, {"BLOCK_V": 16}, {}),
            (1, 100, 2, 32, 128, "bf16", "f32", False, "strong", 0.18, {"BLOCK_V": 32}, {}),
            (3, 64, 2, 8, 256, "f16", "f32", True, "logsigmoid", 0.35, {}, {}),
        ]
    return c


BWD_KERNEL = os.path.join(os.path.dirname(KERNEL), "gla_bwd.tile")


def check_bwd_case(tilec, tmp, case, seed):
    """The backward's launches (kernels/gla_bwd.tile's header) on fresh
    inputs: chunk_gla_states (gla.tile, CHUNK as given) for hs,
    chunk_gla_bwd_dh for dhs and dh0, chunk_gla_cumsum and chunk_gla_intra
    (gla.tile) for gc and a, chunk_gla_bwd_da for dA,
    chunk_gla_bwd_dqk_intra for dqi and dki, chunk_gla_bwd_dqkg for dq, dk,
    dg and chunk_gla_bwd_dv for dv; each gradient against the float64
    adjoint (reference_bwd)."""
    (B, T, H, K, V, dt, gt, use_h0, use_dht, gate_kind, scale, defs) = case
    rng = np.random.default_rng(1000 + seed)
    q, k, v, g, h0 = make_case(rng, B, T, H, K, V, dt, gt, use_h0, gate_kind)
    do, dht = make_grads(rng, B, T, H, K, V, dt, use_dht)
    chunk = defs.get("CHUNK", 64)
    d = os.path.join(tmp, f"bwd{seed}")
    _, _, hs_ref = write_inputs(d, q, k, v, g, h0, scale, chunk)
    refs = write_bwd(d, q, k, v, g, h0, scale, chunk, do, dht)
    refs["hs"] = hs_ref
    f = {n: os.path.join(d, n + ".npy") for n in ("q", "k", "v", "g", "h0", "do", "dht")}
    common = {"K": K, "V": V, "DT": dt, "GT": gt, "CHUNK": chunk}
    pick = lambda *names: {n: x for n, x in defs.items() if n in names}
    state_defs = {**common, "USE_H0": "true" if use_h0 else "false",
                  **pick("BLOCK_V", "WARPS", "BLOCK_T")}
    nt = -(-T // chunk)
    dims = {"B": B, "T": T, "H": H, "N0": B if use_h0 else 0, "NT": nt}
    got = {}
    ins = {n: f[n] for n in ("k", "v", "g") + (("h0",) if use_h0 else ())}
    out = tilec_run(tilec, KERNEL, "chunk_gla_states", state_defs, dims, None,
                    ins, ("hs", "ht"), d)
    got["hs"] = out["hs"]
    ins = {n: f[n] for n in ("q", "g", "do") + (("dht",) if use_dht else ())}
    out = tilec_run(tilec, BWD_KERNEL, "chunk_gla_bwd_dh",
                    {**state_defs, "USE_DHT": "true" if use_dht else "false"},
                    {**dims, "ND": B if use_dht else 0}, scale, ins,
                    ("dhs", "dh0"), d)
    got["dhs"] = out["dhs"]
    if use_h0:
        got["dh0"] = out["dh0"]
    gc = tilec_run(tilec, KERNEL, "chunk_gla_cumsum",
                   {"K": K, "CHUNK": chunk, "GT": gt}, {}, None,
                   {"g": f["g"]}, ("gc",), d)["gc"]
    a = tilec_run(tilec, KERNEL, "chunk_gla_intra",
                  {"K": K, "CHUNK": chunk, "DT": dt}, {}, None,
                  {"q": f["q"], "k": f["k"], "gc": gc}, ("a",), d)["a"]
    da = tilec_run(tilec, BWD_KERNEL, "chunk_gla_bwd_da",
                   {"V": V, "CHUNK": chunk, "DT": dt, **pick("BLOCK_V")}, {},
                   scale, {"v": f["v"], "do": f["do"]}, ("da",), d)["da"]
    kdefs = pick("BLOCK_K", "WARPS")
    intra = tilec_run(tilec, BWD_KERNEL, "chunk_gla_bwd_dqk_intra",
                      {"K": K, "CHUNK": chunk, "DT": dt, **kdefs}, {}, None,
                      {"q": f["q"], "k": f["k"], "gc": gc, "da": da},
                      ("dqi", "dki"), d)
    # dq, dk, dg per (chunk, key block); dv per (chunk, value block).
    ins = {n: f[n] for n in ("q", "k", "v", "do")}
    ins.update(gc=gc, hs=got["hs"], dhs=got["dhs"], **intra)
    out = tilec_run(tilec, BWD_KERNEL, "chunk_gla_bwd_dqkg",
                    {**common, **pick("BLOCK_V", "BLOCK_K", "WARPS")}, {},
                    scale, ins, ("dq", "dk", "dg"), d)
    got.update(out)
    ins = {"k": f["k"], "gc": gc, "a": a, "do": f["do"], "dhs": got["dhs"]}
    out = tilec_run(tilec, BWD_KERNEL, "chunk_gla_bwd_dv",
                    {"K": K, "V": V, "CHUNK": chunk, "DT": dt,
                     **pick("BLOCK_V", "BLOCK_K", "WARPS")}, {}, scale, ins,
                    ("dv",), d)
    got.update(out)
    # DT's tolerance (the dots round their operands to DT); dg is stored
    # in GT, so it takes the looser of DT's and GT's.
    tol = TOL[dt]
    tol_g = max(tol, TOL[gt])
    ok = True
    results = []
    for n in ("hs", "dhs", "dh0", "dq", "dk", "dv", "dg"):
        if n in got:
            e = rel_l2(np.load(got[n]), refs[n])
            t = tol_g if n == "dg" else tol
            ok &= e <= t
            results.append(f"{n} {e:.2e}" + (f" (tol {t:.0e})" if t != tol else ""))
    return ok, tol, results


def bwd_cases(quick):
    """(B, T, H, K, V, DT, GT, h0, dht, gates, scale, -D of the kernels)."""
    small = {"BLOCK_V": 16, "WARPS": 1}
    c = [
        (2, 37, 3, 8, 24, "bf16", "f32", True, True, "logsigmoid", -0.7, small),
        (1, 1, 2, 16, 16, "bf16", "f32", True, True, "logsigmoid", 0.25, small),
        (2, 64, 1, 16, 8, "f16", "f32", False, True, "mixed", -1.5, small),
        (1, 130, 2, 32, 64, "bf16", "bf16", False, False, "strong", 0.18, {"BLOCK_V": 32, "BLOCK_K": 16}),
        (2, 100, 1, 64, 64, "f16", "f32", True, False, "logsigmoid", 0.125, {}),
        (1, 100, 1, 100, 32, "bf16", "f32", True, True, "mixed", -0.1, {"CHUNK": 32, "BLOCK_V": 16, "BLOCK_K": 32}),
        (1, 37, 1, 128, 128, "bf16", "f32", True, True, "logsigmoid", 128 ** -0.5, {}),
        # Strong gates over 15 rows of a ragged sub-chunk: their sums pass
        # -88, so a factor taken across T's end would overflow.
        (1, 79, 1, 32, 32, "bf16", "f32", False, True, "strong", 0.3, {}),
    ]
    if not quick:
        c += [
            (3, 130, 1, 8, 100, "bf16", "f32", True, True, "strong", 0.35, {"BLOCK_V": 32}),
            (1, 64, 2, 64, 16, "bf16", "f16", False, True, "logsigmoid", -0.125, {"CHUNK": 16, "BLOCK_V": 16}),
            (1, 37, 1, 256, 64, "bf16", "f32", True, True, "logsigmoid", 0.0625, {"BLOCK_V": 16}),
            (1, 100, 1, 128, 256, "f16", "f32", False, True, "mixed", -0.09, {"BLOCK_V": 32}),
            (1, 130, 1, 100, 128, "f16", "bf16", True, False, "strong", 0.1, {}),
            (2, 100, 1, 256, 256, "bf16", "f32", True, True, "mixed", -0.0625, {"BLOCK_V": 16}),
        ]
    return c


def bwd_sweep(tilec, quick):
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed, case in enumerate(bwd_cases(quick), start=1):
            B, T, H, K, V, dt, gt, use_h0, use_dht, kind, scale, defs = case
            ok, tol, res = check_bwd_case(tilec, tmp, case, seed)
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} bwd B={B} T={T} H={H} K={K} V={V} "
                  f"{dt}/g {gt} h0={int(use_h0)} dht={int(use_dht)} {kind} "
                  f"scale={scale:.3g} {defs or ''} tol {tol:.0e}: " + ", ".join(res),
                  flush=True)
    print(f"gla_check bwd: {failed} failed")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("inputs")
    pi.add_argument("dir")
    for n, dflt in (("B", 2), ("T", 37), ("H", 2), ("K", 8), ("V", 24),
                    ("chunk", 64), ("seed", 1)):
        pi.add_argument("--" + n, type=int, default=dflt)
    pi.add_argument("--dtype", default="bf16", choices=TOL)
    pi.add_argument("--gdtype", default="f32", choices=TOL)
    pi.add_argument("--gates", default="logsigmoid",
                    choices=("logsigmoid", "strong", "mixed"))
    pi.add_argument("--scale", type=float, default=None,
                    help="default K^-0.5, fla's")
    pi.add_argument("--h0", action="store_true")
    pi.add_argument("--bwd", action="store_true",
                    help="also dO (and dht with --dht) and the gradients' references")
    pi.add_argument("--dht", action="store_true")
    ps = sub.add_parser("sweep")
    ps.add_argument("--tilec", default=os.environ.get("TILEC") or shutil.which("tilec"))
    ps.add_argument("--quick", action="store_true")
    pb = sub.add_parser("bwd-sweep")
    pb.add_argument("--tilec", default=os.environ.get("TILEC") or shutil.which("tilec"))
    pb.add_argument("--quick", action="store_true")
    sub.add_parser("fd-check")
    a = p.parse_args()
    if a.cmd == "fd-check":
        worst = max(fd_check(seed) for seed in (0, 1))
        print(f"gla_check fd: worst {worst:.2e}: {'PASS' if worst < 1e-6 else 'FAIL'}")
        return 0 if worst < 1e-6 else 1
    if a.cmd == "inputs":
        rng = np.random.default_rng(a.seed)
        q, k, v, g, h0 = make_case(rng, a.B, a.T, a.H, a.K, a.V, a.dtype,
                                   a.gdtype, a.h0, a.gates)
        scale = a.K ** -0.5 if a.scale is None else a.scale
        write_inputs(a.dir, q, k, v, g, h0, scale, a.chunk)
        if a.bwd:
            do, dht = make_grads(rng, a.B, a.T, a.H, a.K, a.V, a.dtype, a.dht)
            write_bwd(a.dir, q, k, v, g, h0, scale, a.chunk, do, dht)
        return 0
    if not a.tilec:
        sys.exit("gla_check.py: no tilec (give --tilec or put it on PATH)")
    if a.cmd == "bwd-sweep":
        return bwd_sweep(a.tilec, a.quick)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed, case in enumerate(cases(a.quick), start=1):
            B, T, H, K, V, dt, gt, use_h0, kind, scale = case[:10]
            ok, tol, res = check_case(a.tilec, tmp, case, seed)
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} B={B} T={T} H={H} K={K} V={V} "
                  f"{dt}/g {gt} h0={int(use_h0)} {kind} scale={scale:.3g} "
                  f"{case[10] or ''} tol {tol:.0e}: " + ", ".join(res))
    print(f"gla_check: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
