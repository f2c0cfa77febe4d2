"""tegula.ops.attention's layouts on the GPU, for check-ops.py: the
tensors each layout hands the op, and the op's speed on them beside
contiguous inputs."""

import torch

import tegula.ops
from ops_report import report, time_of


def attention_inputs(shape, kv_shape, dtype, layout):
    """q, k, v as the op gets them, in SDPA's [B, H, N, D] order: "bhnd"
    contiguous tensors; "bnhd" transposed views of contiguous [B, N, H, D]
    ones (the op's layout="bnhd"); "qkv" slices of one fused tensor,
    [B, N, 3, H, D] (multi-head) or [B, N, (H + 2 HKV) D] (GQA), as a
    model's qkv projection gives them (M = N). The caller's tensors and
    the layout argument come too."""
    b, h, m, d = shape
    hkv, n = kv_shape[1], kv_shape[2]
    if layout == "bhnd":
        views = [torch.randn(s, device="cuda").to(dtype).requires_grad_()
                 for s in (shape, kv_shape, kv_shape)]
        return views, views, "bhnd"
    if layout == "bnhd":
        given = [torch.randn(b, rows, heads, d, device="cuda").to(dtype)
                 .requires_grad_() for rows, heads in ((m, h), (n, hkv),
                                                       (n, hkv))]
    elif h == hkv:
        fused = torch.randn(b, n, 3, h, d, device="cuda").to(dtype) \
            .requires_grad_()
        given = list(fused.unbind(2))
    else:
        fused = torch.randn(b, n, (h + 2 * hkv) * d, device="cuda") \
            .to(dtype).requires_grad_()
        given = [t.view(b, n, -1, d)
                 for t in fused.split([h * d, hkv * d, hkv * d], -1)]
    return [t.transpose(1, 2) for t in given], given, "bnhd"


def check_layout_speed():
    """The op's forward + backward on flash-attn's [B, N, H, D] memory
    (layout="bnhd", read through strides) and on a fused qkv's slices,
    beside the same op on contiguous [B, H, N, D] tensors: within 3%
    (the kernels' unit-stride variants run the contiguous code). The copy
    the op made before (.contiguous() of each transposed view) is timed
    for reference."""
    for (b, n, h, d), causal in (((4, 4096, 16, 128), False),
                                 ((4, 4096, 32, 64), True),
                                 ((8, 1000, 16, 128), True)):
        sdpa = [torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16,
                            requires_grad=True) for _ in range(3)]
        flash = [torch.randn(b, n, h, d, device="cuda", dtype=torch.bfloat16,
                             requires_grad=True) for _ in range(3)]
        fused = torch.randn(b, n, 3, h, d, device="cuda",
                            dtype=torch.bfloat16, requires_grad=True)
        do_sdpa = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
        do_flash = do_sdpa.transpose(1, 2).contiguous()

        def step(tensors, do, layout="bhnd", copy=False):
            def run():
                args = tensors
                if copy:  # the op before strides: one copy per tensor
                    args = [t.transpose(1, 2).contiguous() for t in tensors]
                o = tegula.ops.attention(
                    *args, causal=causal,
                    layout="bhnd" if copy else layout)
                torch.autograd.grad(o, tensors, do.transpose(1, 2) if copy
                                    else do)
            return run

        cases = {"bhnd": step(sdpa, do_sdpa),
                 "bnhd": step(flash, do_flash, "bnhd"),
                 "qkv": step(list(fused.unbind(2)), do_flash, "bnhd"),
                 "bnhd copied": step(flash, do_flash, copy=True)}
        rounds = [{key: time_of(fn) for key, fn in cases.items()}
                  for _ in range(5)]
        t = {key: sorted(r[key] for r in rounds)[2] for key in cases}
        label = (f"speed layouts fwd+bwd [{b}, {n}, {h}, {d}] bf16"
                 f"{' causal' if causal else ''}")
        worst = max(t["bnhd"], t["qkv"]) / t["bhnd"]
        report(worst <= 1.03, label,
               f"bhnd {t['bhnd']:.3f} ms, bnhd {t['bnhd']:.3f} ms "
               f"({t['bnhd'] / t['bhnd']:.3f}x), fused qkv {t['qkv']:.3f} ms "
               f"({t['qkv'] / t['bhnd']:.3f}x), bnhd through copies "
               f"{t['bnhd copied']:.3f} ms ({t['bnhd copied'] / t['bhnd']:.3f}"
               f"x); median of 5 rounds of 20, target <= 1.03x")
