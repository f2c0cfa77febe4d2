"""One profiled launch each (inside cudaProfilerStart/Stop) of Tegula's and
Triton's GEMM at 4096^3 and attention d128 N=4096 (Z=4, H=16), after
warm-up and autotuning outside the profiled range."""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "bench")); sys.path.insert(0, os.path.join(root, "python"))
import torch
import run as bench, baselines
tile = bench.Tegula(os.path.join(root, ".device-bundle"))
g = torch.Generator(device="cuda").manual_seed(4)
n = 4096
a = torch.randn(n, n, device="cuda", generator=g, dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", generator=g, dtype=torch.bfloat16)
tile.run("matmul/matmul.json", dict(M=n, N=n, K=n), dict(a=a, b=b), ["c"], bench=False)
mm = tile.last_launch
q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", generator=g, dtype=torch.bfloat16) for _ in range(3))
tile.run("attn-d128/attention_fwd.json", dict(Z=4, H=16, N=4096), dict(q=q, k=k, v=v), ["o"], dict(scale=0.088), bench=False)
at = tile.last_launch
fns = [mm, lambda: baselines.triton_matmul(a, b), at,
       lambda: baselines.triton_attention(q, k, v, False, 0.088)]
for f in fns:
    for _ in range(3): f()
torch.cuda.synchronize()
torch.cuda.profiler.start()
for f in fns:
    f()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("profiled 4 launches")
