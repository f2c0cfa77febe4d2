#!/usr/bin/env python3
"""Random valid Tegula programs, checked end to end against float64.

Each seed gives one kernel over row blocks of ragged [M, N] tensors, built
from progen_ast.py's nodes: loads (implicitly masked at ragged edges, with
`mask =` and `other =`), from an f32 tensor and from one of template dtype
DT; lets of random elementwise trees (+ - * /, max, min, where on values and
on integer masks, exp exp2 log log2 sqrt rsqrt sin cos abs, round trips
through bf16/f16/i32/DT, row and column reductions broadcast back,
arange-, program_id- and size-variable-derived leaves); fns (with lets,
tuple results, explicit template arguments, nested calls and `return
f(g(x))`); a loop over column blocks (sometimes `pipelined(S)`) carrying
2-D, row and column vars, with updates inside runtime ifs (program id,
loop index, size variables) and compile-time ifs (a bool FLAG, block
sizes), an inner loop, f16/bf16 dots (acc += A @ W, and A @ trans(B))
with W loaded or popped from an explicit pipeline; stores (masked into a
read-write tensor, and cast to DT).

Every program is compiled for sm_90a and sm_80 to PTX (at different block
sizes), assembled with ptxas when it is on PATH, and run in the interpreter
(tilec --run) at two or three block sizes (-D BM, BN, DT, FLAG, S), each
output compared element by element with a float64 evaluation of the same
program within the error bound progen_ast.py derives (see its docstring).

  progen.py check SEEDS... [--keep DIR] [--avoid FEATURE,...]
      SEEDS are numbers or ranges LO..HI (HI excluded). Prints one line per
      seed, the seed and the reason of each failure, and a summary line;
      failing programs are kept in DIR (default ./progen-failures) with a
      .cmd file of the failing commands. Exits 1 on any failure.
      --perturb X scales the interpreter's outputs by 1 + X (the check's
      own test: a relative error of X must be caught)
  progen.py emit SEEDS... [--avoid FEATURE,...]   print programs and configs
FEATURES that --avoid leaves out (known bugs being fixed): nested-return
(`return f(g(x))`), pipe-push-in-if (a pipeline push inside a runtime if).
"""
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from progen_ast import (Bin, Call, Cast, Dot, Expand, Fn, IntLeaf, Lit, Load, Mask,  # noqa: E402
                        MaskWhere, MinMax, Pop, Reduce, Ref, RoundTrip, SAssign, SFor,
                        SIf, SLet, SPush, SStore, SText, Trans, Un, UNARY, V, Where, rnd)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TILEC = os.environ.get("TILEC", os.path.join(
    os.environ.get("TEGULA_BUILD_DIR", os.path.join(ROOT, "build")), "bin", "tilec"))
FEATURES = {"nested-return", "pipe-push-in-if"}
ITERS = 6       # most column blocks: N < 90 over BN >= 16
PARAM_B = 64.0  # fn arguments are kept within this bound
F16_B = 6e4     # casts to f16 (or DT) only of values bounded below f16's max


def tex(text, fn):
    return (text, fn)


class Ctx:
    """What an expression may name: full [BM, BN] tiles, [BM] rows, [BN]
    columns, integer leaves and masks, and whether fns may be called."""

    def __init__(self, full, rows=(), cols=(), ints=(), masks=(), fns=(), kernel=True):
        self.full, self.rows, self.cols = list(full), list(rows), list(cols)
        self.ints, self.masks, self.fns, self.kernel = list(ints), list(masks), list(fns), kernel

    def extend(self, **kw):
        c = Ctx(self.full, self.rows, self.cols, self.ints, self.masks, self.fns, self.kernel)
        for k, v in kw.items():
            getattr(c, k).extend(v)
        return c


class Program:
    """One random program: its source, run configurations and float64
    meaning."""

    def __init__(self, seed, avoid=()):
        self.rng = r = random.Random(seed)
        self.seed, self.avoid = seed, set(avoid)
        self.names = 0
        self.use_dt = r.random() < 0.7
        self.use_flag = r.random() < 0.5
        self.use_s = r.random() < 0.3
        self.pipelined = r.random() < 0.4
        self.dot = r.choice([None, None, "w", "w", "pipe", "trans"])
        self.use_c = r.random() < 0.6
        self.use_o = self.use_dt and r.random() < 0.6
        self.warps = r.choice([None, None, 1, 2, 4])
        if self.dot == "trans" and self.warps not in (1, 2):
            self.warps = r.choice([1, 2])  # [BM, BM] at BM = 16 splits over 2 warps at most
        self.fns = self.gen_fns()
        self.body = self.gen_body()
        self.configs = self.gen_configs()

    def name(self, prefix):
        self.names += 1
        return "%s%d" % (prefix, self.names)

    # Expressions.
    def gen(self, ctx, kind, depth, full=True):
        """A float expression of shape [BM, BN] (kind '2', `full`: exactly,
        else broadcastable) or [BM] (kind 'r')."""
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(ctx, kind, full)
        choice = r.choice(["bin", "bin", "bin", "minmax", "un", "un", "where", "round",
                           "reduce", "call", "maskwhere"])
        if choice == "bin":
            op = r.choice("+-*/")
            x, y = self.gen(ctx, kind, depth - 1, full), self.gen(ctx, kind, depth - 1, False)
            if r.random() < 0.5 and op != "/":
                x, y = y, x
            return self.tame(Bin(op, x, y))
        if choice == "minmax":
            return MinMax(r.choice(["max", "min"]), self.gen(ctx, kind, depth - 1, full),
                          self.gen(ctx, kind, depth - 1, False))
        if choice == "un":
            return self.tame(Un(r.choice(UNARY), self.gen(ctx, kind, depth - 1, full)))
        if choice == "where":
            return Where(self.gen(ctx, kind, depth - 2, False), self.gen(ctx, kind, depth - 2, False),
                         self.gen(ctx, kind, depth - 1, full), self.gen(ctx, kind, depth - 1, False))
        if choice == "round":
            x = self.gen(ctx, kind, depth - 1, full)
            dts = ["bf16"] + (["f16"] if x.b < F16_B else []) + (["i32"] if x.b < 1e6 else [])
            if self.use_dt and ctx.kernel and x.b < F16_B:
                dts.append("DT")
            return RoundTrip(r.choice(dts), x)
        if choice == "reduce" and ctx.kernel:
            op = r.choice(["sum", "max", "min"])
            if kind == "r":
                return self.tame(Reduce(op, self.gen(ctx, "2", depth - 1), 1, 64))
            if not full:
                axis = r.choice([0, 1])
                red = Reduce(op, self.gen(ctx, "2", depth - 1), axis, 64)
                return self.tame(Expand(red, 1 - axis))
        if choice == "call" and kind == "2" and ctx.fns:
            fn = r.choice([f for f in ctx.fns if f.nparams])
            args = [self.arg(self.gen(ctx, "2", depth - 1)) for _ in range(fn.nparams)]
            return Call(fn, args, "BM, BN" if ctx.kernel and r.random() < 0.2 else None)
        if choice == "maskwhere" and kind == "2" and ctx.masks:
            return MaskWhere(r.choice(ctx.masks), self.gen(ctx, kind, depth - 1, full),
                             self.gen(ctx, kind, depth - 1, False))
        return self.leaf(ctx, kind, full)

    def tame(self, x):
        """Keeps values far from f32 overflow: big trees go through sin."""
        return x if x.b < 1e5 else Un("sin", x)

    def arg(self, x):
        return x if x.b <= PARAM_B else Un("sin", x)

    def leaf(self, ctx, kind, full):
        r = self.rng
        if kind == "r":
            if full or r.random() < 0.6:
                opts = ctx.rows + [IntLeaf("rows", lambda e: e["rows"], 1 / 64, 2.0)]
                if ctx.full and ctx.kernel and r.random() < 0.3:
                    return Reduce(r.choice(["sum", "max", "min"]), r.choice(ctx.full), 1, 64)
                return r.choice(opts)
            return Lit(r.choice([0.5, 0.25, 1.5, 2.0, -0.75]))
        if full or r.random() < 0.5:
            return r.choice(ctx.full)
        opts = [Lit(r.choice([0.5, 0.25, 1.5, 2.0, -0.75, 3.0]))]
        opts += [Expand(x, 0) for x in ctx.rows] + [Expand(x, 1) for x in ctx.cols]
        opts += ctx.ints
        return r.choice(opts)

    # Functions.
    def gen_fns(self):
        r = self.rng
        fns = []

        def body_ctx(params):
            return Ctx([Ref(p, PARAM_B) for p in params], fns=list(fns), kernel=False)

        def make(name, params, nlets, nret):
            ctx = body_ctx(params)
            lets = []
            for i in range(nlets):
                e = self.tame(self.gen(ctx, "2", 2))
                lets.append(("t%d" % i, e))
                ctx.full.append(Ref("t%d" % i, e.b))
            ret = [self.tame(self.gen(ctx, "2", 2)) for _ in range(nret)]
            bound = max(e.b for e in ret)
            return Fn(name, len(params), lets, ret, lambda bs, b=bound: b, params)

        fns.append(make("f0", ["p0", "p1"], r.randint(0, 2), 1))
        # f1 calls f0; f2 returns f0(f1(...)): fn results as fn arguments.
        inner = Call(fns[0], [Un("sin", Ref("p0", PARAM_B)), Ref("p0", PARAM_B)])
        fns.append(Fn("f1", 1, [], [Bin("*", inner, Lit(0.5))], lambda bs, b=inner.b * 0.5: b, ["p0"]))
        if "nested-return" not in self.avoid:
            g = self.arg(Call(fns[1], [Ref("p0", PARAM_B)]))
            outer = r.choice([Call(fns[0], [g, Ref("p1", PARAM_B)]), Call(fns[0], [Ref("p1", PARAM_B), g]),
                              Call(fns[1], [self.arg(Call(fns[0], [Ref("p1", PARAM_B), Ref("p0", PARAM_B)]))])])
            fns.append(Fn("f2", 2, [], [outer], lambda bs, b=outer.b: b, ["p0", "p1"]))
        if r.random() < 0.5:
            fns.append(make("f3", ["p0", "p1", "p2"], r.randint(0, 1), 1))
        self.tuple_fn = make("ft", ["p0", "p1"], r.randint(0, 1), 2) if r.random() < 0.5 else None
        return fns

    # The kernel.
    def gen_body(self):
        r = self.rng
        rows = tex("rows", lambda e: e["rows"])
        cols = tex("cols", lambda e: e["cols"])
        body = []
        use_half = r.random() < 0.5
        masks = [Mask("(rows[:, None] % 2 == 0)", lambda e: (e["rows"] % 2 == 0)[:, None]),
                 Mask("(cols[None, :] >= 3)", lambda e: (e["cols"] >= 3)[None, :]),
                 Mask("(rows[:, None] < M - 1)", lambda e: (e["rows"] < e["M"] - 1)[:, None])]
        if use_half:
            body.append(SLet(["HALF"], Ref("BN / 2", 0)))
            masks.append(Mask("(cols[None, :] < HALF)", lambda e: (e["cols"] < e["BN"] // 2)[None, :]))
        if r.random() < 0.3:
            body.append(SText('static_assert(BN >= 16, "a dot needs BN >= 16");'))
        ints = [Expand(IntLeaf("cols", lambda e: e["cols"], 0.125, 8.0), 1),
                Expand(IntLeaf("rows", lambda e: e["rows"], 1 / 64, 2.0), 0),
                IntLeaf("pid", lambda e: e["pid"], 0.5, 4.0),
                IntLeaf("N", lambda e: e["N"], 1 / 64, 1.5)]
        fns = self.fns
        ctx = Ctx([], ints=ints, masks=masks, fns=fns)

        acc_init = r.choice([("zeros<f32>[BM, BN]", 0.0), ("full<f32>[BM, BN](0.5)", 0.5)])
        red_op = r.choice(["sum", "max", "min"])
        red_init = {"sum": 0.0, "max": -1000.0, "min": 1000.0}[red_op]
        body.append(SLet(["acc"], Fill(acc_init[0], lambda e: (e["BM"], e["BN"]), acc_init[1]), "var"))
        body.append(SLet(["racc"], Fill("full<f32>[BM](%s)" % repr(red_init), lambda e: (e["BM"],),
                                        red_init), "var"))
        body.append(SLet(["cacc"], Fill("zeros<f32>[BN]", lambda e: (e["BN"],), 0.0), "var"))
        bounds = {"acc": acc_init[1], "racc": abs(red_init), "cacc": 0.0}
        if self.dot:
            body.append(SLet(["dacc"], Fill("zeros<f32>[BM, 32]", lambda e: (e["BM"], 32), 0.0), "var"))
            bounds["dacc"] = 0.0
        if self.dot == "pipe":
            body.append(SText("let wp = pipeline<f32>[BN, 32](stages = 2);",
                              lambda e: e["pipes"].__setitem__("wp", [])))
            body.append(SPush("wp", Load("w", tex("0 : BN", lambda e: np.arange(e["BN"])),
                                         tex("0 : 32", lambda e: np.arange(32)))))

        # The loop over column blocks.
        n0cols = tex("n0 + cols", lambda e: e["n0"] + e["cols"])
        loop_masks = [Mask("((n0 + cols)[None, :] % 3 != 1)", lambda e: ((e["n0"] + e["cols"]) % 3 != 1)[None, :])]
        lctx = ctx.extend(masks=loop_masks, ints=[IntLeaf("n0", lambda e: e["n0"], 1 / 64, 1.5)])
        loop = []
        amask = None
        if r.random() < 0.5:
            amask = r.choice(lctx.masks)
            if r.random() < 0.4:
                other = r.choice(lctx.masks)
                op = r.choice(["&&", "||"])
                f1, f2 = amask.fn, other.fn
                amask = Mask("%s %s %s" % (amask.text, op, other.text),
                             (lambda e: f1(e) & f2(e)) if op == "&&" else (lambda e: f1(e) | f2(e)))
        acols = r.choice([n0cols, tex("n0 : n0 + BN", lambda e: e["n0"] + e["cols"])])
        aother = r.choice([None, None, 0.5, -1.0])
        loop.append(SLet(["a"], Load("x0", rows, acols, amask, aother)))
        x1 = Load("x1", rows, n0cols)
        loop.append(SLet(["b"], Cast("f32", x1) if self.use_dt else x1))
        lctx = lctx.extend(full=[Ref("a", 2.0), Ref("b", 2.0)])
        for _ in range(r.randint(0, 2)):
            n = self.name("t")
            e = self.tame(self.gen(lctx, "2", 3))
            loop.append(SLet([n], e))
            lctx = lctx.extend(full=[Ref(n, e.b)])
        if self.tuple_fn:
            p, q = self.name("p"), self.name("q")
            call = Call(self.tuple_fn, [Ref("a", 2.0), Ref("b", 2.0)])
            loop.append(SLet([p, q], call))
            b = max(e.b for e in self.tuple_fn.ret)
            lctx = lctx.extend(full=[Ref(p, b), Ref(q, b)])

        updates = self.gen_updates(lctx, red_op, bounds)
        if self.dot:
            updates.append(self.gen_dot(lctx, bounds))
        loop += self.wrap_ifs(updates, lctx, in_loop=True)
        if r.random() < 0.3:
            j = IntLeaf("j", lambda e: e["j"], 0.5, 1.0)
            x = self.tame(self.gen(lctx.extend(ints=[j]), "2", 2))
            count = r.randint(1, 3)
            loop.append(SFor("j", tex("0", lambda e: 0), tex(str(count), lambda e: count), None,
                             [SAssign("acc", "decay", x)]))
            bounds["acc"] += ITERS * count * x.b
        pipelined = None
        if self.pipelined:
            pipelined = "S" if self.use_s else str(r.choice([2, 3]))
        body.append(SFor("n0", tex("0", lambda e: 0), tex("N", lambda e: e["N"]),
                         tex("BN", lambda e: e["BN"]), loop, pipelined))

        # After the loop: the vars are leaves; stores.
        pctx = ctx.extend(full=[Ref("acc", bounds["acc"])], rows=[Ref("racc", bounds["racc"])],
                          cols=[Ref("cacc", bounds["cacc"])])
        if r.random() < 0.4:
            x = self.tame(self.gen(pctx, "2", 2))
            body += self.wrap_ifs([SAssign("acc", "+", x)], pctx, in_loop=False)
            pctx.full[0] = Ref("acc", bounds["acc"] + x.b)
        self.outputs = ["y", "z"]
        body.append(SStore("y", rows, cols, r.choice([Ref("acc", 0), self.gen(pctx, "2", 2)])))
        body.append(SStore("z", rows, None, r.choice([Ref("racc", 0), self.gen(pctx, "r", 2)])))
        if self.use_c:
            body.append(SLet(["c0"], Load("c", rows, cols)))
            cctx = pctx.extend(full=[Ref("c0", 2.0)])
            value = self.gen(cctx, "2", 2)
            body.append(SStore("c", rows, cols, value, r.choice(masks + [None])))
            self.outputs.append("c")
        if self.dot:
            body.append(SStore("d", rows, tex("0 : 32", lambda e: np.arange(32)), Ref("dacc", 0)))
            self.outputs.append("d")
        if self.use_o:
            x = self.gen(pctx, "2", 2)
            if x.b >= F16_B:
                x = Un("sin", x)
            body.append(SStore("o", rows, cols, Cast("DT", x)))
            self.outputs.append("o")
        return body

    def gen_updates(self, ctx, red_op, bounds):
        r = self.rng
        ups = []
        for _ in range(r.randint(1, 3)):
            target = r.choice(["acc", "acc", "racc", "cacc"])
            x = self.tame(self.gen(ctx, "2", 3))
            if target == "acc":
                op = r.choice(["+", "-", "max", "min", "decay"])
                ups.append(SAssign("acc", op, x))
                bounds["acc"] += ITERS * x.b
            elif target == "racc":
                red = Reduce(red_op, x, 1, 64)
                ups.append(SAssign("racc", "+" if red_op == "sum" else red_op, red))
                bounds["racc"] += ITERS * red.b
            else:
                red = Reduce("sum", x, 0, 128)
                ups.append(SAssign("cacc", "+", red))
                bounds["cacc"] += ITERS * red.b
        return ups

    def gen_dot(self, ctx, bounds):
        """acc += A @ W (W loaded or popped) or A @ trans(B), in f16/bf16."""
        r = self.rng
        dt = r.choice(["bf16", "f16"] + (["DT"] if self.use_dt else []))
        opnd = self.gen(ctx, "2", 2)
        if opnd.b >= F16_B / 64:
            opnd = Un("sin", opnd)
        a = Cast(dt, opnd)
        if self.dot == "trans":
            bt = Cast(dt, r.choice(ctx.full[:2]))
            red = Reduce("sum", Bin("*", Dot(a, Trans(bt), None, 64), Lit(0.125)), 1, 64)
            bounds["racc"] += ITERS * red.b
            if red.b > 1e5:
                red = Un("sin", red)
            return SAssign("racc", "max" if r.random() < 0.3 else "+", red)
        if self.dot == "pipe":
            w = Pop("wp", 2.0)
            stmts = [SLet(["wt"], w)]
            nxt = Load("w", tex("n0 + BN + cols", lambda e: e["n0"] + e["BN"] + e["cols"]),
                       tex("0 : 32", lambda e: np.arange(32)))
            if r.random() < 0.3 and "pipe-push-in-if" not in self.avoid:
                stmts.append(SIf(tex("n0 + BN < N", lambda e: e["n0"] + e["BN"] < e["N"]),
                                 [SPush("wp", nxt)], []))
            else:
                stmts.append(SPush("wp", nxt))
        else:
            stmts = [SLet(["wt"], Load("w", tex("n0 + cols", lambda e: e["n0"] + e["cols"]),
                                       tex("0 : 32", lambda e: np.arange(32))))]
        dot = Dot(a, Cast(dt, Ref("wt", 2.0)), Ref("dacc", 0), 64)
        bounds["dacc"] += ITERS * dot.b
        return Block(stmts + [SAssign("dacc", "=", dot)])

    def wrap_ifs(self, stmts, ctx, in_loop):
        """Puts some statements under runtime or compile-time ifs."""
        r = self.rng
        conds = [tex("pid % 2 == 0", lambda e: e["pid"] % 2 == 0),
                 tex("N > 40", lambda e: e["N"] > 40),
                 tex("M % 2 == 1", lambda e: e["M"] % 2 == 1),
                 tex("pid * BM + BM <= M", lambda e: e["pid"] * e["BM"] + e["BM"] <= e["M"]),
                 tex("num_programs(0) > 1", lambda e: e["P"] > 1)]
        if in_loop:
            conds += [tex("n0 == 0", lambda e: e["n0"] == 0),
                      tex("n0 + BN < N", lambda e: e["n0"] + e["BN"] < e["N"])]
        ct = [tex("BN >= 32", lambda e: e["BN"] >= 32), tex("BM == BN", lambda e: e["BM"] == e["BN"]),
              tex("BM * BN >= 1024", lambda e: e["BM"] * e["BN"] >= 1024)]
        if self.use_flag:
            ct += [tex("FLAG", lambda e: e["FLAG"])] * 2
        out = []
        for s in stmts:
            roll = r.random()
            if roll < 0.5 or isinstance(s, Block) and s.has_pipe():
                out.append(s)
                continue
            cond = r.choice(conds if roll < 0.75 else ct)
            other = []
            if r.random() < 0.5 and isinstance(s, SAssign) and s.name == "acc":
                other = [SAssign("acc", r.choice(["+", "-"]), self.tame(self.gen(ctx, "2", 2)))]
            out.append(SIf(cond, [s], other))
        return out

    def gen_configs(self):
        """-D values of each run: (32, 32) first (the agreement runs use
        it), then one or two more; dots need BM, BN >= 16."""
        r = self.rng
        sizes = [(16, 16), (16, 32), (32, 16), (16, 64), (64, 16), (32, 64), (64, 32)]
        picks = [(32, 32)] + r.sample(sizes, r.choice([1, 2]))
        configs = []
        for i, (bm, bn) in enumerate(picks):
            c = {"BM": bm, "BN": bn}
            if self.use_dt:
                c["DT"] = "bf16" if i == 0 else r.choice(["bf16", "f16"])
            if self.use_flag:
                c["FLAG"] = i == 0 or r.random() < 0.5
            if self.use_s:
                c["S"] = r.choice([2, 3])
            configs.append(c)
        return configs

    def source(self):
        tparams = ["BM: int = 16", "BN: int = 16"]
        if self.use_dt:
            tparams.append("DT: dtype = bf16")
        if self.use_flag:
            tparams.append("FLAG: bool = true")
        if self.use_s:
            tparams.append("S: int = 2")
        params = ["x0: tensor<f32>[M, N]", "x1: tensor<%s>[M, N]" % ("DT" if self.use_dt else "f32")]
        if self.dot in ("w", "pipe"):
            params.append("w: tensor<f32>[N, 32]")
        params += ["y: mut tensor<f32>[M, BN]", "z: mut tensor<f32>[M]"]
        if self.use_c:
            params.append("c: mut tensor<f32>[M, BN]")
        if self.dot:
            params.append("d: mut tensor<f32>[M, 32]")
        if self.use_o:
            params.append("o: mut tensor<DT>[M, BN]")
        head = "kernel k<%s>(%s)\n    grid [cdiv(M, BM)]" % (", ".join(tparams), ",\n    ".join(params))
        if self.warps:
            head += " warps %d" % self.warps
        if self.rng.random() < 0.3:
            head += " requires BN >= 16, N > 0"
        lines = [f.src() for f in self.fns]
        if self.tuple_fn:
            lines.append(self.tuple_fn.src())
        lines += ["// progen seed %d" % self.seed, head + " {", "  let pid = program_id(0);",
                  "  let rows = pid * BM + arange(BM);", "  let cols = arange(BN);"]
        for s in self.body:
            lines += s.src("  ")
        return "\n".join(lines + ["}"]) + "\n"

    def inputs(self, M, N, config, data):
        """The input arrays (f32) of one run."""
        ins = {"x0": data.uniform(-2, 2, (M, N)), "x1": data.uniform(-2, 2, (M, N))}
        if self.dot in ("w", "pipe"):
            ins["w"] = data.uniform(-2, 2, (N, 32))
        if self.use_c:
            ins["c"] = data.uniform(-2, 2, (M, config["BN"]))
        ins = {k: v.astype(np.float32) for k, v in ins.items()}
        if config.get("DT") == "f16":  # .npy holds f16 as <f2 (bf16 as <f4, rounded on read)
            ins["x1"] = ins["x1"].astype(np.float16)
        return ins

    def reference(self, ins, M, N, config):
        """The outputs in float64, as V (value, error bound)."""
        bm, bn = config["BM"], config["BN"]
        dt = config.get("DT", "f32")
        tensors = {k: (v.astype(np.float64),) for k, v in ins.items()}
        tensors["x1"] = (rnd(dt, tensors["x1"][0]),)
        shapes = {"y": (M, bn), "z": (M,), "c": (M, bn), "d": (M, 32), "o": (M, bn)}
        outputs = {}
        for t in self.outputs:
            v = np.full(shapes[t], np.nan)
            if t == "c":
                v = tensors["c"][0].copy()
            outputs[t] = (v, np.zeros(shapes[t]))
        P = -(-M // bm)
        for pid in range(P):
            env = dict(config, M=M, N=N, P=P, pid=pid, tensors=tensors, outputs=outputs, pipes={})
            env["rows"] = pid * bm + np.arange(bm)
            env["cols"] = np.arange(bn)
            env["BN / 2"] = bn // 2
            for s in self.body:
                s.run(env)
        return {t: V(*outputs[t]) for t in self.outputs}


class Fill:
    """zeros<...>[...] or full<...>[...](V)."""

    def __init__(self, text, shape, value):
        self.text, self.shape, self.value, self.b = text, shape, value, abs(value)

    def src(self):
        return self.text

    def ev(self, env):
        return V(np.full(self.shape(env), float(self.value)), 0.0)


class Block:
    """Statements kept together (under one if)."""

    def __init__(self, stmts):
        self.stmts = stmts

    def has_pipe(self):
        return any(isinstance(s, (SPush, SIf)) or isinstance(getattr(s, "expr", None), Pop)
                   for s in self.stmts)

    def src(self, ind):
        return sum((s.src(ind) for s in self.stmts), [])

    def run(self, env):
        for s in self.stmts:
            s.run(env)


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def defines(config):
    out = []
    for k, v in config.items():
        out += ["-D", "%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)]
    return out


def check(seed, keep, avoid=(), perturb=0.0):
    """Returns a list of failures (empty: the program passed). `perturb`
    scales what the interpreter computed by 1 + perturb: the check's own
    test, a stand-in for a miscompile."""
    p = Program(seed, avoid)
    src = p.source()
    failures, cmds = [], []
    work = tempfile.mkdtemp(prefix="progen-")
    path = os.path.join(work, "k.tile")
    try:
        open(path, "w").write(src)
        for target, config in zip(["sm_90a", "sm_80"], p.configs + p.configs):
            out = os.path.join(work, target)
            cmd = [TILEC, path, "--target", target, "-o", out] + defines(config)
            res = run(cmd)
            if res.returncode != 0:
                failures.append("tilec %s: %s" % (target, res.stderr.strip()[:600]))
                cmds.append(cmd)
                continue
            if shutil.which("ptxas"):
                cmd = ["ptxas", "-arch=" + target, os.path.join(out, "k.ptx"), "-o", os.devnull]
                res = run(cmd)
                if res.returncode != 0:
                    failures.append("ptxas %s: %s" % (target, res.stderr.strip()[:600]))
                    cmds.append(cmd)
        data = np.random.default_rng(seed)
        M, N = int(data.integers(17, 90)), int(data.integers(9, 90))
        for i, config in enumerate(p.configs):
            ins = p.inputs(M, N, config, data)
            args = [TILEC, path, "--run", "--dims", "M=%d,N=%d" % (M, N)] + defines(config)
            for k, v in ins.items():
                f = os.path.join(work, "%s-%d.npy" % (k, i))
                np.save(f, v)
                args += ["--in", "%s=%s" % (k, f)]
            outs = {t: os.path.join(work, "%s-%d-out.npy" % (t, i)) for t in p.outputs}
            args += sum([["--out", "%s=%s" % (t, f)] for t, f in outs.items()], [])
            tag = " ".join(defines(config)[1::2])
            res = run(args)
            if res.returncode != 0:
                failures.append("interpreter %s: %s" % (tag, res.stderr.strip()[:600]))
                cmds.append(args)
                continue
            want = p.reference(ins, M, N, config)
            for t in p.outputs:
                got = np.load(outs[t]).astype(np.float64) * (1 + perturb)
                w = want[t]
                bad = ~np.isfinite(got) | ~(np.abs(got - w.v) <= 2 * w.e)
                if bad.any():
                    at = tuple(int(i) for i in np.argwhere(bad)[0])
                    failures.append("%s M=%d N=%d: %s has %d of %d elements off, first at %s: "
                                    "got %r, float64 %r, bound %.3g" % (
                                        tag, M, N, t, int(bad.sum()), bad.size, at,
                                        got[at], w.v[at], 2 * w.e[at]))
                    cmds.append(args)
    finally:
        if failures:
            os.makedirs(keep, exist_ok=True)
            base = os.path.join(keep, "seed-%d" % seed)
            open(base + ".tile", "w").write(src)
            kept = os.path.join(keep, "seed-%d-inputs" % seed)
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(work, kept)
            with open(base + ".cmd", "w") as f:
                for c in cmds:
                    f.write(" ".join(shlex.quote(a.replace(work, kept)) for a in c) + "\n")
        shutil.rmtree(work, ignore_errors=True)
    return failures


def parse(argv):
    seeds, keep, avoid, perturb = [], os.path.join(os.getcwd(), "progen-failures"), set(), 0.0
    rest = list(argv)
    while rest:
        a = rest.pop(0)
        if a == "--keep":
            keep = rest.pop(0)
        elif a == "--perturb":
            perturb = float(rest.pop(0))
        elif a == "--avoid":
            avoid = set(rest.pop(0).split(","))
            if avoid - FEATURES:
                sys.exit("unknown feature(s) %s; known: %s" % (sorted(avoid - FEATURES), sorted(FEATURES)))
        elif ".." in a:
            lo, hi = a.split("..")
            seeds += range(int(lo), int(hi))
        else:
            seeds.append(int(a))
    return seeds, keep, avoid, perturb


def main(argv):
    if not argv or argv[0] not in ("check", "emit"):
        sys.exit(__doc__)
    seeds, keep, avoid, perturb = parse(argv[1:])
    if argv[0] == "emit":
        for s in seeds:
            p = Program(s, avoid)
            sys.stdout.write(p.source())
            print("// configs: " + "; ".join(" ".join(defines(c)) for c in p.configs))
        return 0
    failed = []
    for s in seeds:
        f = check(s, keep, avoid, perturb)
        print("seed %d: %s" % (s, "PASS" if not f else "FAIL\n  " + "\n  ".join(f)), flush=True)
        if f:
            failed.append(s)
    print("progen: %d of %d programs passed" % (len(seeds) - len(failed), len(seeds)))
    if failed:
        print("progen: failing seeds: %s (kept in %s)" % (" ".join(map(str, failed)), keep))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
