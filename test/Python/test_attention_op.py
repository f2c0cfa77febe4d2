"""tegula.ops.attention's plumbing without a GPU (needs torch, else
skipped; python.test): the layout argument and its errors, the strides of
the outputs the fake implementations give (what torch.compile traces) for
SDPA's [B, H, N, D], flash-attn's [B, N, H, D] and a fused qkv's slices,
and the op's wiring with its kernels emulated on the CPU: every view
reaches the kernels as it is (no copy), outputs come back in their
input's memory order, and the results match float64 autograd. The op
itself runs on the GPU: scripts/gpu/check-ops.py (check_attention's
layouts)."""

import pytest

torch = pytest.importorskip("torch")

import tegula  # noqa: E402
import tegula.ops  # noqa: E402
from tegula.ops import _attention  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402


def error_of(*args, **kwargs):
    with pytest.raises(tegula.LaunchError) as caught:
        tegula.ops.attention(*args, **kwargs)
    return caught.value


def qkv(device, layout="bhnd", b=2, h=4, hkv=2, m=10, n=12, d=64):
    if layout == "bhnd":
        shapes = ((b, h, m, d), (b, hkv, n, d))
    else:
        shapes = ((b, m, h, d), (b, n, hkv, d))
    return [torch.empty(shapes[0], dtype=torch.bfloat16, device=device),
            torch.empty(shapes[1], dtype=torch.bfloat16, device=device),
            torch.empty(shapes[1], dtype=torch.bfloat16, device=device)]


@pytest.mark.parametrize("layout", ["BHND", "bshd", "", None, 3])
def test_unknown_layout(layout):
    error = error_of(*qkv("cpu"), layout=layout)
    assert str(error) == (
        f"attention: argument 'layout' is {layout!r}: expected 'bhnd' "
        "(q [B, H, M, D], k and v [B, HKV, N, D]: SDPA's) or 'bnhd' "
        "(q [B, M, H, D], k and v [B, N, HKV, D]: flash-attn's)")
    assert error.argument == "layout"


def test_layout_errors_name_the_callers_dimensions():
    with FakeTensorMode():
        q, k, v = qkv("cuda", "bnhd")
        assert "argument 'q' has shape [10, 64]: expected [B, M, H, D]" in \
            str(error_of(q[0, :, 0], k, v, layout="bnhd"))
        assert "argument 'k' has shape [2, 12, 64]: expected " \
            "[B, N, HKV, D]" in str(error_of(q, k[:, :, 0], v, layout="bnhd"))
        # Heads are dimension 2 in "bnhd": 3 K/V heads do not divide 4.
        k3 = torch.empty(2, 12, 3, 64, dtype=torch.bfloat16, device="cuda")
        assert ("argument 'k' has shape [2, 12, 3, 64] but q has "
                "[2, 10, 4, 64]: k and v must both be [B, N, HKV, D] with "
                "q's B and D (N keys, any number; q has M = 10 queries)") in \
            str(error_of(q, k3, k3, layout="bnhd"))
        # The same tensors read as "bhnd": 12 K/V heads, q's 10 heads.
        assert ("argument 'k' has shape [2, 12, 2, 64] but q has "
                "[2, 10, 4, 64]: k and v must both be [B, HKV, N, D]") in \
            str(error_of(q, k, v))
    assert "argument 'q' is on cpu: expected a CUDA tensor" in \
        str(error_of(*qkv("cpu", "bnhd"), layout="bnhd"))


def dense(shape, order):
    """An empty CUDA tensor of `shape` stored in the dimension order
    `order` (outermost first)."""
    return torch.empty([shape[d] for d in order], dtype=torch.bfloat16,
                       device="cuda").permute(
                           [order.index(d) for d in range(len(shape))])


def strides_of(shape, order):
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d], step = step, step * shape[d]
    return tuple(strides)


def test_like_keeps_memory_order():
    """_like: dense, in its input's order, D last: torch.empty_like for a
    dense input; the dense order of a fused qkv's slice; an expanded
    input's stride-0 heads innermost but D."""
    with FakeTensorMode():
        bhnd = torch.empty(2, 4, 10, 64, device="cuda")
        bnhd = torch.empty(2, 10, 4, 64, device="cuda").transpose(1, 2)
        for t in (bhnd, bnhd):
            assert _attention._like(t).stride() == \
                torch.empty_like(t).stride()
        fused = torch.empty(2, 10, 3, 4, 64, device="cuda")[:, :, 1]
        got = _attention._like(fused.transpose(1, 2))
        assert got.shape == (2, 4, 10, 64)
        assert got.stride() == strides_of((2, 4, 10, 64), [0, 2, 1, 3])
        expanded = torch.empty(2, 1, 10, 64, device="cuda").expand(
            2, 4, 10, 64)
        assert _attention._like(expanded).stride() == \
            strides_of((2, 4, 10, 64), [0, 2, 1, 3])


LAYOUTS = {
    # name: (q's order, k's and v's order) of [B, H, N, D] dimensions
    "bhnd": ([0, 1, 2, 3], [0, 1, 2, 3]),
    "bnhd": ([0, 2, 1, 3], [0, 2, 1, 3]),
    "k bnhd": ([0, 1, 2, 3], [0, 2, 1, 3]),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_fake_strides(name):
    """The fakes give o, dq, dk, dv in q's, q's, k's and v's memory order,
    lse contiguous f32 [B, H, M]: the real op's strides."""
    q_order, kv_order = LAYOUTS[name]
    with FakeTensorMode():
        q = dense((2, 4, 10, 64), q_order)
        k, v = (dense((2, 2, 12, 64), kv_order) for _ in range(2))
        o, lse = torch.ops.tegula.attention_forward(q, k, v, True, 0.125)
        assert o.shape == q.shape and o.stride() == q.stride()
        assert lse.shape == (2, 4, 10) and lse.is_contiguous()
        assert lse.dtype == torch.float32
        dq, dk, dv = torch.ops.tegula.attention_backward(
            o, None, q, k, v, o, lse, True, 0.125)
        assert [t.stride() for t in (dq, dk, dv)] == \
            [t.stride() for t in (q, k, v)]


def test_fake_bnhd_through_the_op():
    """layout="bnhd": o comes back [B, M, H, D], contiguous for contiguous
    inputs, and for a fused qkv [B, N, 3, H, D]'s slices."""
    with FakeTensorMode():
        q, k, v = (t.to("cuda") for t in qkv("cpu", "bnhd"))
        o, lse = tegula.ops.attention(q, k, v, layout="bnhd",
                                      return_lse=True)
        assert o.shape == q.shape and o.is_contiguous()
        assert lse.shape == (2, 4, 10)
        fused = torch.empty(2, 10, 3, 4, 64, dtype=torch.bfloat16,
                            device="cuda")
        o = tegula.ops.attention(*fused.unbind(2), layout="bnhd")
        assert o.shape == (2, 10, 4, 64) and o.is_contiguous()


# --- The op's wiring, its kernels emulated on the CPU -------------------------
#
# Each kernel of kernels/attention_{fwd,bwd}.tile as a float64 function with
# the kernel's parameter names, writing its outputs through their views as
# the kernels do; each records the storage address and strides of every
# tensor it gets, so the test sees what reached the kernels.

def _probs(q, k, lse, causal, scale):
    group = q.shape[1] // k.shape[1]
    kb = k.double().repeat_interleave(group, 1)
    s = scale * q.double() @ kb.transpose(-1, -2)
    m, n = q.shape[2], k.shape[2]
    keep = torch.ones(m, n, dtype=torch.bool).tril(n - m)
    if not causal:
        keep[:] = True
    return torch.where(keep, torch.exp(s - lse.double()[..., None]), 0.0)


def _emulated(causal, seen):
    def record(entry, **tensors):
        seen.append((entry, {name: (t.data_ptr(), t.stride())
                             for name, t in tensors.items()}))

    def fwd(q, k, v, o, lse, scale):
        record("attention_fwd_lse", q=q, k=k, v=v, o=o, lse=lse)
        group = q.shape[1] // k.shape[1]
        kb, vb = (t.double().repeat_interleave(group, 1) for t in (k, v))
        s = scale * q.double() @ kb.transpose(-1, -2)
        if causal:
            m, n = q.shape[2], k.shape[2]
            keep = torch.ones(m, n, dtype=torch.bool).tril(n - m)
            s = s.masked_fill(~keep, float("-inf"))
        lse.copy_(torch.logsumexp(s, -1))
        o.copy_(torch.softmax(s, -1) @ vb)

    def preprocess(o, do, delta):
        record("attention_bwd_preprocess", o=o, do=do, delta=delta)
        delta.copy_((o.double() * do.double()).sum(-1))

    def grads(q, k, v, do, lse, delta, scale):
        group = q.shape[1] // k.shape[1]
        p = _probs(q, k, lse, causal, scale)
        kb, vb = (t.double().repeat_interleave(group, 1) for t in (k, v))
        ds = p * (do.double() @ vb.transpose(-1, -2) -
                  delta.double()[..., None])
        fold = (lambda t: t.reshape(k.shape[0], k.shape[1], group,
                                    *t.shape[2:]).sum(2))
        return (scale * ds @ kb, fold(scale * ds.transpose(-1, -2) @
                                      q.double()),
                fold(p.transpose(-1, -2) @ do.double()))

    def dkdv(q, k, v, do, lse, delta, dk, dv, scale):
        record("attention_bwd_dkdv", q=q, k=k, v=v, do=do, dk=dk, dv=dv)
        _, gk, gv = grads(q, k, v, do, lse, delta, scale)
        dk.copy_(gk)
        dv.copy_(gv)

    def dq(q, k, v, do, lse, delta, dq, scale):
        record("attention_bwd_dq", q=q, k=k, v=v, do=do, dq=dq)
        dq.copy_(grads(q, k, v, do, lse, delta, scale)[0])

    kernels = {"attention_fwd_lse": fwd, "attention_bwd_preprocess":
               preprocess, "attention_bwd_dkdv": dkdv,
               "attention_bwd_dq": dq}
    return lambda bundle, entry, on: kernels[entry]


def _reference(q, k, v, causal, scale):
    """o and lse of float64 [B, H, N, D] tensors, by autograd-friendly
    ops."""
    group = q.shape[1] // k.shape[1]
    kb, vb = (t.repeat_interleave(group, 1) for t in (k, v))
    s = scale * q @ kb.transpose(-1, -2)
    if causal:
        m, n = q.shape[2], k.shape[2]
        keep = torch.ones(m, n, dtype=torch.bool).tril(n - m)
        s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, -1) @ vb, torch.logsumexp(s, -1)


def _inputs(kind, b, h, hkv, m, n, d):
    """Leaf tensors and the q, k, v views of them the op gets, with the
    layout argument: SDPA's contiguous [B, H, N, D], flash-attn's
    [B, N, H, D], a fused qkv [B, N, H + 2 HKV, D] sliced by heads
    (flash-attn's layout, M = N), or k and v as one [B, N, 2, HKV, D]
    beside an SDPA-layout q."""
    def leaf(*shape):
        return torch.randn(*shape, dtype=torch.float32).requires_grad_()
    if kind == "bhnd":
        leaves = [leaf(b, h, m, d), leaf(b, hkv, n, d), leaf(b, hkv, n, d)]
        return leaves, leaves, "bhnd"
    if kind == "bnhd":
        leaves = [leaf(b, m, h, d), leaf(b, n, hkv, d), leaf(b, n, hkv, d)]
        return leaves, leaves, "bnhd"
    if kind == "fused qkv":
        fused = leaf(b, m, h + 2 * hkv, d)
        views = list(fused.split([h, hkv, hkv], dim=2))
        return [fused], views, "bnhd"
    q, kv = leaf(b, h, m, d), leaf(b, n, 2, hkv, d)
    views = [q] + [t.transpose(1, 2) for t in kv.unbind(2)]
    return [q, kv], views, "bhnd"


@pytest.mark.parametrize("kind", ["bhnd", "bnhd", "fused qkv", "kv pair"])
@pytest.mark.parametrize("causal,heads,kv_heads", [
    (False, 4, 4), (True, 4, 2), (True, 3, 1)])
def test_op_with_emulated_kernels(monkeypatch, kind, causal, heads,
                                  kv_heads):
    """Forward and backward of o and lse against float64 autograd; each
    kernel gets the caller's memory (the same addresses and strides, read
    in the kernels' [B, H, N, D] order: nothing copied); o, dq, dk and dv
    come back in their inputs' memory order (o contiguous in the caller's
    layout)."""
    from tegula.ops import _common
    seen = []
    monkeypatch.setattr(_common, "kernel", _emulated(causal, seen))
    # The checks want CUDA tensors; these run on the CPU.
    monkeypatch.setattr(_attention, "_check", lambda *args: None)
    torch.manual_seed(3)
    m = 9 if kind == "fused qkv" else 7
    leaves, (q, k, v), layout = _inputs(kind, 2, heads, kv_heads, m, 9, 8)
    scale = -0.4 if causal else 0.3
    o, lse = tegula.ops.attention(q, k, v, causal=causal, scale=scale,
                                  return_lse=True, layout=layout)
    do, dlse = torch.randn(o.shape), torch.randn(lse.shape)
    ((o * do).sum() + (lse * dlse).sum()).backward()

    # The float64 reference in the kernels' order.
    kq, kk, kv = (t.transpose(1, 2) if layout == "bnhd" else t
                  for t in (q, k, v))
    q64, k64, v64 = (t.detach().double().requires_grad_()
                     for t in (kq, kk, kv))
    o64, lse64 = _reference(q64, k64, v64, causal, scale)
    do64 = (do.transpose(1, 2) if layout == "bnhd" else do).double()
    ((o64 * do64).sum() + (lse64 * dlse.double()).sum()).backward()
    if layout == "bnhd":
        o64 = o64.transpose(1, 2)
    assert o.shape == q.shape and lse.shape == kq.shape[:3]
    assert torch.allclose(o.double(), o64, atol=1e-5)
    assert torch.allclose(lse.double(), lse64, atol=1e-5)
    assert o.is_contiguous() and lse.is_contiguous()

    # What reached the kernels.
    assert [entry for entry, _ in seen] == [
        "attention_fwd_lse", "attention_bwd_preprocess",
        "attention_bwd_dkdv", "attention_bwd_dq"]
    for entry, tensors in seen:
        for name, t in (("q", kq), ("k", kk), ("v", kv)):
            if name in tensors:
                assert tensors[name] == (t.data_ptr(), t.stride()), \
                    (entry, name)
    fwd, pre, dkdv, dq = (tensors for _, tensors in seen)
    assert pre["o"] == fwd["o"] and dq["dq"][1] == fwd["o"][1]
    for name, t in (("dk", kk), ("dv", kv)):
        # A dense k keeps its memory order; a slice of a fused tensor gets
        # the dense [B, N, HKV, D] memory of its order. (The stride of a
        # dimension of size 1, HKV = 1, is any.)
        want = t.stride() if kind in ("bhnd", "bnhd") else \
            strides_of(t.shape, [0, 2, 1, 3])
        assert [s for s, n in zip(dkdv[name][1], t.shape) if n > 1] == \
            [s for s, n in zip(want, t.shape) if n > 1], name

    # The leaves' gradients against float64 autograd.
    want = {"q": q64.grad, "k": k64.grad, "v": v64.grad}
    if layout == "bnhd":
        want = {n: g.transpose(1, 2) for n, g in want.items()}
    if kind == "fused qkv":
        want = [torch.cat([want[n] for n in "qkv"], 2)]
    elif kind == "kv pair":
        want = [want["q"], torch.stack([want["k"].transpose(1, 2),
                                        want["v"].transpose(1, 2)], 2)]
    else:
        want = [want[n] for n in "qkv"]
    for leaf, grad in zip(leaves, want):
        assert leaf.grad.shape == grad.shape
        assert torch.allclose(leaf.grad.double(), grad, atol=1e-5)


@pytest.mark.parametrize("kind", ["bhnd", "bnhd", "fused qkv", "kv pair"])
def test_opcheck_with_emulated_kernels(monkeypatch, kind):
    """torch.library.opcheck of the forward (its autograd formula runs the
    backward op) on each layout's views: schema, the fakes against the
    real outputs (strides included), autograd registration, AOT dispatch."""
    from tegula.ops import _common
    monkeypatch.setattr(_common, "kernel", _emulated(True, []))
    torch.manual_seed(5)
    _, views, layout = _inputs(kind, 2, 4, 2, 9, 9, 8)
    if layout == "bnhd":
        views = [t.transpose(1, 2) for t in views]
    q, k, v = (t.detach().requires_grad_() for t in views)
    torch.library.opcheck(torch.ops.tegula.attention_forward,
                          (q, k, v, True, 0.125))


def test_checks_skipped_only_for_signatures_that_passed(monkeypatch):
    """A call whose tensors have the shapes, strides, dtypes, offsets and
    devices of one that passed skips the checks; a failing call raises every time (nothing
    remembered), and anything but plain tensors is checked every call."""
    from tegula.ops import _common
    monkeypatch.setattr(_common, "kernel", _emulated(False, []))
    monkeypatch.setattr(_attention, "_checked", _common.CheckedSignatures())
    calls = []
    real = _attention._check

    def check(q, k, v, layout):
        calls.append(layout)
        if q.get_device() < 0 and q.shape[2] != 7:
            real(q, k, v, layout)  # a CPU tensor: the real check's error
    monkeypatch.setattr(_attention, "_check", check)
    q, k, v = (torch.randn(1, 2, 7, 8) for _ in range(3))
    for _ in range(3):
        tegula.ops.attention(q, k, v)
    assert calls == ["bhnd"]
    tegula.ops.attention(q, k, v, layout="bnhd")  # another signature
    assert calls == ["bhnd", "bnhd"]
    bad = [torch.randn(1, 2, 5, 8) for _ in range(3)]
    for _ in range(2):
        assert "expected torch.bfloat16 or torch.float16" in \
            str(error_of(*bad))
    assert calls == ["bhnd", "bnhd", "bhnd", "bhnd"]
    # Not plain tensors: no key, checked on each call.
    assert _common.views_key((q, "k", v)) is None
    seen = _common.CheckedSignatures()
    assert None not in seen
    seen.add(None)
    assert None not in seen
    monkeypatch.setattr(_common.CheckedSignatures, "LIMIT", 2)
    for key in ((1,), (2,), (3,)):
        seen.add(key)
    assert (3,) in seen and (1,) not in seen
