#!/usr/bin/env python3
"""Target files for the GPU checks of kernels/cross_entropy.tile: targets
spread over the whole vocabulary (first and last column included) and some
rows ignored (-100, PyTorch's ignore_index). tile-run's random i32 inputs
lie in [-8, 8], which would only ever pick the first columns.

    cross_entropy_inputs.py OUT_DIR    writes targets-R-V.npy for each run"""
import os
import sys

import numpy as np

RUNS = [(67, 32003), (8, 128256), (5, 300)]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    for rows, vocab in RUNS:
        t = rng.integers(0, vocab, size=rows).astype(np.int32)
        t[0], t[-1] = 0, vocab - 1
        if rows > 2:
            t[1] = -100
        np.save(os.path.join(out, f"targets-{rows}-{vocab}.npy"), t)


if __name__ == "__main__":
    main()
