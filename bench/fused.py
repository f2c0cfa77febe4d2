"""bench/run.py's fused sections: a GEMM with a bias and exact-GELU
epilogue (kernels/matmul_gelu.tile) against the autotuned Triton tutorial
kernel with the same epilogue, cuBLAS + eager GELU; and a fused
cross-entropy over 32k-128k vocabularies (kernels/cross_entropy.tile)
against a Triton kernel and eager PyTorch. Every peer is checked against
float64 first (ragged sizes), and every timed output against Tegula's.
"""
import torch

import baselines


def gemm_gelu(tile, rows, checks, time_cuda, record, checked):
    g = torch.Generator(device="cuda").manual_seed(6)
    peers = {"triton": baselines.triton_matmul_bias_gelu,
             "cublas+eager": baselines.eager_matmul_bias_gelu}

    def rand(*shape):
        return torch.randn(*shape, device="cuda", generator=g,
                           dtype=torch.bfloat16)
    a, b, bias = rand(333, 271), rand(271, 190), rand(190)
    ref = baselines.ref_matmul_bias_gelu(a, b, bias)
    for name, fn in peers.items():
        checked(f"gemm+gelu {name} 333x190x271 vs float64", fn(a, b, bias),
                ref, 1e-2, checks)
    # Tegula's erf(precision = fast) build, and its correctly rounded f64
    # erf (FAST_ERF = false), each at its tuned blocks.
    ours = {"tegula": "matmul-gelu/matmul_bias_gelu.json",
            "tegula-exact-erf": "matmul-gelu-exact/matmul_bias_gelu.json"}
    for name, bundle in ours.items():
        outs, _ = tile.run(bundle, dict(M=333, N=190, K=271),
                           dict(a=a, b=b, bias=bias), ["c"], bench=False)
        checked(f"gemm+gelu {name} 333x190x271 vs float64", outs["c"], ref,
                1e-2, checks)
    for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192)):
        shape = dict(M=m, N=n, K=k)
        print(f"gemm_gelu {shape}", flush=True)
        a, b, bias = rand(m, k), rand(k, n), rand(n)
        flops = 2 * m * n * k
        timed = {}
        for name, bundle in ours.items():
            outs, ms = tile.run(bundle, shape, dict(a=a, b=b, bias=bias),
                                ["c"])
            record(rows, "gemm_gelu", name, shape, ms, flops=flops,
                   config=tile.last_config)
            timed[name] = outs["c"]
        checked(f"gemm+gelu tegula vs tegula-exact-erf {shape}",
                timed["tegula"], timed["tegula-exact-erf"], 1e-2, checks)
        for name, fn in peers.items():
            checked(f"gemm+gelu {name} vs tegula {shape}", fn(a, b, bias),
                    timed["tegula"], 1e-2, checks)
            record(rows, "gemm_gelu", name, shape,
                   time_cuda(lambda: fn(a, b, bias)), flops=flops)
        del a, b, bias, timed


def cross_entropy(tile, rows, checks, time_cuda, record, checked):
    g = torch.Generator(device="cuda").manual_seed(7)
    peers = {"triton": lambda x, t: baselines.triton_cross_entropy(x, t)[0],
             "eager": baselines.eager_cross_entropy}

    def inputs(r, v):
        x = torch.randn(r, v, device="cuda", generator=g,
                        dtype=torch.bfloat16) * 4
        t = torch.randint(0, v, (r,), device="cuda", generator=g,
                          dtype=torch.int32)
        t[::7] = -100  # ignored rows
        return x, t
    x, t = inputs(37, 32003)
    ref, ref_lse = baselines.ref_cross_entropy(x, t)
    for name, fn in peers.items():
        checked(f"cross-entropy {name} 37x32003 vs float64", fn(x, t), ref,
                1e-4, checks)
    outs, _ = tile.run("cross-entropy/cross_entropy.json", dict(R=37, V=32003),
                       dict(logits=x, target=t), ["loss", "lse"], bench=False)
    checked("cross-entropy tegula 37x32003 vs float64", outs["loss"], ref,
            1e-4, checks)
    checked("cross-entropy tegula lse vs float64", outs["lse"], ref_lse, 1e-4,
            checks)
    for r, v in ((4096, 32000), (4096, 128256)):
        shape = dict(R=r, V=v)
        print(f"cross_entropy {shape}", flush=True)
        x, t = inputs(r, v)
        nbytes = r * v * 2 + r * 12
        outs, ms = tile.run("cross-entropy/cross_entropy.json", shape,
                            dict(logits=x, target=t), ["loss"])
        ours = outs["loss"]
        record(rows, "cross_entropy", "tegula", shape, ms, nbytes=nbytes,
               config=tile.last_config)
        for name, fn in peers.items():
            checked(f"cross-entropy {name} vs tegula {shape}", fn(x, t), ours,
                    1e-4, checks)
            record(rows, "cross_entropy", name, shape,
                   time_cuda(lambda: fn(x, t)), nbytes=nbytes)
        del x, t, ours
