"""The program tree of progen.py: each node prints itself as Tegula source
and evaluates itself in float64 with a bound on how far the kernel's value
may lie from the float64 one.

A float value is a V: `v`, the float64 value, and `e`, a first-order bound
on |kernel - float64| per element. Every f32 operation adds U * |result|
(U = 2^-24, half an ulp) plus ATOM (2^-126, for subnormal results and
flushing to zero); transcendental functions add 4U (2 ulps, libdevice's
bound for expf, exp2f, logf, log2f, sinf, cosf, rsqrtf; the interpreter
rounds correctly). Errors of the operands propagate through each
operation's derivative on the interval. Rounding to bf16/f16/i32 is exact
where the whole interval v +- 2e rounds to one value, and otherwise costs
the width of the rounded interval. Sums of n terms add (n-1) U sum|x|
(any order of summation); a dot over K adds (K+1) U (|A||B| + |acc|) (the
products of f16/bf16 values are exact in f32). The check allows 2e: the
bound is first order, and gamma_n = nU/(1-nU) <= 2nU.
"""
import numpy as np

U = 2.0 ** -24
ATOM = 2.0 ** -126
MATH = 4 * U


class V:
    """A float value and its error bound."""

    def __init__(self, v, e):
        self.v = np.asarray(v, dtype=np.float64)
        self.e = np.broadcast_to(np.asarray(e, dtype=np.float64), self.v.shape).copy()


def rnd(dtype, x):
    """Round float64 values to dtype, monotonically (through f32, as the
    kernel's f32 values are)."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dtype == "f16":
        return x.astype(np.float32).astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        a = np.ascontiguousarray(x, dtype=np.float32)
        bits = a.view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if dtype == "i32":
        return np.trunc(x)
    raise ValueError(dtype)


def rounded(dtype, x):
    """x rounded to dtype, exact where the kernel's value cannot round
    differently."""
    r = rnd(dtype, x.v)
    lo, hi = rnd(dtype, x.v - 2 * x.e), rnd(dtype, x.v + 2 * x.e)
    return V(r, np.where(lo == hi, 0.0, hi - lo))


def lit(c):
    """A float literal as source (dyadic values only: exact in any float)."""
    return repr(float(c))


# Expressions. `b` is a static bound on |value| (inputs lie in [-2, 2]),
# used to keep values finite in f32 and f16.

class Ref:
    def __init__(self, name, b):
        self.name, self.b = name, b

    def src(self):
        return self.name

    def ev(self, env):
        return env[self.name]


class Lit:
    def __init__(self, c):
        self.c, self.b = c, abs(c)

    def src(self):
        return lit(self.c)

    def ev(self, env):
        return V(self.c, 0.0)


class IntLeaf:
    """cast<f32>(INT) * SCALE for an exact integer expression (arange,
    program_id, loop index): src text and a function of the environment."""

    def __init__(self, text, fn, scale, b):
        self.text, self.fn, self.scale, self.b = text, fn, scale, b

    def src(self):
        return "(cast<f32>(%s) * %s)" % (self.text, lit(self.scale))

    def ev(self, env):
        return V(np.asarray(self.fn(env), dtype=np.float64) * self.scale, 0.0)


class Bin:
    def __init__(self, op, x, y):
        self.op, self.x, self.y = op, x, y
        bx, by = x.b, y.b
        self.b = {"+": bx + by, "-": bx + by, "*": bx * by, "/": bx}[op]

    def src(self):
        if self.op == "/":
            return "(%s / (abs(%s) + 1.0))" % (self.x.src(), self.y.src())
        return "(%s %s %s)" % (self.x.src(), self.op, self.y.src())

    def ev(self, env):
        return binop(self.op, self.x.ev(env), self.y.ev(env))


def binop(op, x, y):
    if op == "+":
        r = x.v + y.v
        return V(r, x.e + y.e + U * np.abs(r) + ATOM)
    if op == "-":
        r = x.v - y.v
        return V(r, x.e + y.e + U * np.abs(r) + ATOM)
    if op == "*":
        r = x.v * y.v
        return V(r, np.abs(x.v) * y.e + np.abs(y.v) * x.e + x.e * y.e + U * np.abs(r) + ATOM)
    # x / (|y| + 1): the divisor is at least 1 in both computations.
    d = np.abs(y.v) + 1.0
    ed = y.e + U * d
    r = x.v / d
    return V(r, x.e + np.abs(r) * ed + x.e * ed + U * np.abs(r) + ATOM)


class MinMax:
    def __init__(self, op, x, y):
        self.op, self.x, self.y = op, x, y
        self.b = max(x.b, y.b)

    def src(self):
        return "%s(%s, %s)" % (self.op, self.x.src(), self.y.src())

    def ev(self, env):
        return minmax(self.op, self.x.ev(env), self.y.ev(env))


def monotone(f, x, *args):
    """f(x) for a function increasing in every element of x (max, min):
    the kernel's result lies between f(x - e) and f(x + e)."""
    r = f(x.v, *args)
    return V(r, np.maximum(f(x.v + x.e, *args) - r, r - f(x.v - x.e, *args)))


def minmax(op, x, y):
    f = np.maximum if op == "max" else np.minimum
    shape = np.broadcast_shapes(x.v.shape, y.v.shape)
    both = V(np.stack([np.broadcast_to(x.v, shape), np.broadcast_to(y.v, shape)]),
             np.stack([np.broadcast_to(x.e, shape), np.broadcast_to(y.e, shape)]))
    return monotone(np.max if op == "max" else np.min, both, 0)


UNARY = ["neg", "abs", "expm", "exp2m", "log1", "log21", "sqrt1", "rsqrt1", "sin", "cos"]


class Un:
    """Elementwise math on arguments kept in each function's tame domain."""
    FORMS = {"neg": "(0.0 - %s)", "abs": "abs(%s)", "expm": "exp(0.0 - abs(%s))",
             "exp2m": "exp2(0.0 - abs(%s))", "log1": "log(abs(%s) + 1.0)",
             "log21": "log2(abs(%s) + 1.0)", "sqrt1": "sqrt(abs(%s) + 1.0)",
             "rsqrt1": "rsqrt(abs(%s) + 1.0)", "sin": "sin(%s)", "cos": "cos(%s)"}

    def __init__(self, kind, x):
        self.kind, self.x = kind, x
        b = x.b
        self.b = {"neg": b, "abs": b, "expm": 1.0, "exp2m": 1.0, "log1": np.log(b + 1) + 1,
                  "log21": np.log2(b + 1) + 1, "sqrt1": np.sqrt(b + 1) + 1, "rsqrt1": 1.0,
                  "sin": 1.0, "cos": 1.0}[kind]

    def src(self):
        return self.FORMS[self.kind] % self.x.src()

    def ev(self, env):
        x = self.x.ev(env)
        k, v, e = self.kind, x.v, x.e
        if k == "neg":
            return V(-v, e)
        if k == "abs":
            return V(np.abs(v), e)
        if k in ("expm", "exp2m"):
            # |x| is exact in f32; 0 - |x| too.
            base = np.e if k == "expm" else 2.0
            r = base ** -np.abs(v)
            slope = np.log(base) * base ** -np.maximum(np.abs(v) - e, 0.0)
            return V(r, slope * e + MATH * r + ATOM)
        t = np.abs(v) + 1.0
        et = e + U * t
        if k == "log1":
            r = np.log(t)
            return V(r, et + MATH * np.abs(r) + ATOM)
        if k == "log21":
            r = np.log2(t)
            return V(r, et / np.log(2.0) + MATH * np.abs(r) + ATOM)
        if k == "sqrt1":
            r = np.sqrt(t)
            return V(r, 0.5 * et + U * r + ATOM)
        if k == "rsqrt1":
            r = 1.0 / np.sqrt(t)
            return V(r, 0.5 * et + MATH * r + ATOM)
        r = np.sin(v) if k == "sin" else np.cos(v)
        return V(r, e + MATH * np.abs(r) + ATOM)


class Where:
    """where(cx > cy, a, b); where the comparison is within error, either
    side may be taken."""

    def __init__(self, cx, cy, a, b):
        self.cx, self.cy, self.a, self.bb = cx, cy, a, b
        self.b = max(a.b, b.b)

    def src(self):
        return "where(%s > %s, %s, %s)" % (self.cx.src(), self.cy.src(), self.a.src(), self.bb.src())

    def ev(self, env):
        cx, cy, a, b = self.cx.ev(env), self.cy.ev(env), self.a.ev(env), self.bb.ev(env)
        gt = cx.v > cy.v
        # x > x is false however x was computed.
        slack = cx.e + cy.e if self.cx.src() != self.cy.src() else 0.0
        amb = (slack > 0) & (np.abs(cx.v - cy.v) <= 2 * slack)
        r = np.where(gt, a.v, b.v)
        e = np.where(amb, np.maximum(a.e, b.e) + np.abs(a.v - b.v), np.where(gt, a.e, b.e))
        return V(r, e)


class MaskWhere:
    """where(MASK, a, b) for an exact integer mask."""

    def __init__(self, mask, a, b):
        self.mask, self.a, self.bb = mask, a, b
        self.b = max(a.b, b.b)

    def src(self):
        return "where(%s, %s, %s)" % (self.mask.text, self.a.src(), self.bb.src())

    def ev(self, env):
        m = self.mask.fn(env)
        a, b = self.a.ev(env), self.bb.ev(env)
        return V(np.where(m, a.v, b.v), np.where(m, a.e, b.e))


class Cast:
    """cast<DT>(x); DT may be a template parameter's name."""

    def __init__(self, dtype, x):
        self.dtype, self.x = dtype, x
        self.b = x.b * 1.01 + 1

    def src(self):
        return "cast<%s>(%s)" % (self.dtype, self.x.src())

    def ev(self, env):
        return rounded(env.get(self.dtype, self.dtype), self.x.ev(env))


class RoundTrip:
    """cast<f32>(cast<DT>(x)), DT in bf16, f16, i32 (x * 4 for i32)."""

    def __init__(self, dtype, x):
        self.dtype, self.x = dtype, x
        self.b = (x.b * 4 if dtype == "i32" else x.b) * 1.01 + 1

    def src(self):
        inner = "(%s * 4.0)" % self.x.src() if self.dtype == "i32" else self.x.src()
        return "cast<f32>(cast<%s>(%s))" % (self.dtype, inner)

    def ev(self, env):
        x = self.x.ev(env)
        if self.dtype == "i32":
            x = V(x.v * 4.0, x.e * 4.0)
        return rounded(env.get(self.dtype, self.dtype), x)


class Reduce:
    def __init__(self, op, x, axis, n):
        self.op, self.x, self.axis, self.n = op, x, axis, n
        self.b = x.b * n if op == "sum" else x.b

    def src(self):
        return "%s(%s, axis = %d)" % (self.op, self.x.src(), self.axis)

    def ev(self, env):
        x = self.x.ev(env)
        n = x.v.shape[self.axis]
        if self.op == "sum":
            r = np.sum(x.v, axis=self.axis)
            e = np.sum(x.e, axis=self.axis) + (n - 1) * U * np.sum(np.abs(x.v), axis=self.axis)
            return V(r, e + ATOM)
        return monotone(np.max if self.op == "max" else np.min, x, self.axis)


class Expand:
    """x[:, None] (keep=0: rows) or x[None, :] (keep=1: columns)."""

    def __init__(self, x, keep):
        self.x, self.keep, self.b = x, keep, x.b

    def src(self):
        return "%s[%s]" % (self.x.src(), ":, None" if self.keep == 0 else "None, :")

    def ev(self, env):
        x = self.x.ev(env)
        s = (slice(None), None) if self.keep == 0 else (None, slice(None))
        return V(x.v[s], x.e[s])


class Trans:
    def __init__(self, x):
        self.x, self.b = x, x.b

    def src(self):
        return "trans(%s)" % self.x.src()

    def ev(self, env):
        x = self.x.ev(env)
        return V(x.v.T, x.e.T)


class Dot:
    def __init__(self, a, bm, acc, k):
        self.a, self.bm, self.acc = a, bm, acc
        self.b = a.b * bm.b * k + (acc.b if acc else 0)

    def src(self):
        args = [self.a.src(), self.bm.src()] + ([self.acc.src()] if self.acc else [])
        return "dot(%s)" % ", ".join(args)

    def ev(self, env):
        a, b = self.a.ev(env), self.bm.ev(env)
        k = a.v.shape[1]
        r = a.v @ b.v
        mag = np.abs(a.v) @ np.abs(b.v)
        e = np.abs(a.v) @ b.e + a.e @ np.abs(b.v) + a.e @ b.e
        if self.acc:
            acc = self.acc.ev(env)
            r, e, mag = r + acc.v, e + acc.e, mag + np.abs(acc.v)
        return V(r, e + (k + 1) * U * mag + ATOM)


class Load:
    """load(T[ROWS, COLS] (, mask = M)? (, other = V)?), with tensors
    held padded-free in env['tensors'] as float64 (already rounded to their
    dtype)."""

    def __init__(self, tensor, rows, cols, mask=None, other=None, b=2.0):
        self.tensor, self.rows, self.cols = tensor, rows, cols  # (text, fn)
        self.mask, self.other, self.b = mask, other, max(b, abs(other or 0))

    def src(self):
        s = "load(%s[%s, %s]" % (self.tensor, self.rows[0], self.cols[0])
        if self.mask:
            s += ", mask = %s" % self.mask.text
        if self.other is not None:
            s += ", other = %s" % lit(self.other)
        return s + ")"

    def ev(self, env):
        t = env["tensors"][self.tensor][0]
        ri, ci = np.asarray(self.rows[1](env)), np.asarray(self.cols[1](env))
        ok = ((ri >= 0) & (ri < t.shape[0]))[:, None] & ((ci >= 0) & (ci < t.shape[1]))[None, :]
        if self.mask:
            ok = ok & self.mask.fn(env)
        vals = t[np.clip(ri, 0, t.shape[0] - 1)][:, np.clip(ci, 0, t.shape[1] - 1)]
        return V(np.where(ok, vals, self.other or 0.0), 0.0)


class Pop:
    """PIPE.pop(): the oldest block pushed (a Load evaluated at push)."""

    def __init__(self, pipe, b):
        self.pipe, self.b = pipe, b

    def src(self):
        return "%s.pop()" % self.pipe

    def ev(self, env):
        return env["pipes"][self.pipe].pop(0)


class Call:
    def __init__(self, fn, args, explicit=None):
        self.fn, self.args, self.explicit = fn, args, explicit
        self.b = fn.bound([a.b for a in args])

    def src(self):
        t = "<%s>" % self.explicit if self.explicit else ""
        return "%s%s(%s)" % (self.fn.name, t, ", ".join(a.src() for a in self.args))

    def ev(self, env):
        return self.fn.call([a.ev(env) for a in self.args], env)


class Mask:
    """An exact boolean tile: source text and a function of the env."""

    def __init__(self, text, fn):
        self.text, self.fn = text, fn


class Fn:
    """fn NAME<R: int, C: int>(p0: tile<f32>[R, C], ...) with lets and one
    return (a tuple when `ret` has several expressions)."""

    def __init__(self, name, nparams, lets, ret, bound_fn, params=None):
        self.name, self.nparams, self.lets, self.ret = name, nparams, lets, ret
        self.bound = bound_fn
        self.params = params or ["p%d" % i for i in range(nparams)]

    def src(self):
        t = "tile<f32>[R, C]"
        ps = ", ".join("%s: %s" % (p, t) for p in self.params)
        rt = t if len(self.ret) == 1 else "(%s)" % ", ".join([t] * len(self.ret))
        body = ["  let %s = %s;" % (n, e.src()) for n, e in self.lets]
        r = self.ret[0].src() if len(self.ret) == 1 else "(%s)" % ", ".join(e.src() for e in self.ret)
        return "\n".join(["fn %s<R: int, C: int>(%s) -> %s {" % (self.name, ps, rt)] + body +
                         ["  return %s;" % r, "}"])

    def call(self, args, env):
        local = {k: env[k] for k in ("tensors", "pipes") if k in env}
        local.update({k: v for k, v in env.items() if isinstance(v, str)})  # dtypes
        local.update(zip(self.params, args))
        for n, e in self.lets:
            local[n] = e.ev(local)
        vals = [e.ev(local) for e in self.ret]
        return vals[0] if len(vals) == 1 else vals


# Statements: src(indent) -> lines; run(env) evaluates in the reference.

class SLet:
    def __init__(self, names, expr, kw="let"):
        self.names, self.expr, self.kw = names, expr, kw

    def src(self, ind):
        n = self.names[0] if len(self.names) == 1 else "(%s)" % ", ".join(self.names)
        return ["%s%s %s = %s;" % (ind, self.kw, n, self.expr.src())]

    def run(self, env):
        v = self.expr.ev(env)
        if len(self.names) == 1:
            env[self.names[0]] = v
        else:
            env.update(zip(self.names, v))


class SAssign:
    """NAME op= EXPR, or NAME = max/min(NAME, EXPR), or NAME = NAME * 0.5 + EXPR."""

    def __init__(self, name, op, expr):
        self.name, self.op, self.expr = name, op, expr

    def src(self, ind):
        n, e = self.name, self.expr.src()
        if self.op in ("max", "min"):
            return ["%s%s = %s(%s, %s);" % (ind, n, self.op, n, e)]
        if self.op == "=":
            return ["%s%s = %s;" % (ind, n, e)]
        if self.op == "decay":
            return ["%s%s = %s * 0.5 + %s;" % (ind, n, n, e)]
        return ["%s%s %s= %s;" % (ind, n, self.op, e)]

    def run(self, env):
        old, x = env[self.name], self.expr.ev(env)
        if self.op in ("max", "min"):
            new = minmax(self.op, old, x)
        elif self.op == "=":
            new = x
        elif self.op == "decay":
            new = binop("+", V(old.v * 0.5, old.e * 0.5), x)
        else:
            new = binop(self.op, old, x)
        env[self.name] = V(np.broadcast_to(new.v, old.v.shape), np.broadcast_to(new.e, old.v.shape))


class SFor:
    def __init__(self, var, start, end, step, body, pipelined=None):
        self.var, self.start, self.end, self.step = var, start, end, step  # (text, fn)
        self.body, self.pipelined = body, pipelined

    def src(self, ind):
        head = "%sfor %s in range(%s, %s%s)" % (ind, self.var, self.start[0], self.end[0],
                                                 ", " + self.step[0] if self.step else "")
        if self.pipelined:
            head += " pipelined(%s)" % self.pipelined
        return [head + " {"] + sum((s.src(ind + "  ") for s in self.body), []) + [ind + "}"]

    def run(self, env):
        step = self.step[1](env) if self.step else 1
        for i in range(self.start[1](env), self.end[1](env), step):
            env[self.var] = i
            for s in self.body:
                s.run(env)


class SIf:
    """if COND { ... } else { ... }; cond is (text, fn(env) -> bool), a
    runtime scalar or a compile-time condition on template parameters."""

    def __init__(self, cond, then, other):
        self.cond, self.then, self.other = cond, then, other

    def src(self, ind):
        lines = ["%sif %s {" % (ind, self.cond[0])] + sum((s.src(ind + "  ") for s in self.then), [])
        if self.other:
            lines += [ind + "} else {"] + sum((s.src(ind + "  ") for s in self.other), [])
        return lines + [ind + "}"]

    def run(self, env):
        saved = set(env)
        for s in (self.then if self.cond[1](env) else self.other or []):
            s.run(env)
        for k in set(env) - saved:  # branch scopes end here
            del env[k]


class SPush:
    def __init__(self, pipe, load):
        self.pipe, self.load = pipe, load

    def src(self, ind):
        return ["%s%s.push(%s);" % (ind, self.pipe, self.load.src()[len("load("):-1])]

    def run(self, env):
        env["pipes"][self.pipe].append(self.load.ev(env))


class SText:
    """A line with no effect on values (static_assert, a pipeline's
    creation)."""

    def __init__(self, text, action=None):
        self.text, self.action = text, action

    def src(self, ind):
        return [ind + self.text]

    def run(self, env):
        if self.action:
            self.action(env)


class SStore:
    """store(T[ROWS(, COLS)?], VALUE (, mask = M)?) into env['outputs']."""

    def __init__(self, tensor, rows, cols, value, mask=None):
        self.tensor, self.rows, self.cols, self.value, self.mask = tensor, rows, cols, value, mask

    def src(self, ind):
        idx = self.rows[0] + (", " + self.cols[0] if self.cols else "")
        m = ", mask = %s" % self.mask.text if self.mask else ""
        return ["%sstore(%s[%s], %s%s);" % (ind, self.tensor, idx, self.value.src(), m)]

    def run(self, env):
        out_v, out_e = env["outputs"][self.tensor]
        val = self.value.ev(env)
        ri = np.asarray(self.rows[1](env))
        ok = (ri >= 0) & (ri < out_v.shape[0])
        if self.cols:
            ci = np.asarray(self.cols[1](env))
            ok = ok[:, None] & ((ci >= 0) & (ci < out_v.shape[1]))[None, :]
        if self.mask:
            ok = ok & self.mask.fn(env)
        v, e = np.broadcast_to(val.v, ok.shape), np.broadcast_to(val.e, ok.shape)
        idx = np.nonzero(ok)
        if self.cols:
            target = (ri[idx[0]], ci[idx[1]])
        else:
            target = (ri[idx[0]],)
        out_v[target], out_e[target] = v[idx], e[idx]
