"""Writes malformed and reordered variants of the bundle in sys.argv[1]."""
import json
import os
import sys

out = sys.argv[1]
base = json.load(open(os.path.join(out, "copy.json")))
good = base["variants"][0]
with open(os.path.join(out, "copy.div16.ptx")) as f:
    ptx = f.read()


def write(name, variants, ptx_text=None):
    bundle = dict(base, variants=variants)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(bundle, f)
    with open(os.path.join(out, name + ".ptx"), "w") as f:
        f.write(open(os.path.join(out, "copy.ptx")).read())


write("name", [dict(good, name="div 16")])
write("path", [dict(good, ptx="../copy.div16.ptx")])
write("when", [dict(good, when="M % 16 == 0")])
write("names", [dict(good, when=["Q % 16 == 0"])])
write("missing", [dict(good, ptx="nothere.ptx")])
# A variant PTX whose entry lacks the last size variable.
with open(os.path.join(out, "short.ptx"), "w") as f:
    head, _, rest = ptx.partition(".entry copy(")
    params, _, body = rest.partition(")")
    f.write(head + ".entry copy(" + params.rsplit(",", 1)[0] + ")" + body)
write("abi", [dict(good, ptx="short.ptx")])
write("type", {"name": "div16"})
write("order", [dict(good, name="first", when=["M / (N - N) == 1"]),
                dict(good, name="second", when=["M % 16 == 0"])])
# A view's values: only in `when`, only of a strided tensor (copy's x is
# not one), and within its rank.
write("view", [dict(good, when=["stride(x, 1) == 1"])])
write("viewgrid", [good])
grid = json.load(open(os.path.join(out, "viewgrid.json")))
grid["grid"][2] = "align(x)"
with open(os.path.join(out, "viewgrid.json"), "w") as f:
    json.dump(grid, f)
