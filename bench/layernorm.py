"""bench/run.py's layernorm section: kernels/layer_norm.tile against the
Triton tutorial's LayerNorm (bench/baselines.py) and eager PyTorch
(torch.nn.functional.layer_norm and its autograd backward), forward and
backward, at the tutorial's bench shapes: M = 4096 rows, f16, N from 1024 to
8192, inputs as the tutorial makes them (x = -2.3 + 0.5 randn, w and b
rand, dy = 0.1 randn). GB/s as the tutorial counts them: 2 M N bytes-per-
element for the forward, 3 for the backward. The backward of each is timed
as one call doing all of it: Tegula's dx kernel (G programs, each summing
the rows r % G == g) then its dw/db kernel, with its outputs allocated by
torch.empty; the tutorial's and eager's through autograd
(y.backward(dy, retain_graph=True)), as the tutorial times them.

Every peer is checked against float64 first at a ragged size (M = 333 not
a multiple of any group, N = 1000 not a power of two), Tegula's kernels
too, then every output at the timed shape against Tegula's.
"""
import os

import torch

import baselines

EPS = 1e-5
M = 4096
WIDTHS = (1024, 2048, 4096, 8192)
# f16 outputs: y and dx are rounded once (2e-3, docs/runtime.md); dw and db
# are sums over M rows that the tutorial rounds to f16 after every row it
# adds to a group's buffer (up to M / GROUP_SIZE_M = 43 roundings, about
# 6.5 u), so they get bf16's 1e-2 (the tutorial's own test checks them to
# one decimal).
TOL = 2e-3
TOLS = (TOL, 1e-2, 1e-2)


def bundle(n, kernel):
    return f"layernorm-n{n}/{kernel}.json"


class Tegula:
    """Tegula's LayerNorm for rows of up to `block` elements, called as a
    user calls it: the forward's outputs and the backward's partial sums
    allocated with torch.empty, G partial rows."""

    def __init__(self, tile, block, groups):
        self.fwd = tile.kernel(bundle(block, "layer_norm_fwd"))
        self.dx = tile.kernel(bundle(block, "layer_norm_bwd_dx"))
        self.dwdb = tile.kernel(bundle(block, "layer_norm_bwd_dwdb"))
        self.groups = groups

    def forward(self, x, w, b):
        m, n = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(m, device=x.device, dtype=torch.float32)
        rstd = torch.empty(m, device=x.device, dtype=torch.float32)
        self.fwd(x, w, b, y, mean, rstd, EPS)
        return y, mean, rstd

    def backward(self, x, w, mean, rstd, dy):
        n = x.shape[1]
        dx = torch.empty_like(x)
        parts = [torch.empty(self.groups, n, device=x.device,
                             dtype=torch.float32) for _ in range(2)]
        self.dx(x, dy, w, mean, rstd, dx, *parts)
        dw, db = torch.empty_like(w), torch.empty_like(w)
        self.dwdb(*parts, dw, db)
        return dx, dw, db


def inputs(m, n, g):
    def rand(*shape, scale=1.0, shift=0.0, uniform=False):
        fn = torch.rand if uniform else torch.randn
        return fn(*shape, device="cuda", generator=g,
                  dtype=torch.float16) * scale + shift
    x = rand(m, n, scale=0.5, shift=-2.3)
    w, b = rand(n, uniform=True), rand(n, uniform=True)
    return x, w, b, rand(m, n, scale=0.1)


def autograd_peer(fn):
    """(forward, backward) of a differentiable peer: y, then the backward
    through autograd with retain_graph, as the tutorial times it."""
    def forward(x, w, b):
        return fn(x, w, b, EPS)

    def prepare(x, w, b, dy):
        leaves = [t.detach().requires_grad_() for t in (x, w, b)]
        y = fn(*leaves, EPS)

        def backward():
            for t in leaves:
                t.grad = None
            y.backward(dy, retain_graph=True)
            return tuple(t.grad for t in leaves)
        return backward
    return forward, prepare


PEERS = {"triton": autograd_peer(baselines.triton_layer_norm),
         "eager": autograd_peer(baselines.eager_layer_norm)}


def check_ragged(tile, checks, checked, g):
    """Every implementation against float64 at M = 333, N = 1000."""
    x, w, b, dy = inputs(333, 1000, g)
    ref_y = baselines.ref_layer_norm(x, w, b, EPS)
    ref_grads = baselines.ref_layer_norm(x, w, b, EPS, dy)
    for name, (forward, prepare) in PEERS.items():
        checked(f"layernorm {name} 333x1000 y vs float64",
                forward(x, w, b), ref_y, TOL, checks)
        for what, got, ref, tol in zip(("dx", "dw", "db"),
                                       prepare(x, w, b, dy)(), ref_grads,
                                       TOLS):
            checked(f"layernorm {name} 333x1000 {what} vs float64", got, ref,
                    tol, checks)
    ours = Tegula(tile, 1024, 7)
    y, mean, rstd = ours.forward(x, w, b)
    checked("layernorm tegula 333x1000 y vs float64", y, ref_y, TOL, checks)
    for what, got, ref, tol in zip(("dx", "dw", "db"),
                                   ours.backward(x, w, mean, rstd, dy),
                                   ref_grads, TOLS):
        checked(f"layernorm tegula 333x1000 G=7 {what} vs float64", got, ref,
                tol, checks)


def section(tile, rows, checks, time_cuda, record, checked):
    g = torch.Generator(device="cuda").manual_seed(8)
    check_ragged(tile, checks, checked, g)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for n in WIDTHS:
        shape = dict(M=M, N=n, dtype="f16")
        print(f"layernorm {shape}", flush=True)
        x, w, b, dy = inputs(M, n, g)
        fwd_bytes = 2 * x.numel() * x.element_size()
        bwd_bytes = 3 * x.numel() * x.element_size()
        # G: the tutorial's group count, and one program per SM.
        ours = {}
        for count in (baselines.layer_norm_group_size(n), sms):
            impl = Tegula(tile, n, count)
            y, mean, rstd = impl.forward(x, w, b)
            grads = impl.backward(x, w, mean, rstd, dy)
            if not ours:
                ours = dict(y=y, grads=grads)
                record(rows, "layernorm_fwd", "tegula", shape,
                       time_cuda(lambda: impl.forward(x, w, b)),
                       nbytes=fwd_bytes)
            else:
                for what, got, want, tol in zip(("dx", "dw", "db"), grads,
                                                ours["grads"], TOLS):
                    checked(f"layernorm tegula G={count} {what} vs tegula "
                            f"{shape}", got, want, tol, checks)
            record(rows, "layernorm_bwd", f"tegula G={count}", shape,
                   time_cuda(lambda: impl.backward(x, w, mean, rstd, dy)),
                   nbytes=bwd_bytes)
        for name, (forward, prepare) in PEERS.items():
            checked(f"layernorm {name} y vs tegula {shape}", forward(x, w, b),
                    ours["y"], TOL, checks)
            record(rows, "layernorm_fwd", name, shape,
                   time_cuda(lambda: forward(x, w, b)), nbytes=fwd_bytes)
            backward = prepare(x, w, b, dy)
            for what, got, want, tol in zip(("dx", "dw", "db"), backward(),
                                            ours["grads"], TOLS):
                checked(f"layernorm {name} {what} vs tegula {shape}", got,
                        want, tol, checks)
            record(rows, "layernorm_bwd", name, shape, time_cuda(backward),
                   nbytes=bwd_bytes)
        del x, w, b, dy, ours
    save_triton_ptx()


def save_triton_ptx():
    """The tutorial kernels' PTX as Triton compiled them, beside the results
    ($OUT/layernorm-triton/), to set against Tegula's (bench/README.md)."""
    folder = os.path.join(os.environ.get("OUT", "out"), "layernorm-triton")
    os.makedirs(folder, exist_ok=True)
    for (kind, block), kernel in baselines.TritonLayerNorm.compiled.items():
        asm = getattr(kernel, "asm", {})
        if "ptx" in asm:
            with open(os.path.join(folder, f"{kind}-{block}.ptx"), "w") as f:
                f.write(asm["ptx"])
