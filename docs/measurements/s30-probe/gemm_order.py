"""Why does the bench time Tegula's 4000^3 GEMM at ~0.25 ms when tile-run
times the same div16 build at 0.200 ms? Times it through the package in
several orders and with several inputs, printing SM clocks."""
import os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "bench"))
sys.path.insert(0, os.path.join(root, "python"))
import torch
import run as bench  # bench/run.py: Tegula, time_cuda
import baselines

def clocks():
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                           "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()

tile = bench.Tegula(os.path.join(root, ".device-bundle"))
g = torch.Generator(device="cuda").manual_seed(4)
def mats(n, kind="randn"):
    if kind == "randn":
        return (torch.randn(n, n, device="cuda", generator=g, dtype=torch.bfloat16),
                torch.randn(n, n, device="cuda", generator=g, dtype=torch.bfloat16))
    return (torch.rand(n, n, device="cuda", generator=g).mul(2).sub(1).to(torch.bfloat16),
            torch.rand(n, n, device="cuda", generator=g).mul(2).sub(1).to(torch.bfloat16))

def t(label, n, a, b):
    shape = dict(M=n, N=n, K=n)
    _, ms = tile.run("matmul/matmul.json", shape, dict(a=a, b=b), ["c"])
    tr = bench.time_cuda(lambda: baselines.triton_matmul(a, b))
    cb = bench.time_cuda(lambda: torch.matmul(a, b))
    print(f"{label:28s} n={n}: tegula {ms:.4f} ms ({2*n**3/ms/1e9:.0f}), triton {tr:.4f} ({2*n**3/tr/1e9:.0f}), cublas {cb:.4f} | {clocks()}", flush=True)

for n in (4096, 4000):
    a, b = mats(n); t("fresh randn", n, a, b)
time.sleep(2)
a, b = mats(4000); t("after sleep randn", 4000, a, b)
a, b = mats(4000, "uniform"); t("uniform", 4000, a, b)
a8, b8 = mats(8192); t("8192 randn", 8192, a8, b8); del a8, b8
a, b = mats(4000); t("after 8192 randn", 4000, a, b)
a, b = mats(4096); t("after 8192 randn", 4096, a, b)
# the same tensors with one more column of pitch: 4000 rows in 4096-wide storage
A = torch.randn(4000, 4096, device="cuda", generator=g, dtype=torch.bfloat16)
a2 = A[:, :4000].contiguous()
t("contiguous copy", 4000, a2, mats(4000)[1])
# Host cost of one Tegula call (no sync): per-call wall time over 200 calls
shape = dict(M=4000, N=4000, K=4000)
k = tile.kernel("matmul/matmul.json")
c = torch.empty(4000, 4000, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize(); t0 = time.perf_counter()
for _ in range(200):
    k(a=a, b=b, c=c, dims=shape)
t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
print(f"host per call {1e6*(t1-t0)/200:.1f} us, gpu per call {1e3*(t2-t0)/200:.4f} ms")
