#!/usr/bin/env python3
"""Gives an f16 build of a tuned sweep the bf16 table's winners.

    python3 bench/tuning/derive_dtype.py TABLE.tuning.json BF16_DIR F16_DIR

The committed tables (bench/tuning/tables/) were tuned on bf16 builds: their
PTX hashes are the bf16 PTX's, so on an f16 build of the same sweep every
entry is stale and each launch runs config 0 (for tegula.ops.attention,
half the speed of the winners on the H100's architecture). The two builds
differ only in the element type of the same blocks and pipelines, so the
bf16 winner per shape bucket is the f16 build's best guess short of tuning
it. This writes KERNEL.tuning.json into the f16 bundle's folder: each bf16
entry that is current for the bf16 build beside it (its PTX hashes those
of BF16_DIR: a stale winner, tuned on other code, stays unused in both
dtypes, as the runtime skips it in bf16) with the f16 PTX's hashes, its
bf16 timings dropped (they were not measured on this code) and
"derived_from" saying so; and names it in KERNEL.json. Without a current
entry it writes nothing and says so. scripts/build-ops.sh runs it for every f16 sm_90a sweep of
tegula.ops; tile-run --tune on the f16 build replaces an entry with a
measured one (same device and bucket). Plain Python.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptx_hashes import bundle_ptx_hashes  # noqa: E402


def derive(table_path, bf16_dir, bundle_dir):
    name = os.path.basename(table_path)
    kernel = name[:-len(".tuning.json")]
    bundle_path = os.path.join(bundle_dir, kernel + ".json")
    with open(bundle_path) as f:
        bundle = json.load(f)
    if "configs" not in bundle:
        return  # one config (tegula.ops' own build): nothing to choose
    current = bundle_ptx_hashes(os.path.join(bf16_dir, kernel + ".json"))
    hashes = bundle_ptx_hashes(bundle_path)
    with open(table_path) as f:
        table = json.load(f)
    entries = []
    for entry in table["entries"]:
        if entry.get("ptx_sha256") != current or set(current) != set(hashes):
            continue  # stale in bf16: tuned on other code or configs
        derived = {k: v for k, v in entry.items() if k != "timings_us"}
        derived["ptx_sha256"] = hashes
        derived["derived_from"] = ("the bf16 build's entry: its winner, "
                                   "not timed on this build")
        entries.append(derived)
    if not entries:
        print(f"warning: {table_path}: no entry is current for "
              f"{bf16_dir}; {bundle_dir} gets no table (config 0 unless "
              f"tuned)", file=sys.stderr)
        return
    with open(os.path.join(bundle_dir, name), "w") as f:
        json.dump(dict(table, entries=entries), f, indent=2)
    bundle["tuning"] = name
    with open(bundle_path, "w") as f:
        json.dump(bundle, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit("usage: " + __doc__.strip().splitlines()[2].strip())
    derive(sys.argv[1], sys.argv[2], sys.argv[3])
