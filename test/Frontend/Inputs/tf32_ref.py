#!/usr/bin/env python3
"""Inputs and numpy references for f32 (tf32) dot tests.

    tf32_ref.py OUT_DIR M N K SEED

writes a.npy [M, K], b.npy [K, N] (standard normal, with rounding ties and
near-ties in a's low bits) and
  c.npy      a @ b with both operands rounded to tf32 as cvt.rna.tf32.f32
             does (to nearest, ties away from zero, 10 mantissa bits) and
             products summed in float32 in order of k, as the interpreter;
  exact.npy  a @ b in float64 without rounding (tf32 must differ from it);
  ieee.npy   a @ b as one correctly rounded float32 FMA per k, in order;
and, for the rounding alone, eye.npy (the [K, K] identity) and
rounded.npy (a rounded to tf32, = dot(a, eye))."""
import os
import sys

import numpy as np


def to_tf32(x):
    """cvt.rna.tf32.f32 on finite float32 values."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x1000) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32)


def fma32(a, b, c):
    """fmaf(a, b, c) elementwise on float32 arrays, correctly rounded: the
    product is exact in float64, the sum's rounding error is recovered
    (TwoSum), and it decides the one case where rounding the float64 sum
    to float32 is wrong: a sum exactly halfway between two float32s."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c = c.astype(np.float64)
    s = p + c
    bp = s - c
    e = (p - bp) + (c - (s - bp))
    r = s.astype(np.float32)
    up = np.nextafter(r, np.float32(np.inf))
    down = np.nextafter(r, np.float32(-np.inf))
    # s halfway between r and a neighbour: the error says which side the
    # exact sum is on.
    half_up = (up.astype(np.float64) + r) / 2 == s
    half_down = (down.astype(np.float64) + r) / 2 == s
    r = np.where(half_up & (e > 0), up, r)
    r = np.where(half_down & (e < 0), down, r)
    return r.astype(np.float32)


def fma_product(a, b):
    """a @ b as an ieee dot computes it: one float32 FMA per k, in order."""
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for kk in range(a.shape[1]):
        c = fma32(a[:, kk:kk + 1], b[kk:kk + 1, :], c)
    return c


def main():
    out, m, n, k, seed = sys.argv[1], *map(int, sys.argv[2:6])
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    # Low 13 bits: exact ties (0x1000) round away from zero, either side of
    # them to the nearest.
    bits = a.view(np.uint32)
    low = np.array([0x1000, 0x0FFF, 0x1001, 0x1FFF, 0x0000], np.uint32)
    bits[:, :5] = (bits[:, :5] & np.uint32(0xFFFFE000)) | low
    a = bits.view(np.float32)
    ta, tb = to_tf32(a), to_tf32(b)
    c = np.zeros((m, n), np.float32)
    for kk in range(k):
        c = (c + np.outer(ta[:, kk], tb[kk, :])).astype(np.float32)
    refs = {
        "a": a,
        "b": b,
        "c": c,
        "exact": (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32),
        "ieee": fma_product(a, b),
        "eye": np.eye(k, dtype=np.float32),
        "rounded": ta,
    }
    for name, value in refs.items():
        np.save(os.path.join(out, name + ".npy"), value)


if __name__ == "__main__":
    main()
