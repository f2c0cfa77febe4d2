#!/usr/bin/env python3
"""Checks the rows tilec --run wrote for test/Frontend/math.tile against
Python's math module, rounded once to the stored dtype: each element must
be within ULPS units in the last place (the interpreter computes in double
and rounds once, so it is the correctly rounded value up to libm's own
last-bit differences).

  math_check.py X.npy P.npy OUT.npy F16.npy
"""
import ast
import math
import struct
import sys

FORMATS = {"<f2": "e", "<f4": "f"}


def load(path):
    """A version-1 .npy file of <f2 or <f4: (shape, flat values)."""
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    fmt = FORMATS[header["descr"]]
    shape = list(header["shape"])
    n = 1
    for e in shape:
        n *= e
    body = data[10 + hlen:]
    return shape, list(struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)]))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def f16(v):
    return struct.unpack("<e", struct.pack("<e", v))[0]


def ordered(v, half):
    """The float's bits as an integer that orders like the float."""
    if half:
        i = struct.unpack("<h", struct.pack("<e", v))[0]
        return -(i & 0x7FFF) if i < 0 else i
    i = struct.unpack("<i", struct.pack("<f", v))[0]
    return -(i & 0x7FFFFFFF) if i < 0 else i


def ulps(a, b, half=False):
    if math.isnan(a) or math.isnan(b):
        return 0 if math.isnan(a) and math.isnan(b) else 1 << 30
    return abs(ordered(a, half) - ordered(b, half))


def gelu(x):
    # The kernel's own expression, each op rounded to f32.
    half = f32(0.5 * x)
    e = f32(math.erf(f32(x * f32(0.7071067811865476))))
    return f32(half * f32(1.0 + e))


def divide(x, y):
    """x / y with IEEE's infinities for a zero divisor (x is not 0 here)."""
    if y == 0:
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def main():
    _, xs = load(sys.argv[1])
    _, ps = load(sys.argv[2])
    shape, out = load(sys.argv[3])
    _, halves = load(sys.argv[4])
    n = len(xs)
    rows = [
        ("tanh", lambda x, p: math.tanh(x)),
        ("erf", lambda x, p: math.erf(x)),
        ("sigmoid", lambda x, p: 1 / (1 + math.exp(-x))),
        ("floor", lambda x, p: math.floor(x)),
        ("ceil", lambda x, p: math.ceil(x)),
        ("log1p", lambda x, p: math.log1p(abs(x))),
        ("pow", lambda x, p: math.pow(abs(x), p)),
        ("gelu", None),
        # erf(x, precision = fast): about 2 ulp on the GPU, exact here.
        ("erf fast", lambda x, p: math.erf(x)),
        ("tanh fast", lambda x, p: math.tanh(x)),
        ("sigmoid fast", lambda x, p: 1 / (1 + math.exp(-x))),
        # div and reciprocal: the IEEE quotient, correctly rounded, in both
        # forms (div.full.f32 and rcp.approx.f32 are the GPU's).
        ("div", lambda x, p: divide(x, p)),
        ("div fast", lambda x, p: divide(x, p)),
        ("reciprocal", lambda x, p: divide(1.0, x)),
        ("reciprocal fast", lambda x, p: divide(1.0, x)),
    ]
    assert shape == [len(rows), n], shape
    failed = 0
    for r, (name, fn) in enumerate(rows):
        worst = 0
        for i, (x, p) in enumerate(zip(xs, ps)):
            want = gelu(x) if fn is None else f32(fn(x, p))
            got = out[r * n + i]
            d = ulps(got, want)
            worst = max(worst, d)
            if d > 1:
                print("%s(%r, %r): got %r, want %r" % (name, x, p, got, want))
                failed += 1
        print("%s: %d values, worst %d ulp" % (name, n, worst))
    worst = 0
    for x, got in zip(xs, halves):
        want = f16(math.tanh(f16(x)))
        d = ulps(got, want, True)
        worst = max(worst, d)
        failed += d > 1
    print("tanh f16: %d values, worst %d ulp" % (n, worst))
    sys.exit(1 if failed else 0)


main()
