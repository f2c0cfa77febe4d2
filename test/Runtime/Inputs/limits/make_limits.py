#!/usr/bin/env python3
"""Writes copy bundles that stress the bundle reader's limits.

make_limits.py COPY.json OUTDIR: OUTDIR/NAME.json (and NAME.ptx) per case.
"""
import json
import os
import shutil
import sys

source, out = sys.argv[1], sys.argv[2]
ptx_path = os.path.splitext(source)[0] + ".ptx"
with open(source) as f:
    text = f.read()
with open(ptx_path) as f:
    ptx = f.read()


def write(name, bundle_text, ptx_text=ptx):
    with open(os.path.join(out, name + ".json"), "w") as f:
        f.write(bundle_text)
    with open(os.path.join(out, name + ".ptx"), "w") as f:
        f.write(ptx_text)


def changed(change):
    bundle = json.loads(text)
    change(bundle)
    return json.dumps(bundle)


deep = "[" * 100000 + "]" * 100000
write("deep-template", text.replace('"template": {}', '"template": {"a": %s}' % deep))
write("deep-size-vars", text.replace('"size_vars": ["N"]', '"size_vars": ["N", %s]' % deep))
# nlohmann reads integers past INT64_MAX as unsigned.
write("threads-u64", changed(lambda d: d.__setitem__("threads", 2**64 - 1)))
write("grid-u64", changed(lambda d: d["grid"].__setitem__(0, 2**63)))
# 400,000 size variables: checked once quadratically (minutes).
write("many-size-vars", changed(lambda d: d.__setitem__(
    "size_vars", ["N"] + ["V%d" % i for i in range(400000)])))
# A dim written " N " still binds N from an --in file's shape.
write("spaced-dim", changed(lambda d: d["params"][0].__setitem__("dims", [" N "])))
# PTX parameter widths and array lengths past any real one.
write("ptx-width", text, ptx.replace(".param .u32 copy_param_2",
                                     ".param .u99999999999999999999 copy_param_2"))
write("ptx-array", text, ptx.replace(".param .u32 copy_param_2",
                                     ".param .b8 copy_param_2[99999999999]"))
