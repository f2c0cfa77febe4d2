#!/usr/bin/env python3
"""Writes copy bundles with very long or deeply nested expressions.

make_deep.py COPY.json OUTDIR: OUTDIR/NAME.json and NAME.ptx per case.
"""
import json
import os
import shutil
import sys

source, out = sys.argv[1], sys.argv[2]
ptx = os.path.splitext(source)[0] + ".ptx"
DEEP = 50000


def grid0(text):
    return lambda d: d["grid"].__setitem__(0, text)


cases = {
    # Each evaluates to N.
    "parens": grid0("(" * DEEP + "N" + ")" * DEEP),
    "prefix": grid0("- " * DEEP + "N"),
    "calls": grid0("max(" * DEEP + "N" + ", 1)" * DEEP),
    "chain": lambda d: d.__setitem__("requires", [" && ".join(["N > 0"] * 30000)]),
    "chain-fails": lambda d: d.__setitem__(
        "requires", [" && ".join(["N > 0"] * 29999 + ["N > 8"])]),
    "unbalanced": grid0("(" * DEEP + "N" + ")" * (DEEP - 1)),
    "overflow": grid0(" * ".join(["N"] * 30000)),
}
for name, change in cases.items():
    with open(source) as f:
        bundle = json.load(f)
    change(bundle)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(bundle, f)
    shutil.copy(ptx, os.path.join(out, name + ".ptx"))
