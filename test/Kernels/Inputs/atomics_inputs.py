#!/usr/bin/env python3
"""Inputs and numpy references for the GPU checks of atomic_add/atomic_max
(test/Frontend/atomics.tile's kernels), at sizes where thousands of threads
of many programs hit the same elements:

    atomics_inputs.py OUT_DIR

hist: 100003 values in [0, 12) into 8 bins (values 8-11 dropped, as an
out-of-bounds store is); total: small integers (every partial sum is exact
in f32, so any order gives the same result) into one element, plus one add
per program; fmax: f32 max with negative values, -0.0 and +0.0; imax: i32
max; hadd: f16 adds that round after each add."""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(16)
    files = {}

    n = 100003
    x = rng.integers(0, 12, size=n).astype(np.int32)
    h = rng.integers(-5, 5, size=8).astype(np.int32)
    files["hist-x"] = x
    files["hist-h"] = h
    files["hist-ref"] = h + np.bincount(x[x < 8], minlength=8).astype(np.int32)

    v = rng.integers(0, 8, size=n).astype(np.float32)
    t = np.array([0.5, 0.25], dtype=np.float32)
    programs = -(-n // 64)
    files["total-v"] = v
    files["total-t"] = t
    files["total-ref"] = np.array(
        [t[0] + v[1::2].sum(dtype=np.float64), t[1] + programs], np.float32)

    # All negative: bin 3 keeps -0.0 until the last add of +0.0.
    y = (-np.abs(rng.standard_normal(50)) - 0.01).astype(np.float32)
    m = np.array([-100.0, -0.75, 5.0, -0.0], dtype=np.float32)
    ref = m.copy()
    for i in range(50):
        ref[i % 4] = max(ref[i % 4], y[i])
    ref[3] = max(ref[3], 0.0)  # +0 replaces -0
    files["fmax-y"] = y
    files["fmax-m"] = m
    files["fmax-ref"] = ref

    g = np.array([-9, -9, 0, -9, -9, -9, 7, -9], dtype=np.int32)
    i = np.arange(32)
    gref = g.copy()
    np.maximum.at(gref, i % 8, (-(i // 8) - 1).astype(np.int32))
    files["imax-g"] = g
    files["imax-ref"] = gref

    # 2048 + 1 is not an f16: each of the 8 adds of 1.0 rounds back to 2048.
    files["hadd-a"] = np.array([2048.0, 0.0], dtype=np.float16)
    files["hadd-ref"] = np.array([2048.0, 4.0], dtype=np.float16)

    for name, value in files.items():
        np.save(os.path.join(out, name + ".npy"), value)


if __name__ == "__main__":
    main()
