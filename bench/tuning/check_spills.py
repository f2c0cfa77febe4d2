#!/usr/bin/env python3
"""Prints registers and spill bytes of every config of the bench's swept
bundles (ptxas -v through tilec) and fails when a config spills in the code
the bench's shapes run: of a kernel with strided tensors, its unit-stride
variants (div16_unit, unit: the bench's tensors are contiguous, its sizes
multiples of 16 or, as Z = 4 is for div16's Z % 16, not); else the div16
variant where the bundle has one (every bench shape is a multiple of 16),
else the config itself. Spills of the other code beside spill-free timed
variants are listed, not fatal: only ragged sizes or other views run it.

    python3 bench/tuning/check_spills.py .device-bundle/bench
"""
import glob
import json
import os
import sys


def main():
    bench = sys.argv[1]
    bad = []
    for path in sorted(glob.glob(os.path.join(bench, "*", "*.json"))):
        if path.endswith(".tuning.json"):
            continue
        bundle = json.load(open(path))
        name = os.path.relpath(path, bench)
        for config in bundle.get("configs", []):
            if "spill_bytes" not in config:
                print(f"{name} {config['name']}: no ptxas figures "
                      "(ptxas not on PATH?)")
                continue
            variants = config.get("variants", [])
            timed = [v for v in variants if v["name"].endswith("unit")] or \
                [v for v in variants if v["name"] == "div16"] or [config]
            spills = max(v.get("spill_bytes", 0) for v in timed)
            line = (f"{name} {config['name']}: " + ", ".join(
                f"{v.get('registers')} registers, {v.get('spill_bytes', 0)} "
                f"bytes spilled" + (f" ({v['name']})" if v is not config
                                    else "") for v in timed))
            if timed[0] is not config:
                line += (f" (general: {config['spill_bytes']} bytes "
                         "spilled)")
            print(line)
            if spills:
                bad.append(f"{name} {config['name']}")
    if bad:
        sys.exit("error: configs that spill in the code the bench runs "
                 "(drop them from bench/tuning/sweeps.sh): " + ", ".join(bad))


if __name__ == "__main__":
    main()
