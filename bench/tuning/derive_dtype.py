#!/usr/bin/env python3
"""Gives an f16 build of a tuned sweep the bf16 table's winners.

    python3 bench/tuning/derive_dtype.py TABLE.tuning.json F16_BUNDLE_DIR

The committed tables (bench/tuning/tables/) were tuned on bf16 builds: their
PTX hashes are the bf16 PTX's, so on an f16 build of the same sweep every
entry is stale and each launch runs config 0 (for tegula.ops.attention,
half the speed of the winners on the H100's architecture). The two builds
differ only in the element type of the same blocks and pipelines, so the
bf16 winner per shape bucket is the f16 build's best guess short of tuning
it. This writes KERNEL.tuning.json into the f16 bundle's folder: each bf16
entry with the f16 PTX's hashes, its bf16 timings dropped (they were not
measured on this code) and "derived_from" saying so; and names it in
KERNEL.json. scripts/build-ops.sh runs it for every f16 sm_90a sweep of
tegula.ops; tile-run --tune on the f16 build replaces an entry with a
measured one (same device and bucket). Plain Python.
"""
import hashlib
import json
import os
import sys


def derive(table_path, bundle_dir):
    name = os.path.basename(table_path)
    kernel = name[:-len(".tuning.json")]
    bundle_path = os.path.join(bundle_dir, kernel + ".json")
    with open(bundle_path) as f:
        bundle = json.load(f)
    if "configs" not in bundle:
        return  # one config (tegula.ops' own build): nothing to choose
    hashes = {}
    for config in bundle["configs"]:
        with open(os.path.join(bundle_dir, config["ptx"]), "rb") as f:
            hashes[config["name"]] = hashlib.sha256(f.read()).hexdigest()
    with open(table_path) as f:
        table = json.load(f)
    entries = []
    for entry in table["entries"]:
        if set(entry.get("ptx_sha256", {})) != set(hashes):
            continue  # tuned on other configs: stale for both builds
        derived = {k: v for k, v in entry.items() if k != "timings_us"}
        derived["ptx_sha256"] = hashes
        derived["derived_from"] = ("the bf16 build's entry: its winner, "
                                   "not timed on this build")
        entries.append(derived)
    if not entries:
        raise SystemExit(f"error: {table_path} has no entry for the configs "
                         f"of {bundle_path}")
    with open(os.path.join(bundle_dir, name), "w") as f:
        json.dump(dict(table, entries=entries), f, indent=2)
    bundle["tuning"] = name
    with open(bundle_path, "w") as f:
        json.dump(bundle, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[2].strip())
    derive(sys.argv[1], sys.argv[2])
