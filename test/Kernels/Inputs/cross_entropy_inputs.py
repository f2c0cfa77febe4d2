#!/usr/bin/env python3
"""Target files for the GPU checks of kernels/cross_entropy.tile: targets
spread over the whole vocabulary (first and last column included) and some
rows ignored (-100, PyTorch's ignore_index). tile-run's random i32 inputs
lie in [-8, 8], which would only ever pick the first columns. Plain Python,
no numpy (write_npy of attention_inputs.py).

    cross_entropy_inputs.py OUT_DIR    writes targets-R-V.npy (int32) and
                                       targets64-R-V.npy (int64) per run"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_inputs import write_npy  # noqa: E402

# The checks' sizes, then the backward's timings in check-kernels.sh.
RUNS = [(67, 32003), (8, 128256), (5, 300), (4096, 32000), (1024, 128256)]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    for rows, vocab in RUNS:
        t = [rng.randrange(vocab) for _ in range(rows)]
        t[0], t[-1] = 0, vocab - 1
        if rows > 2:
            t[1] = -100
        write_npy(os.path.join(out, f"targets-{rows}-{vocab}.npy"), t)
        # The same as int64, PyTorch's (kernels built with TI = i64).
        write_npy(os.path.join(out, f"targets64-{rows}-{vocab}.npy"), t,
                  descr="<i8")


if __name__ == "__main__":
    main()
