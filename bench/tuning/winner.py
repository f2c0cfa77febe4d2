#!/usr/bin/env python3
"""Prints the tilec arguments of one config of a bench sweep: the winner
that bench/tuning/tables/NAME/KERNEL.tuning.json records for the bucket of
DIMS (on DEVICE, the H100 by default), else config 0 (the first value of
each list, what an untuned launch runs). bench/ab/configs.sh compiles
these fixed configs with both compilers.

    python3 bench/tuning/winner.py NAME KERNEL M=4096,N=4096,K=4096 -- -D BLOCK_N=128,256 ...
"""
import json
import os
import sys

TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables")
DEVICE = os.environ.get("TEGULA_TUNED_DEVICE", "NVIDIA H100 80GB HBM3")


def bucket(dims):
    """Each size rounded up to a power of two (docs/tuning.md)."""
    return {k: 1 << (int(v) - 1).bit_length() for k, v in
            (item.split("=") for item in dims.split(","))}


def main():
    name, kernel, dims = sys.argv[1:4]
    args = sys.argv[5:]
    table = os.path.join(TABLES, name, kernel + ".tuning.json")
    winner = {}
    if os.path.exists(table):
        for e in json.load(open(table))["entries"]:
            if e["device"] == DEVICE and e["bucket"] == bucket(dims):
                winner = dict(item.split("=") for item in e["winner"].split(","))
    if not winner:
        print(f"note: {name}: no tuned entry at {dims} on {DEVICE}: config 0",
              file=sys.stderr)
    out = []
    for a in args:
        if "=" in a and a.split("=")[0].isidentifier() and out and out[-1] == "-D":
            key, values = a.split("=", 1)
            a = f"{key}={winner.get(key, values.split(',')[0])}"
        out.append(a)
    print(" ".join(out))


if __name__ == "__main__":
    main()
