#!/usr/bin/env python3
"""Inputs and numpy references for the GPU checks of cumsum, reshape and
permute, and the f32 (tf32) dot (test/Frontend/cumsum.tile,
reshape-permute.tile, dot-tf32.tile; kernels/matmul.tile with DT=f32).

    tile_ops_inputs.py OUT_DIR

writes, under OUT_DIR:
  scan-f32/, scan-i32/  x.npy [R, 64], v.npy [1024], rows, cols, flat
                        (R = 1000; cols is the scan of each 16-row block)
  shapes/               x, y and the six reshaped or permuted outputs
  dot-ragged/           a, b, c (tf32-emulated), ieee (one float32 FMA per
                        k, in order), M, N, K = 333, 190, 271
  dot-eye/              a [333, 64], eye [64, 64], rounded (= tf32(a))
  matmul/               a, b, c for M, N, K = 256, 192, 320"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Frontend", "Inputs"))
from tf32_ref import fma_product, to_tf32  # noqa: E402


def save(directory, **arrays):
    os.makedirs(directory, exist_ok=True)
    for name, value in arrays.items():
        np.save(os.path.join(directory, name + ".npy"), value)


def scans(out, rng):
    rows = 1000
    for dt in ("f32", "i32"):
        if dt == "f32":
            x = rng.standard_normal((rows, 64)).astype(np.float32)
            v = rng.standard_normal(1024).astype(np.float32)
            acc = np.float32
        else:
            x = rng.integers(-2**31, 2**31, size=(rows, 64),
                             dtype=np.int64).astype(np.int32)
            v = rng.integers(-1000, 1000, size=1024).astype(np.int32)
            acc = np.int32
        cols = np.concatenate([np.cumsum(x[i:i + 16], 0, dtype=acc)
                               for i in range(0, rows, 16)])
        save(os.path.join(out, "scan-" + dt), x=x, v=v,
             rows=np.cumsum(x, 1, dtype=acc), cols=cols,
             flat=np.cumsum(v, dtype=acc))


def shapes(out, rng):
    x = rng.standard_normal((16, 64)).astype(np.float32)
    y = rng.standard_normal((4, 8, 16)).astype(np.float32)
    save(os.path.join(out, "shapes"), x=x, y=y, flat=x.reshape(1024),
         square=x.reshape(32, 32), tr=x.T.copy(),
         p3=y.transpose(2, 0, 1).copy(), r3=y.reshape(32, 16),
         back=y.transpose(1, 2, 0).reshape(8, 64))


def tf32_product(a, b):
    """a @ b of the tf32-rounded operands, accumulated in float64 (the
    GPU's order of f32 additions is its own; this is within f32 rounding
    of any order)."""
    return (to_tf32(a).astype(np.float64) @
            to_tf32(b).astype(np.float64)).astype(np.float32)


def dots(out, rng):
    m, n, k = 333, 190, 271
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    save(os.path.join(out, "dot-ragged"), a=a, b=b, c=tf32_product(a, b),
         ieee=fma_product(a, b))
    a = rng.standard_normal((m, 64)).astype(np.float32)
    bits = a.view(np.uint32)
    # Exact ties (low 13 bits 0x1000) round away from zero.
    bits[:, :4] = (bits[:, :4] & np.uint32(0xFFFFE000)) | np.array(
        [0x1000, 0x0FFF, 0x1001, 0x1FFF], np.uint32)
    save(os.path.join(out, "dot-eye"), a=a, eye=np.eye(64, dtype=np.float32),
         rounded=to_tf32(a))
    m, n, k = 256, 192, 320
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    save(os.path.join(out, "matmul"), a=a, b=b, c=tf32_product(a, b))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(12)
    scans(out, rng)
    shapes(out, rng)
    dots(out, rng)


if __name__ == "__main__":
    main()
