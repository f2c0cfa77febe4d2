#!/usr/bin/env python3
"""Copies the tables that bench/tuning/tune-on-device.sh returned
(tables.tar: NAME/KERNEL.tuning.json) into bench/tuning/tables/, keeping
only the entries tuned for the PTX staged here (.device-bundle/bench, or
TEGULA_STAGE_DIR/bench): entries whose hashes differ are stale and would
only be skipped, with a warning, on every launch.

    python3 bench/tuning/import.py FILES_AT/tables.tar
"""
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptx_hashes import bundle_ptx_hashes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def staged_hashes(bundle_json):
    """Config name -> sha256 of its PTX in the staged bundle, or None."""
    if not os.path.exists(bundle_json):
        return None
    return bundle_ptx_hashes(bundle_json)


def main():
    stage = os.path.join(os.environ.get(
        "TEGULA_STAGE_DIR", os.path.join(ROOT, ".device-bundle")), "bench")
    tables = os.path.join(ROOT, "bench", "tuning", "tables")
    with tarfile.open(sys.argv[1]) as tar:
        for member in tar.getmembers():
            name, kernel_file = member.name.split("/")
            table = json.load(tar.extractfile(member))
            kernel = kernel_file[:-len(".tuning.json")]
            hashes = staged_hashes(os.path.join(stage, name, kernel + ".json"))
            if hashes is None:
                sys.exit(f"error: {name}/{kernel}.json is not staged in "
                         f"{stage}: run bench/stage.sh first")
            kept = [e for e in table["entries"] if e["ptx_sha256"] == hashes]
            for e in kept:
                dims = ",".join(f"{k}={v}" for k, v in e["dims"].items())
                print(f"{name}: {e['device']} {dims}: {e['winner']}")
            if len(kept) < len(table["entries"]):
                print(f"{name}: {len(table['entries']) - len(kept)} stale "
                      "entries dropped (tuned for other PTX)")
            table["entries"] = kept
            os.makedirs(os.path.join(tables, name), exist_ok=True)
            with open(os.path.join(tables, name, kernel_file), "w") as f:
                json.dump(table, f, indent=2)
                f.write("\n")
    print(f"wrote the tables to {tables}; commit them")


if __name__ == "__main__":
    main()
