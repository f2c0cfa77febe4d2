"""Sustained timing: each implementation warmed for SOAK ms of its own
calls before 100 timed calls; orders rotated. Prints SM clock and power."""
import os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "bench")); sys.path.insert(0, os.path.join(root, "python"))
import numpy as np, torch
import run as bench, baselines

def clocks():
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()

def timed(fn, soak_ms, rep=100):
    torch.cuda.synchronize(); t0 = time.perf_counter(); n = 0
    while n < 10 or (time.perf_counter() - t0) * 1e3 < soak_ms:
        fn(); n += 1
        if n % 10 == 0: torch.cuda.synchronize()
    torch.cuda.synchronize()
    s = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(rep)]
    for a, b in zip(s, e):
        a.record(); fn(); b.record()
    torch.cuda.synchronize()
    return float(np.median([a.elapsed_time(b) for a, b in zip(s, e)]))

tile = bench.Tegula(os.path.join(root, ".device-bundle"))
g = torch.Generator(device="cuda").manual_seed(4)
for n in (4000, 8192, 4096):
    a = torch.randn(n, n, device="cuda", generator=g, dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", generator=g, dtype=torch.bfloat16)
    outs, _ = tile.run("matmul/matmul.json", dict(M=n, N=n, K=n), dict(a=a, b=b), ["c"], bench=False)
    k = tile.kernel("matmul/matmul.json"); c = outs["c"]
    fns = {"tegula": lambda: k(a=a, b=b, c=c, dims=dict(M=n, N=n, K=n)),
           "triton": lambda: baselines.triton_matmul(a, b),
           "cublas": lambda: torch.matmul(a, b)}
    for soak in (0, 300, 1000):
        for r in range(2):
            names = list(fns)[r:] + list(fns)[:r]
            res = {nm: timed(fns[nm], soak) for nm in names}
            print(f"n={n} soak={soak} order={names[0]}..: " + ", ".join(
                f"{nm} {ms:.4f} ({2*n**3/ms/1e9:.0f})" for nm, ms in res.items())
                + f" | tegula/triton {res['triton']/res['tegula']:.3f} | {clocks()}", flush=True)
