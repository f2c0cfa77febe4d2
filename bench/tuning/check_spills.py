#!/usr/bin/env python3
"""Prints registers and spill bytes of every config of the bench's swept
bundles (ptxas -v through tilec) and fails when a config spills in the code
the bench's shapes run: the div16 variant where the bundle has one (every
bench shape is a multiple of 16), else the config itself. Spills of a
general variant beside a spill-free div16 one are listed, not fatal: only
ragged sizes run that code.

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
            timed = next((v for v in config.get("variants", [])
                          if v["name"] == "div16"), config)
            spills = timed.get("spill_bytes", 0)
            line = (f"{name} {config['name']}: {timed.get('registers')} "
                    f"registers, {spills} bytes spilled")
            if timed is not config:
                line += (f" (div16; general: {config['spill_bytes']} bytes "
                         "spilled)")
            print(line)
            if spills:
                bad.append(f"{name} {config['name']}")
    if bad:
        sys.exit("error: configs that spill in the code the bench runs "
                 "(drop them from bench/tuning/sweeps.sh): " + ", ".join(bad))


if __name__ == "__main__":
    main()
