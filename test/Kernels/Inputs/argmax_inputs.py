#!/usr/bin/env python3
"""Inputs and numpy references for the GPU checks of argmax/argmin
(test/Frontend/argmax.tile's kernel): x with ties and NaNs, and the four
index outputs, for R rows.

    argmax_inputs.py OUT_DIR    writes x.npy, imax.npy, imin.npy, cmax.npy,
                                cmin.npy (R = 1000)"""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    rows = 1000
    x = rng.integers(-3, 4, size=(rows, 64)).astype(np.float32)
    x[3, 10] = x[3, 40] = x[999, 63] = x[500, 0] = np.nan
    first = x[:16]
    refs = {
        "x": x,
        "imax": np.argmax(x, 1),
        "imin": np.argmin(x, 1),
        "cmax": np.argmax(first, 0),
        "cmin": np.argmin(np.nan_to_num(first, nan=9), 0),
    }
    for name, value in refs.items():
        if name != "x":
            value = value.astype(np.int32)
        np.save(os.path.join(out, name + ".npy"), value)


if __name__ == "__main__":
    main()
