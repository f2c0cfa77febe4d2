#!/usr/bin/env python3
"""Stages the interpreter-vs-GPU agreement runs of test/GPU/agreement.txt.

Here (with tilec built): each program is compiled for sm_80 and sm_90a into
.device-bundle/agree/NAME-TARGET/, run once in the interpreter with the same
seed, and every tensor it writes is saved as the expected output. On the GPU,
scripts/gpu/check-agreement.sh runs each bundle with tile-run on the same
seed and compares with --ref ... --check. Usage:
  scripts/gpu/stage-agreement.py [LIST] [--progen N]
                                           (after scripts/gpu/stage-kernels.sh)
--progen N adds N random programs of test/Generated/progen.py (seeds 1..N,
ragged sizes from the seed), so the generator's programs are held to the GPU
as well as to float64.
AGREE_STAGE=DIR stages elsewhere (the lit test of test/GPU does, to check that
every program compiles for both targets, assembles, and runs in the
interpreter).
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = os.environ.get("TEGULA_BUILD_DIR", os.path.join(root, "build"))
tilec = os.path.join(build, "bin", "tilec")
stage = os.environ.get("AGREE_STAGE", os.path.join(root, ".device-bundle", "agree"))
args = sys.argv[1:]
progen = 0
if "--progen" in args:
    at = args.index("--progen")
    progen = int(args[at + 1])
    del args[at:at + 2]
listing = args[0] if args else os.path.join(root, "test/GPU/agreement.txt")


def entries():
    """(name, source, tilec arguments, run arguments) of every run."""
    for line in open(listing):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, source, compile_args, run_args = [f.strip() for f in line.split("|")]
        yield name, os.path.join(root, source), shlex.split(compile_args), shlex.split(run_args)
    if progen:
        sys.path.insert(0, os.path.join(root, "test", "Generated"))
        import progen as generator
        os.makedirs(os.path.join(stage, "progen"), exist_ok=True)
        for seed in range(1, progen + 1):
            source = os.path.join(stage, "progen", "seed-%d.tile" % seed)
            open(source, "w").write(generator.Program(seed).source())
            m, n = 17 + (seed * 7) % 60, 9 + (seed * 13) % 80
            yield ("progen-%d" % seed, source, ["-D", "BM=32", "-D", "BN=32"],
                   ["--dims", "M=%d,N=%d" % (m, n), "--seed", str(seed)]
                   + narrow_tolerance(open(source).read()))


def narrow_tolerance(text):
    """--tol for a program that rounds values through f16 or bf16 on the way
    to an f32 output: the GPU's approximate sin, cos, exp2 and log2 differ
    from the interpreter's in the last f32 bits, which a rounding to a
    narrow type can turn into one ulp of that type. Such outputs are held
    to the narrow type's tolerance (tile-run's own: 1e-2 bf16, 2e-3 f16).
    Programs without approximate math keep the tolerance of their outputs."""
    if not re.search(r"\b(sin|cos|exp|exp2|log|log2|rsqrt|sqrt)\(", text):
        return []
    if re.search(r"\bbf16\b", text):
        return ["--tol", "1e-2"]
    if re.search(r"\bf16\b", text):
        return ["--tol", "2e-3"]
    return []


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(args), result.stdout, result.stderr))


runs = []
os.makedirs(stage, exist_ok=True)
for name, source, compile_args, run_args in entries():
    expected = os.path.join(stage, name + ".expected")
    os.makedirs(expected, exist_ok=True)
    bundles = {}
    for target in ["sm_80", "sm_90a"]:
        out = os.path.join(stage, "%s-%s" % (name, target))
        os.makedirs(out, exist_ok=True)
        run([tilec, source, "--target", target, "-o", out] + compile_args)
        (json_name,) = [f for f in os.listdir(out) if f.endswith(".json")]
        bundles[target] = os.path.join(out, json_name)
        if shutil.which("ptxas"):
            ptx = bundles[target][:-len(".json")] + ".ptx"
            run(["ptxas", "-arch=" + target, ptx, "-o", os.devnull])
    description = json.load(open(bundles["sm_90a"]))
    written = [p["name"] for p in description["params"]
               if p["kind"] == "tensor" and p["access"] in ("write", "readwrite")]
    outs, refs = [], []
    for tensor in written:
        path = os.path.join(expected, tensor + ".npy")
        outs += ["--out", "%s=%s" % (tensor, path)]
        refs += ["--ref", "%s=%s" % (tensor, os.path.relpath(path, root))]
    run([tilec, source, "--run"] + compile_args + run_args + outs)
    for target, bundle in bundles.items():
        runs.append(" ".join(["%s-%s" % (name, target), os.path.relpath(bundle, root)]
                             + [shlex.quote(a) for a in run_args + refs + ["--check"]]))
with open(os.path.join(stage, "runs.txt"), "w") as f:
    f.write("\n".join(runs) + "\n")
print("staged %d agreement runs in %s" % (len(runs), stage))
