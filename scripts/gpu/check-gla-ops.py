#!/usr/bin/env python3
"""tegula.ops.chunk_gla and fused_recurrent_gla on the GPU (needs torch; no
tilec). As check-ops.py: python3 scripts/gpu/check-gla-ops.py [--installed]
[--speed | --speed-only] [--seed N] after scripts/build-ops.sh here.

Forward and backward (q, k, v, g and the initial state) against the float64
step recurrence and its PyTorch autograd, on fresh random inputs (the seed
is printed; --seed N draws it again) at ragged lengths, outputs poisoned first; both forms, negative
and zero scales, f16 and bf16, f32 and bf16 gates, gates strong enough that
a factored exp(gc_i) exp(-gc_j) would overflow; errors raised before
launch; repeated launches (new tensors of the same views) bit-identical
to first launches; opcheck; torch.compile(fullgraph=True) and a CUDA graph
replay bit-identical to eager. --speed also times chunk_gla forward, backward
and forward + backward beside fla's, per kernel too (gla-bwd-speed.py's
timing; import fla: bench/on-device.sh installs its wheel into /tmp/site).
"""

import importlib.util
import os
import sys

if "--installed" not in sys.argv:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tegula  # noqa: E402
import tegula.ops  # noqa: E402
from tegula.ops import _common, _gla  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ops_report  # noqa: E402
from ops_report import poison, rel_l2, report  # noqa: E402

TOL = {torch.bfloat16: 1e-2, torch.float16: 3e-3}


def reference(q, k, v, g, scale, h0):
    """float64 o [B, T, H, V] and the final state [B, H, K, V], one step at a
    time (differentiable: autograd gives the reference gradients)."""
    b, t, h, kd = q.shape
    s = h0 if h0 is not None else q.new_zeros(b, h, kd, v.shape[-1])
    out = []
    for i in range(t):
        s = g[:, i].exp()[..., None] * s + k[:, i, :, :, None] * \
            v[:, i, :, None, :]
        out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, i], s))
    return torch.stack(out, 1), s


def gates(shape, kind):
    n = torch.randn(shape, device="cuda")
    if kind == "logsigmoid":
        return F.logsigmoid(n)
    if kind == "strong":  # down to about -25 a step
        return F.logsigmoid(4 * n - 6)
    if kind == "none":  # linear attention
        return torch.zeros_like(n)
    return 0.3 * n - 0.1  # "mixed": some positive (growth)


def check_gla(shape, value_dim, dtype, scale, use_h0=False, final=True,
              recurrent=False, gate="logsigmoid", gate_dtype=torch.float32,
              linear=False):
    """One call's forward and backward; linear=True is
    chunk_linear_attention (or its recurrent form): no gates."""
    b, t, h, kd = shape
    vshape = (b, t, h, value_dim)
    form = ("fused_recurrent_" if recurrent else "chunk_") + \
        ("linear_attention" if linear else "gla")
    if linear:
        gate = "none"
    name = (f"{form} {list(shape)} V={value_dim} {str(dtype)[6:]} g "
            f"{str(gate_dtype)[6:]} {gate} scale={scale}"
            f"{' h0' if use_h0 else ''}{' ht' if final else ''}")
    q, k = (torch.randn(shape, device="cuda").to(dtype) for _ in range(2))
    v = torch.randn(vshape, device="cuda").to(dtype)
    g = gates(shape, gate).to(gate_dtype)
    h0 = (torch.randn(b, h, kd, value_dim, device="cuda")
          if use_h0 else None)
    inputs = [x.requires_grad_() for x in (q, k, v, g, h0)
              if x is not None and not (linear and x is g)]
    do = torch.randn(vshape, device="cuda").to(dtype)
    dht = torch.randn(b, h, kd, value_dim, device="cuda")
    poison()
    fn = getattr(tegula.ops, form)
    gate_arg = () if linear else (g,)
    o, ht = fn(q, k, v, *gate_arg, scale=scale, initial_state=h0,
               output_final_state=final)
    loss = (o.float() * do.float()).sum()
    if final:
        loss = loss + (ht * dht).sum()
    loss.backward()
    ref_in = [x.detach().double().requires_grad_() for x in inputs]
    q64, k64, v64 = ref_in[:3]
    g64 = g.double() if linear else ref_in[3]
    h064 = ref_in[-1] if use_h0 else None
    c = kd ** -0.5 if scale is None else scale
    o64, ht64 = reference(q64, k64, v64, g64, c, h064)
    loss64 = (o64 * do.double()).sum()
    if final:
        loss64 = loss64 + (ht64 * dht.double()).sum()
    loss64.backward()
    names = ["dq", "dk", "dv"] + ([] if linear else ["dg"]) + \
        (["dh0"] if use_h0 else [])
    errors = {"o": rel_l2(o, o64)}
    if final:
        errors["ht"] = rel_l2(ht, ht64)
    for n, x, x64 in zip(names, inputs, ref_in):
        errors[n] = rel_l2(x.grad, x64.grad)
    got = [o] + ([ht] if final else []) + [x.grad for x in inputs]
    finite = all(torch.isfinite(x).all().item() for x in got)
    tol = max(TOL[dtype], TOL.get(gate_dtype, 0))
    report(finite and max(errors.values()) <= tol and
           (final or ht is None), name,
           " ".join(f"{n} {e:.2e}" for n, e in errors.items()) +
           f" (rel L2, tol {tol:g})" + ("" if finite else " NOT FINITE"))


def check_forms_agree():
    """A negative scale gives the same result in both forms (as for any
    scale: they compute one function)."""
    shape = (2, 77, 2, 64)
    q, k, g = (torch.randn(shape, device="cuda") for _ in range(3))
    q, k = q.bfloat16(), k.bfloat16()
    g = F.logsigmoid(g)
    v = torch.randn(2, 77, 2, 128, device="cuda").bfloat16()
    # GLA's forms, and linear attention's (its own chunked kernels, the
    # GLA recurrent kernel on zero gates).
    for name, chunked, recurrent, gate in (
            ("GLA", tegula.ops.chunk_gla, tegula.ops.fused_recurrent_gla,
             (g,)),
            ("linear attention", tegula.ops.chunk_linear_attention,
             tegula.ops.fused_recurrent_linear_attention, ())):
        o1, h1 = chunked(q, k, v, *gate, scale=-0.4, output_final_state=True)
        o2, h2 = recurrent(q, k, v, *gate, scale=-0.4,
                           output_final_state=True)
        e_o, e_h = rel_l2(o1, o2), rel_l2(h1, h2)
        report(e_o <= 1e-2 and e_h <= 1e-2, f"{name}: chunked and "
               "recurrent agree at scale -0.4",
               f"o {e_o:.2e} ht {e_h:.2e} (rel L2, tol 0.01)")


def check_errors():
    x = torch.randn(1, 20, 2, 64, device="cuda", dtype=torch.bfloat16)
    g = torch.zeros(1, 20, 2, 64, device="cuda")
    for label, call, text in (
            ("K = 96", lambda: tegula.ops.chunk_gla(
                x[..., :48].repeat(1, 1, 1, 2)[..., :96], x[..., :48].repeat(
                    1, 1, 1, 2)[..., :96], x, g[..., :48].repeat(1, 1, 1, 2)),
             "K = 96"),
            ("k's shape", lambda: tegula.ops.chunk_gla(x, x[:, :10], x, g),
             "argument 'k'"),
            ("v's length", lambda: tegula.ops.chunk_gla(x, x, x[:, :10], g),
             "argument 'v'"),
            ("g's dtype", lambda: tegula.ops.chunk_gla(
                x, x, x, g.to(torch.int32)), "argument 'g'"),
            ("initial_state", lambda: tegula.ops.chunk_gla(
                x, x, x, g, initial_state=torch.zeros(1, 2, 64, 32,
                                                      device="cuda")),
             "initial_state"),
            ("f32 q", lambda: tegula.ops.chunk_gla(
                x.float(), x.float(), x.float(), g), "argument 'q'"),
            ("CPU", lambda: tegula.ops.fused_recurrent_gla(
                x.cpu(), x.cpu(), x.cpu(), g.cpu()), "cpu"),
            ("linear k's shape", lambda: tegula.ops.chunk_linear_attention(
                x, x[:, :10], x), "argument 'k'"),
            ("linear K = 96", lambda: tegula.ops.chunk_linear_attention(
                x[..., :48].repeat(1, 1, 1, 2), x[..., :48].repeat(1, 1, 1, 2),
                x), "K = 96"),
            ("linear initial_state", lambda: tegula.ops.chunk_linear_attention(
                x, x, x, initial_state=torch.zeros(1, 2, 64, 32,
                                                   device="cuda")),
             "initial_state")):
        try:
            call()
            report(False, f"error {label}", "no LaunchError")
        except tegula.LaunchError as error:
            report(text in str(error), f"error {label}", str(error))


def check_opcheck_compile_graph():
    shape = (2, 70, 3, 64)
    q, k = (torch.randn(shape, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True) for _ in range(2))
    v = torch.randn(2, 70, 3, 128, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    g = F.logsigmoid(torch.randn(shape, device="cuda")).requires_grad_()
    h0 = torch.randn(2, 3, 64, 128, device="cuda", requires_grad=True)
    # (..., scale, recurrent, keep_scores): the chunked form keeping its
    # scores for the backward, and not; the recurrent form keeps none.
    for args in ((q, k, v, g, h0, 0.125, False, True),
                 (q, k, v, g, h0, 0.2, False, False),
                 (q, k, v, g, None, -0.3, True, True)):
        try:
            torch.library.opcheck(torch.ops.tegula.gla_forward, args)
            report(True, f"opcheck gla_forward h0={args[4] is not None} "
                   f"recurrent={args[6]} keep_scores={args[7]}",
                   "schema, fake, autograd, aot_dispatch_dynamic")
        except Exception as error:  # noqa: BLE001 - reported, not raised
            report(False, "opcheck gla_forward", repr(error)[:400])
    # (..., scale, recurrent): both forms; the recurrent with h0.
    for args in ((q, k, v, h0, 0.125, False), (q, k, v, None, -0.3, False),
                 (q, k, v, h0, 0.2, True)):
        try:
            torch.library.opcheck(torch.ops.tegula.linear_attention_forward,
                                  args)
            report(True, f"opcheck linear_attention_forward "
                   f"h0={args[3] is not None} recurrent={args[5]}",
                   "schema, fake, autograd, aot_dispatch_dynamic")
        except Exception as error:  # noqa: BLE001 - reported, not raised
            report(False, "opcheck linear_attention_forward",
                   repr(error)[:400])
    do = torch.randn(2, 70, 3, 128, device="cuda", dtype=torch.bfloat16)

    def gla_loss(q, k, v, g, h0):
        o, ht = tegula.ops.chunk_gla(q, k, v, g, initial_state=h0,
                                     output_final_state=True)
        return (o.float() * do).sum() + ht.sum()

    def linear_loss(q, k, v, h0):
        o, ht = tegula.ops.chunk_linear_attention(
            q, k, v, initial_state=h0, output_final_state=True)
        return (o.float() * do).sum() + ht.sum()

    check_compile_and_graph("chunk_gla", gla_loss, (q, k, v, g, h0))
    check_compile_and_graph("chunk_linear_attention", linear_loss,
                            (q, k, v, h0))


def check_repeats(label, module, call):
    """An op's calls on new tensors of the same views repeat each kernel's
    first launch with new pointers only (_common.Repeats): every Repeats of
    `module` serves some, and the results of a repeat are bit-identical to
    a first launch on the same tensors. call(x) runs the op (forward and
    backward) on the leaves x and returns what it computed."""
    runs = {name: r for name, r in vars(module).items()
            if isinstance(r, _common.Repeats)}

    def leaves():
        return [torch.randn(2, 100, 2, 64, device="cuda",
                            dtype=torch.bfloat16, requires_grad=True)
                for _ in range(3)] + [F.logsigmoid(torch.randn(
                    2, 100, 2, 64, device="cuda")).requires_grad_()]
    before = {name: r.served for name, r in runs.items()}
    call(leaves())
    x = leaves()
    repeated = call(x)
    served = {name[1:-4]: r.served - before[name]
              for name, r in runs.items()}
    # New Repeats (each thread's launches are its own: autograd runs the
    # backward on another) for first launches, then the kept ones back.
    for name in runs:
        setattr(module, name, _common.Repeats())
    try:
        first = call(x)
    finally:
        for name, r in runs.items():
            setattr(module, name, r)
    same = all(torch.equal(a, b) for a, b in zip(repeated, first))
    report(all(served.values()) and same, f"{label} repeats",
           f"calls served by repeats {served}; a repeat's results "
           f"{'bit-identical to' if same else 'DIFFER from'} a first launch")


def gla_calls(x):
    """chunk_gla in both chunked forms (T 100: states, scores, outputs;
    T 40: chunk_gla_fwd) with gradients, fused_recurrent_gla without."""
    q, k, v, g = x
    h0 = torch.ones(2, 2, 64, 64, device="cuda")
    o, ht = tegula.ops.chunk_gla(q, k, v, g, initial_state=h0,
                                 output_final_state=True)
    out = [o, ht, *torch.autograd.grad(o.float().square().sum() + ht.sum(),
                                       (q, k, v, g))]
    q, k, v, g = (t[:, :40] for t in x)
    o, _ = tegula.ops.chunk_gla(q, k, v, g, scale=-0.5)
    out += [o, *torch.autograd.grad(o.float().square().sum(), x)]
    with torch.no_grad():
        out += list(tegula.ops.fused_recurrent_gla(
            *(t[:, :3] for t in x), initial_state=h0,
            output_final_state=True))
    return out


def linear_calls(x):
    """chunk_linear_attention with gradients, its recurrent form
    without."""
    q, k, v, _ = x
    o, _ = tegula.ops.chunk_linear_attention(q, k, v)
    out = [o, *torch.autograd.grad(o.float().square().sum(), (q, k, v))]
    with torch.no_grad():
        out += list(tegula.ops.fused_recurrent_linear_attention(
            q, k, v, output_final_state=True))
    return out


def check_compile_and_graph(op, loss_of, leaves):
    """The gradients of loss_of(*leaves) through torch.compile(fullgraph=
    True) and a CUDA graph replay, each bit-identical to eager."""
    def step(fn=loss_of):
        return torch.autograd.grad(fn(*leaves), leaves)

    eager = step()
    # The forward compiled (one graph: the op and the loss around it), its
    # backward through the op's autograd formula, as training runs it.
    compiled = torch.compile(loss_of, fullgraph=True)
    try:
        got = step(compiled)
        same = all(torch.equal(a, b) for a, b in zip(got, eager))
        report(same, f"{op} torch.compile(fullgraph=True)",
               "gradients bit-identical to eager" if same else
               "differ from eager")
    except Exception as error:  # noqa: BLE001
        report(False, f"{op} torch.compile(fullgraph=True)",
               repr(error)[:400])
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    graph.replay()
    torch.cuda.synchronize()
    same = all(torch.equal(a, b) for a, b in zip(out, eager))
    report(same, f"{op} CUDA graph", "replay bit-identical to eager"
           if same else "replay differs from eager")


def check_speed():
    """chunk_gla beside fla's at one size per head dimension: forward,
    backward, forward + backward and each kernel's time, as
    gla-bwd-speed.py (the one copy of that timing) prints them."""
    spec = importlib.util.spec_from_file_location(
        "gla_bwd_speed", os.path.join(HERE, "gla-bwd-speed.py"))
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    try:
        from fla.ops.gla import chunk_gla as fla_chunk_gla
    except ImportError as error:
        report(None, "speed", f"fla not importable ({error})")
        fla_chunk_gla = None
    speed.speed(fla_chunk_gla, (64, 128, 256))


def check_values():
    """Every form, size, dtype and option against the reference."""
    for kd, vd in ((64, 64), (64, 128), (128, 128), (256, 256), (8, 16)):
        check_gla((2, 100, 3, kd), vd, torch.bfloat16, None, use_h0=True)
        check_gla((1, 37, 2, kd), vd, torch.float16, -0.3)
    check_gla((2, 130, 2, 64), 128, torch.bfloat16, 0.0, final=False)
    check_gla((1, 64, 2, 128), 128, torch.bfloat16, None, gate="strong")
    check_gla((2, 50, 2, 64), 64, torch.bfloat16, 0.2, gate="mixed",
              gate_dtype=torch.bfloat16, use_h0=True)
    check_gla((1, 1, 4, 64), 128, torch.bfloat16, None, use_h0=True)
    for kd, vd in ((64, 128), (8, 16), (256, 256)):
        check_gla((2, 45, 2, kd), vd, torch.bfloat16, -0.5, use_h0=True,
                  recurrent=True)
    check_gla((3, 1, 2, 64), 64, torch.float16, None, use_h0=True,
              recurrent=True)
    # The chunked forward (states, gate sums, scores, outputs), forced.
    _gla.FORWARD_CHUNKED = True
    for kd, vd in ((64, 64), (64, 128), (128, 128), (256, 256), (8, 16)):
        check_gla((2, 150, 2, kd), vd, torch.bfloat16, -0.2, use_h0=True)
    check_gla((1, 64, 2, 64), 128, torch.float16, None, gate="strong")
    check_gla((1, 1, 2, 64), 128, torch.bfloat16, None, use_h0=True)
    _gla.FORWARD_CHUNKED = None
    # chunk_linear_attention (kernels/linear_attention_chunked.tile):
    # every shipped size and dtype, ragged and within one chunk, with and
    # without h0 and ht, scales of both signs and 0, T = 1.
    for kd, vd in ((64, 64), (64, 128), (128, 128), (256, 256), (8, 16)):
        check_gla((2, 150, 2, kd), vd, torch.bfloat16, None, use_h0=True,
                  linear=True)
        check_gla((1, 37, 3, kd), vd, torch.float16, -0.6, linear=True)
    check_gla((2, 90, 2, 64), 128, torch.bfloat16, 0.0, final=False,
              linear=True)
    check_gla((3, 1, 2, 128), 128, torch.float16, 0.3, use_h0=True,
              linear=True)
    check_gla((1, 33, 3, 64), 64, torch.float16, -0.7, linear=True,
              recurrent=True, use_h0=True)
    check_gla((2, 45, 2, 8), 16, torch.bfloat16, -0.5, linear=True,
              recurrent=True, use_h0=True)
    check_gla((3, 1, 2, 256), 256, torch.bfloat16, None, linear=True,
              recurrent=True, use_h0=True)
    check_forms_agree()
    check_errors()
    from tegula.ops import _linear_attention
    check_repeats("chunk_gla", _gla, gla_calls)
    check_repeats("chunk_linear_attention", _linear_attention, linear_calls)


def main():
    ops_report.seed_inputs(sys.argv)
    if "--speed-only" not in sys.argv:
        check_values()
    check_opcheck_compile_graph()
    if "--speed" in sys.argv or "--speed-only" in sys.argv:
        check_speed()
    print(f"check-gla-ops: {ops_report.failures} failed", flush=True)
    return 1 if ops_report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
