#!/usr/bin/env python3
"""Inputs and numpy references for the GPU checks of 2-D gathers
(test/Frontend/gather2d.tile's kernels), at sizes past one program:

    gather_inputs.py OUT_DIR

gather2: 1000 x 29 ids into a 5000-element x, some out of range (they read
0); emb: 333 x 8 ids into a 4000 x 32 table."""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    g = np.random.default_rng(7)
    x = g.standard_normal(5000).astype(np.float32)
    idx = g.integers(-50, 5050, size=(1000, 29)).astype(np.int32)
    ok = (idx >= 0) & (idx < x.size)
    y = np.where(ok, x[np.clip(idx, 0, x.size - 1)], 0).astype(np.float32)
    w = g.standard_normal((4000, 32)).astype(np.float32)
    ids = g.integers(0, 4000, size=(333, 8)).astype(np.int32)
    files = {"x": x, "idx": idx, "y": y, "w": w, "ids": ids, "e": w[ids]}
    for name, value in files.items():
        np.save(os.path.join(out, name + ".npy"), value)


if __name__ == "__main__":
    main()
