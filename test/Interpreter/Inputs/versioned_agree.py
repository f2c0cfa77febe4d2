"""Runs a kernel as written (tilec --run) and after loop versioning
(tile-opt, then tile-interp on the versioned IR) on the same random inputs,
and says whether every output agrees bit for bit. The interpreter fails a
push marked `inside` that reads outside its tensor, so a wrong split point
shows up as an error as well as a difference.

  versioned_agree.py DIR SOURCE KERNEL OUTPUT DIMS [DIMS ...]
"""
import subprocess
import sys

import numpy as np

PIPELINE = "builtin.module(func.func(tile-pipeline-loops,tile-version-loops))"


def run(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


def main():
    work, source, kernel, output, *cases = sys.argv[1:]
    ir, versioned = f"{work}/{kernel}.mlir", f"{work}/{kernel}-versioned.mlir"
    run("tilec", source, "-k", kernel, "--emit", "tile", "-o", ir)
    run("tile-opt", ir, f"--pass-pipeline={PIPELINE}", "-o", versioned)
    marked = open(versioned).read().count(" inside ")
    print(f"{kernel}: {marked} pushes marked inside")
    for dims in cases:
        written, split = f"{work}/{kernel}-a.npy", f"{work}/{kernel}-b.npy"
        common = ["--dims", dims, "--seed", "5", "--out", f"{output}={written}"]
        run("tilec", source, "-k", kernel, "--run", *common)
        common[-1] = f"{output}={split}"
        run("tile-interp", versioned, *common)
        same = np.array_equal(np.load(written), np.load(split), equal_nan=True)
        print(f"{kernel} {dims}: {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
