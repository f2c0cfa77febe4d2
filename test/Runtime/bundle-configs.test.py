"""Writes tuning tables and malformed configs beside the bundle in argv[1]
(scale.json with configs BLOCK=64, 128, 256)."""
import hashlib
import json
import os
import shutil
import sys

out = sys.argv[1]
base = json.load(open(os.path.join(out, "scale.json")))
hashes = {}
for config in base["configs"]:
    with open(os.path.join(out, config["ptx"]), "rb") as f:
        hashes[config["name"]] = hashlib.sha256(f.read()).hexdigest()


def write(name, bundle, table=None):
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(bundle, f)
    shutil.copy(os.path.join(out, "scale.ptx"), os.path.join(out, name + ".ptx"))
    if table is not None:
        with open(os.path.join(out, name + ".tuning.json"), "w") as f:
            json.dump({"kernel": "scale", "entries": table}, f)


def entry(device, n, winner, sha=None):
    return {"device": device, "cc": "sm_90", "dtype": "f32",
            "bucket": {"N": n}, "dims": {"N": n}, "winner": winner,
            "timings_us": {name: 1.0 for name in hashes},
            "ptx_sha256": sha or hashes, "date": "2026-11-24T00:00:00Z",
            "seed": 0}


tuned = dict(base, tuning="tuned.tuning.json")
write("tuned", tuned, [entry("Fake GPU", 1024, "BLOCK=128"),
                       entry("Fake GPU", 65536, "BLOCK=256"),
                       entry("Other GPU", 1024, "BLOCK=64")])
# The kernel changed since: one config's PTX hash differs.
write("stale", dict(base, tuning="stale.tuning.json"),
      [entry("Fake GPU", 1024, "BLOCK=128", dict(hashes, **{"BLOCK=64": "0" * 64})),
       entry("Other GPU", 1024, "BLOCK=128")])
# Tuned on GPUs of two architectures, one entry without its "cc".
write("archs", dict(base, tuning="archs.tuning.json"),
      [dict(entry("Old GPU", 1024, "BLOCK=256"), cc="sm_80"),
       entry("Fake GPU", 65536, "BLOCK=64"),
       entry("Other GPU", 2048, "BLOCK=256"),
       {k: v for k, v in entry("Bare GPU", 1024, "BLOCK=128").items()
        if k != "cc"}])
write("badcc", dict(base, tuning="badcc.tuning.json"),
      [dict(entry("Fake GPU", 1024, "BLOCK=128"), cc=90)])
write("nobucket", dict(base, tuning="nobucket.tuning.json"),
      [dict(entry("Fake GPU", 1024, "BLOCK=128"), bucket={"M": 1024})])
write("oddbucket", dict(base, tuning="oddbucket.tuning.json"),
      [entry("Fake GPU", 1000, "BLOCK=128")])
write("nowinner", dict(base, tuning="nowinner.tuning.json"),
      [dict(entry("Fake GPU", 1024, "BLOCK=128"), winner=3)])
write("notable", dict(base, tuning="missing.tuning.json"))
write("tablepath", dict(base, tuning="../x.tuning.json"))

configs = base["configs"]
write("dupname", dict(base, configs=[configs[0], dict(configs[1], name="BLOCK=64")]))
write("noptx", dict(base, configs=[configs[0], dict(configs[1], ptx="nothere.ptx")]))
write("ptxpath", dict(base, configs=[configs[0], dict(configs[1], ptx="../scale.c1.ptx")]))
write("top", dict(base, configs=configs[1:]))
write("empty", dict(base, configs=[]))
write("threads", dict(base, configs=[configs[0], dict(configs[1], threads=2048)]))
# A config whose PTX entry lacks the size variable.
with open(os.path.join(out, "scale.c1.ptx")) as f:
    ptx = f.read()
head, _, rest = ptx.partition(".entry scale(")
params, _, body = rest.partition(")")
with open(os.path.join(out, "short.ptx"), "w") as f:
    f.write(head + ".entry scale(" + params.rsplit(",", 1)[0] + ")" + body)
write("abi", dict(base, configs=[configs[0], dict(configs[1], ptx="short.ptx")]))
