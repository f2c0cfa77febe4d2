#!/usr/bin/env python3
"""Random valid Tegula programs, checked end to end against float64.

Each seed gives one kernel over row blocks of [M, N] f32 tensors: masked
(ragged) loads, an elementwise expression tree (+ - * max min where, exp,
sqrt, abs, casts to bf16 and back), nested fn calls (including `return
f(g(x))`), a loop over column blocks carrying a var, a runtime if on the
program id, a row reduction (sum, max or min), and an optional bf16 dot.
The same program is evaluated in float64 with numpy, blocked exactly as the
kernel is (masked elements load 0), at the block sizes the program is run
with.

  progen.py check SEED... [--keep DIR]   compile for sm_80 and sm_90a,
      assemble with ptxas (if on PATH), run in the interpreter at two block
      sizes, compare with float64; prints one line per seed, exits 1 on any
      failure (the failing program is kept in DIR, default ./progen-failures)
  progen.py emit SEED                    print the program
Tolerances: f32 arithmetic against float64 is held to a relative L2 error of
1e-5 (1e-4 when a bf16 dot accumulates in f32); bf16 casts are of exact f32
inputs, rounded the same way in the reference, so they add no slack.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TILEC = os.environ.get("TILEC", os.path.join(
    os.environ.get("TEGULA_BUILD_DIR", os.path.join(ROOT, "build")), "bin", "tilec"))


def bf16(a):
    """Round float32 values to bfloat16 (nearest even), as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


class Program:
    """One random program: its source and its float64 meaning."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.fns = []
        self.use_dot = self.rng.random() < 0.4
        self.reduce = self.rng.choice(["sum", "max", "min"])
        self.expr = self.gen_expr(self.rng.randint(2, 4))
        self.branch = self.gen_expr(2)
        self.wrap_fns()

    # Expressions over the leaves a, b (the loaded blocks), as (source, fn).
    def gen_expr(self, depth):
        r = self.rng
        if depth == 0 or r.random() < 0.2:
            return r.choice([("a", lambda a, b: a), ("b", lambda a, b: b),
                             ("0.5", lambda a, b: np.full_like(a, 0.5)),
                             ("cast<f32>(cast<bf16>(a))", lambda a, b: bf16(a.astype(np.float32)).astype(np.float64))])
        x, fx = self.gen_expr(depth - 1)
        y, fy = self.gen_expr(depth - 1)
        kind = r.choice(["+", "-", "*", "max", "min", "where", "exp", "sqrt", "abs"])
        if kind in "+-*":
            op = {"+": np.add, "-": np.subtract, "*": np.multiply}[kind]
            return "(%s %s %s)" % (x, kind, y), lambda a, b: op(fx(a, b), fy(a, b))
        if kind in ("max", "min"):
            op = np.maximum if kind == "max" else np.minimum
            return "%s(%s, %s)" % (kind, x, y), lambda a, b: op(fx(a, b), fy(a, b))
        if kind == "where":
            return ("where(%s > %s, %s, %s)" % (x, y, y, x),
                    lambda a, b: np.where(fx(a, b) > fy(a, b), fy(a, b), fx(a, b)))
        if kind == "exp":  # bounded argument
            return "exp(-abs(%s))" % x, lambda a, b: np.exp(-np.abs(fx(a, b)))
        if kind == "sqrt":
            return "sqrt(abs(%s) + 1.0)" % x, lambda a, b: np.sqrt(np.abs(fx(a, b)) + 1.0)
        return "abs(%s)" % x, lambda a, b: np.abs(fx(a, b))

    def wrap_fns(self):
        """Moves the expressions into nested fns: f1 calls f0, the kernel
        calls f1 (and f0 through `return f1(g(...))`)."""
        t = "tile<f32>[R, C]"
        p = "<R: int, C: int>"  # bound from the arguments' shapes
        self.fns.append("fn f0%s(a: %s, b: %s) -> %s { return %s; }" % (p, t, t, t, self.expr[0]))
        self.fns.append("fn neg%s(a: %s) -> %s { return 0.0 - a; }" % (p, t, t))
        self.fns.append("fn f1%s(a: %s, b: %s) -> %s { return neg(neg(f0(a, b))); }" % (p, t, t, t))
        self.fns.append("fn f2%s(a: %s, b: %s) -> %s { return %s; }" % (p, t, t, t, self.branch[0]))

    def source(self):
        lines = self.fns + [
            "kernel k<BM: int = 16, BN: int = 16>(x0: tensor<f32>[M, N], x1: tensor<f32>[M, N],",
            "    w: tensor<f32>[N, 32], y: mut tensor<f32>[M, BN], z: mut tensor<f32>[M],",
            "    d: mut tensor<f32>[M, 32]) grid [cdiv(M, BM)] {",
            "  let rows = program_id(0) * BM + arange(BM);",
            "  let cols = arange(BN);",
            "  var acc = zeros<f32>[BM, BN];",
            "  var dacc = zeros<f32>[BM, 32];",
            "  for n0 in range(0, N, BN) {",
            "    let a = load(x0[rows, n0 + cols]);",
            "    let b = load(x1[rows, n0 + cols]);",
            "    if program_id(0) % 2 == 0 {",
            "      acc += f1(a, b);",
            "    } else {",
            "      acc -= f2(a, b);",
            "    }",
        ]
        if self.use_dot:
            lines += [
                "    let wb = cast<bf16>(load(w[n0 + cols, 0 : 32]));",
                "    dacc = dot(cast<bf16>(a), wb, dacc);",
            ]
        lines += [
            "  }",
            "  store(y[rows, cols], acc);",
            "  store(z[rows], %s(acc, axis = 1));" % self.reduce,
        ]
        if self.use_dot:
            lines.append("  store(d[rows, 0 : 32], dacc);")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def reference(self, x0, x1, w, BM, BN):
        M, N = x0.shape
        nb = -(-N // BN)
        pad = lambda t: np.pad(t, ((0, 0), (0, nb * BN - N)))
        a_all, b_all = pad(x0).astype(np.float64), pad(x1).astype(np.float64)
        w_pad = np.pad(w, ((0, nb * BN - N), (0, 0)))
        acc = np.zeros((M, BN))
        dacc = np.zeros((M, 32))
        even = ((np.arange(M) // BM) % 2 == 0)[:, None]
        for blk in range(nb):
            a = a_all[:, blk * BN:(blk + 1) * BN]
            b = b_all[:, blk * BN:(blk + 1) * BN]
            acc += np.where(even, self.expr[1](a, b), -self.branch[1](a, b))
            if self.use_dot:
                ab = bf16(a.astype(np.float32)).astype(np.float64)
                wb = bf16(w_pad[blk * BN:(blk + 1) * BN].astype(np.float32)).astype(np.float64)
                dacc += ab @ wb
        red = {"sum": np.sum, "max": np.max, "min": np.min}[self.reduce](acc, axis=1)
        return {"y": acc, "z": red, "d": dacc if self.use_dot else None}


def save(path, array):
    np.save(path, np.ascontiguousarray(array))


def rel_l2(got, want):
    den = np.linalg.norm(want)
    return np.linalg.norm(got - want) / (den if den > 0 else 1.0)


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def check(seed, keep):
    p = Program(seed)
    src = p.source()
    failures = []
    work = tempfile.mkdtemp(prefix="progen-")
    try:
        path = os.path.join(work, "k.tile")
        open(path, "w").write(src)
        for target in ["sm_80", "sm_90a"]:
            out = os.path.join(work, target)
            r = run([TILEC, path, "--target", target, "-o", out, "-D", "BM=32", "-D", "BN=32"])
            if r.returncode != 0:
                failures.append("tilec %s: %s" % (target, r.stderr.strip()[:500]))
                continue
            if shutil.which("ptxas"):
                r = run(["ptxas", "-arch=" + target, os.path.join(out, "k.ptx"), "-o", os.devnull])
                if r.returncode != 0:
                    failures.append("ptxas %s: %s" % (target, r.stderr.strip()[:500]))
        data = np.random.default_rng(seed)
        M, N = int(data.integers(17, 70)), int(data.integers(9, 90))
        x0 = data.standard_normal((M, N)).astype(np.float32)
        x1 = data.standard_normal((M, N)).astype(np.float32)
        w = data.standard_normal((N, 32)).astype(np.float32)
        for name, value in [("x0", x0), ("x1", x1), ("w", w)]:
            save(os.path.join(work, name + ".npy"), value)
        for BM, BN in [(16, 16), (32, 64)]:
            outs = {t: os.path.join(work, "%s-%d-%d.npy" % (t, BM, BN)) for t in "yzd"}
            r = run([TILEC, path, "--run", "-D", "BM=%d" % BM, "-D", "BN=%d" % BN,
                     "--dims", "M=%d,N=%d" % (M, N)]
                    + sum([["--in", "%s=%s" % (n, os.path.join(work, n + ".npy"))] for n in ("x0", "x1", "w")], [])
                    + sum([["--out", "%s=%s" % (t, f)] for t, f in outs.items()], []))
            if r.returncode != 0:
                failures.append("interpreter BM=%d BN=%d: %s" % (BM, BN, r.stderr.strip()[:500]))
                continue
            want = p.reference(x0, x1, w, BM, BN)
            for t, f in outs.items():
                if want[t] is None:
                    continue
                got = np.load(f).astype(np.float64)
                tol = 1e-4 if t == "d" else 1e-5
                err = rel_l2(got, want[t])
                if not np.all(np.isfinite(got)) or err > tol:
                    failures.append("BM=%d BN=%d %s: rel_l2 %.3e > %.0e" % (BM, BN, t, err, tol))
    finally:
        if failures:
            os.makedirs(keep, exist_ok=True)
            open(os.path.join(keep, "seed-%d.tile" % seed), "w").write(src)
        shutil.rmtree(work, ignore_errors=True)
    print("seed %d: %s" % (seed, "PASS" if not failures else "FAIL " + "; ".join(failures)))
    return not failures


def main(argv):
    if len(argv) >= 2 and argv[0] == "emit":
        sys.stdout.write(Program(int(argv[1])).source())
        return 0
    if len(argv) < 2 or argv[0] != "check":
        sys.exit(__doc__)
    keep = os.path.join(os.getcwd(), "progen-failures")
    seeds = []
    rest = argv[1:]
    while rest:
        if rest[0] == "--keep":
            keep, rest = rest[1], rest[2:]
            continue
        if ".." in rest[0]:
            lo, hi = rest[0].split("..")
            seeds += range(int(lo), int(hi))
        else:
            seeds.append(int(rest[0]))
        rest = rest[1:]
    ok = sum(check(s, keep) for s in seeds)
    print("progen: %d of %d programs passed" % (ok, len(seeds)))
    return 0 if ok == len(seeds) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
