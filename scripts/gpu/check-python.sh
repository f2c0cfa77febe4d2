#!/usr/bin/env bash
# The Python package on the GPU, through PyTorch tensors.
#
#   here:       scripts/gpu/stage-kernels.sh && scripts/gpu/check-python.sh --stage
#               (builds libtegula_rt.so without the compiler into
#               .device-bundle/lib/)
#   on the GPU: bash scripts/gpu/check-python.sh    (carry .device-bundle;
#               needs torch and numpy, no MLIR, no network)
#
# For every run of kernel-configs.sh (every shipped kernel, ragged sizes
# included): tile-run makes the inputs (--dry-run --out), runs the kernel
# with --check against the float64 reference where the bundle names one,
# and saves its outputs; the same inputs through tegula on torch tensors
# must give bit-identical outputs. Then: a float64 check computed in torch
# (rmsnorm, matmul), a non-default stream, a CUDA graph replay equal to
# eager, torch.compile(fullgraph=True) and opcheck through tegula.torch.op,
# and the launch overhead of a tiny kernel. One PASS/FAIL/INFO line per
# check; logs in $OUT; exits non-zero on any failure.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=${STAGE:-$root/.device-bundle}

if [ "${1:-}" = --stage ]; then
  set -e
  build=${BUILD_DIR:-$root/build-gpu-runner}
  [ -f "$build/build.ninja" ] || cmake -G Ninja -S "$root" -B "$build" \
    -DTEGULA_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="${CC:-clang-22}" -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}"
  ninja -C "$build" tegula_rt
  mkdir -p "$stage/lib"
  cp "$build/lib/libtegula_rt.so" "$stage/lib/"
  [ -d "$stage/kernels" ] || echo "warning: no $stage/kernels: run scripts/gpu/stage-kernels.sh first" >&2
  echo "staged $stage/lib/libtegula_rt.so; on the GPU: bash scripts/gpu/check-python.sh (carry .device-bundle)"
  exit 0
fi

source "$root/scripts/gpu/kernel-configs.sh"
out=${OUT:-/tmp/check-python}
mkdir -p "$out"
runs=$out/runs.txt
: >"$runs"
record() { printf '%s\n' "$*" >>"$runs"; }
STAGE=$stage for_each_kernel_run record

export TEGULA_RT_LIBRARY=$stage/lib/libtegula_rt.so
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
exec python3 - "$stage" "$runs" "$out" <<'PY'
import json, os, shlex, subprocess, sys, time
import numpy as np
import torch
import tegula

stage, runs_file, out = sys.argv[1:4]
tile_run = os.path.join(stage, "bin", "tile-run")
results = []


def report(ok, name, detail):
    word = {True: "PASS", False: "FAIL", None: "INFO"}[ok]
    line = f"{word} {name}: {detail}"
    print(line, flush=True)
    results.append(ok)


TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
         "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}


def to_torch(path, dtype):
    return torch.from_numpy(np.load(path)).to("cuda").to(TORCH[dtype])


def bits(t):
    t = t.contiguous()
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.view(torch.int16)
    if t.dtype == torch.float32:
        return t.view(torch.int32)
    return t


def scalar_value(text, dtype):
    if dtype == "f32":
        return float(text)
    if dtype == "bool":
        return text in ("1", "true")
    return int(text)


def strided_copy(t, strides):
    """`t` as a view with these element strides, 3 elements into a fresh
    buffer (so not 16-byte aligned); elements that alias get one of their
    values, as tile-run's view does (its inputs make them equal)."""
    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, strides))
    base = torch.zeros(span + 3, dtype=t.dtype)
    offsets = torch.zeros((), dtype=torch.long)
    for n, s in zip(t.shape, strides):
        offsets = offsets.unsqueeze(-1) + torch.arange(n) * s
    base[offsets.flatten() + 3] = t.cpu().flatten()
    base = base.to(t.device)
    return torch.as_strided(base, t.shape, strides, 3)


def check_run(name, bundle, args):
    spec = json.load(open(bundle))
    params = spec["params"]
    work = os.path.join(out, name)
    os.makedirs(work, exist_ok=True)
    scalars, dims, strides = {}, {}, {}
    it = iter(args)
    for a in it:
        if a == "--scalar":
            k, v = next(it).split("=", 1)
            scalars[k] = v
        elif a == "--stride":
            k, v = next(it).split("=", 1)
            strides[k] = tuple(int(s) for s in v.split(","))
        elif a == "--dims":
            # Sizes no tensor given carries (an output's own size variable).
            dims.update((k, int(v)) for k, v in
                        (d.split("=", 1) for d in next(it).split(",")))
    inputs = [p for p in params if p["kind"] == "tensor" and p["access"] != "write"]
    outputs = [p for p in params if p["kind"] == "tensor" and p["access"] != "read"]
    # The dry run keeps --check: with it, a reference that needs inputs
    # consistent with the others derives them (the attention backward's o,
    # lse and delta, docs/kernels.md), and the files hold those.
    dry = [tile_run, bundle, *args, "--dry-run"]
    for p in inputs:
        dry += ["--out", f"{p['name']}={work}/in-{p['name']}.npy"]
    log = open(os.path.join(work, "tile-run.log"), "w")
    if subprocess.run(dry, stdout=log, stderr=log).returncode:
        return report(False, name, "tile-run --dry-run failed (see log)")
    # The run reads every input from the dry run's files, the ones the
    # configuration gave with --in (index tensors: cu_seqlens, block
    # tables) included, so its own --in pairs are dropped.
    rest, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--in":
            skip = True
        else:
            rest.append(a)
    run = [tile_run, bundle, *rest]
    for p in inputs:
        run += ["--in", f"{p['name']}={work}/in-{p['name']}.npy"]
    for p in outputs:
        run += ["--out", f"{p['name']}={work}/out-{p['name']}.npy"]
    if subprocess.run(run, stdout=log, stderr=log).returncode:
        return report(False, name, "tile-run (with its float64 --check) failed")
    kernel = tegula.load(bundle)[spec["kernel"]]
    call = {}
    for p in params:
        if p["kind"] == "scalar":
            call[p["name"]] = scalar_value(scalars[p["name"]], p["dtype"])
        elif p["access"] != "write":
            call[p["name"]] = to_torch(f"{work}/in-{p['name']}.npy", p["dtype"])
            if p["name"] in strides:
                call[p["name"]] = strided_copy(call[p["name"]], strides[p["name"]])
        elif p["name"] in strides:
            want = to_torch(f"{work}/out-{p['name']}.npy", p["dtype"])
            call[p["name"]] = strided_copy(torch.zeros_like(want), strides[p["name"]])
    result = kernel(**call, dims=dims)
    torch.cuda.synchronize()
    got = {p["name"]: call[p["name"]] for p in outputs if p["access"] == "readwrite"}
    got.update({p["name"]: call[p["name"]] for p in outputs if p["name"] in strides
                and p["access"] == "write"})
    written = [p for p in outputs if p["access"] == "write" and p["name"] not in strides]
    if written:
        values = result if isinstance(result, tuple) else (result,)
        got.update({p["name"]: v for p, v in zip(written, values)})
    for p in outputs:
        want = to_torch(f"{work}/out-{p['name']}.npy", p["dtype"])
        if not torch.equal(bits(got[p["name"]]), bits(want)):
            return report(False, name, f"output '{p['name']}' differs from tile-run's")
    checked = "--check" in args
    report(True, name, "bit-identical to tile-run" +
           (" (which passed its float64 check on the same inputs)" if checked else ""))


for line in open(runs_file):
    name, bundle, *args = shlex.split(line)
    try:
        check_run("python-" + name, bundle, args)
    except Exception as e:  # a check, not the script, fails
        report(False, "python-" + name, f"{type(e).__name__}: {e}")

k = os.path.join(stage, "kernels")


def rel_l2(a, b):
    return float((a.double() - b).norm() / b.norm())


def rmsnorm_ref(x, w, eps):
    x, w = x.double(), w.double()
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


try:
    lib = tegula.load(os.path.join(k, "rmsnorm-sm_90a"))
    print("INFO signature:", lib.rmsnorm.signature)
    x = torch.randn(13, 3001, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(3001, device="cuda", dtype=torch.bfloat16)
    y = lib.rmsnorm(x, w, eps=1e-5)
    err = rel_l2(y, rmsnorm_ref(x, w, 1e-5))
    report(err < 1e-2, "rmsnorm-float64", f"rel L2 {err:.2e} at R=13, C=3001 (tol 1e-2)")
    mm = tegula.load(os.path.join(k, "matmul-sm_90a")).matmul
    print("INFO signature:", mm.signature)
    a = torch.randn(333, 271, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(271, 190, device="cuda", dtype=torch.bfloat16)
    c = mm(a, b)
    err = rel_l2(c, a.double() @ b.double())
    report(err < 1e-2, "matmul-float64", f"rel L2 {err:.2e} at 333x271x190 (tol 1e-2)")

    # A non-default stream: the launch is ordered on it.
    s = torch.cuda.Stream()
    y_eager = lib.rmsnorm(x, w, eps=1e-5)
    with torch.cuda.stream(s):
        y_stream = torch.empty_like(x)
        torch.cuda._sleep(10_000_000)  # the kernel must wait for this
        lib.rmsnorm(x, w, y_stream, eps=1e-5)
    s.synchronize()
    report(torch.equal(bits(y_stream), bits(y_eager)), "stream",
           "rmsnorm on a side stream equals the default stream's result")

    # A CUDA graph: capture, new inputs, replay == eager.
    xs = torch.randn_like(x)
    ys = torch.empty_like(x)
    lib.rmsnorm(xs, w, ys, eps=1e-5)  # warm up (module load) outside capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        lib.rmsnorm(xs, w, ys, eps=1e-5)
    xs.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    want = lib.rmsnorm(xs, w, eps=1e-5)
    torch.cuda.synchronize()
    report(torch.equal(bits(ys), bits(want)), "cuda-graph", "replay equals eager")

    # torch.compile through the custom op, and opcheck.
    import tegula.torch as tt
    op = tt.op(lib.rmsnorm, "tegula_check::rmsnorm")
    f = torch.compile(lambda a, b: op(a, b, 1e-5), fullgraph=True)
    report(torch.equal(bits(f(x, w)), bits(y_eager)), "torch-compile",
           "fullgraph=True through tegula.torch.op equals eager")
    try:
        torch.library.opcheck(op, (x, w, 1e-5))
        report(True, "opcheck", "torch.library.opcheck passed")
    except Exception as e:
        report(False, "opcheck", f"{type(e).__name__}: {str(e)[:300]}")

    # Launch overhead: a tiny kernel, many calls, wall time per call.
    sa = tegula.load(os.path.join(stage, "Inputs", "scale_add", "scale_add.json")).scale_add
    xa = torch.randn(1024, device="cuda")
    ya = torch.randn(1024, device="cuda")
    for _ in range(100):
        sa(xa, ya, a=0.5, b=1)
    torch.cuda.synchronize()
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        sa(xa, ya, a=0.5, b=1)
    torch.cuda.synchronize()
    us = (time.perf_counter() - t0) / n * 1e6
    t0 = time.perf_counter()
    for _ in range(n):
        ya.add_(xa, alpha=0.5)
    torch.cuda.synchronize()
    torch_us = (time.perf_counter() - t0) / n * 1e6
    # A figure, not a check: bench/run.py's "launch" section puts it beside
    # Triton's in the same run.
    report(None, "launch-overhead",
           f"{us:.2f} us per call of scale_add (N=1024) through tegula; "
           f"torch add_ {torch_us:.2f} us")
except Exception as e:
    report(False, "torch-checks", f"{type(e).__name__}: {e}")

failed = sum(r is False for r in results)
print(f"passed {sum(r is True for r in results)}, failed {failed}")
sys.exit(1 if failed else 0)
PY
