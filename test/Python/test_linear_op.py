"""The wiring of tegula.ops.chunk_linear_attention and
fused_recurrent_linear_attention without a GPU (needs torch, else skipped;
python.test): their kernels (kernels/linear_attention_chunked.tile)
emulated in float64 on the CPU by their formulas, the ops' outputs and
gradients (q, k, v and the initial state) against float64 autograd of the
step recurrence at a ragged length, on the eager path (no dispatcher,
repeated launches) and through the custom ops (opcheck). The kernels
themselves run on the GPU: scripts/gpu/check-gla-ops.py."""

import pytest

torch = pytest.importorskip("torch")

import tegula.ops  # noqa: E402
from tegula.ops import _common, _gla, _linear_attention  # noqa: E402

C = _linear_attention.CHUNK


def _chunks(t):
    """[B, T, H, X] float64 as a list of its [B, <= C, H, X] chunks."""
    return list(t.double().split(C, dim=1))


def _emulated(seen):
    def states(k, v, h0, hs, ht):
        seen.append("chunk_linear_states")
        b, _, h, kd = k.shape
        s = (h0.double() if h0.numel() else
             torch.zeros(b, h, kd, v.shape[-1], dtype=torch.float64))
        for c, (kc, vc) in enumerate(zip(_chunks(k), _chunks(v))):
            hs[:, c] = s
            s = s + torch.einsum("bthk,bthv->bhkv", kc, vc)
        ht.copy_(s)

    def output(q, k, v, hs, o, scale):
        seen.append("chunk_linear_output")
        outs = []
        for c, (qc, kc, vc) in enumerate(zip(_chunks(q), _chunks(k),
                                             _chunks(v))):
            a = torch.einsum("bihk,bjhk->bhij", qc, kc).tril()
            outs.append(scale * (
                torch.einsum("bthk,bhkv->bthv", qc, hs[:, c].double()) +
                torch.einsum("bhij,bjhv->bihv", a, vc)))
        o.copy_(torch.cat(outs, 1))

    def dh(q, do, dht, dhs, dh0, scale):
        seen.append("chunk_linear_bwd_dh")
        b, _, h, kd = q.shape
        g = (dht.double() if dht.numel() else
             torch.zeros(b, h, kd, do.shape[-1], dtype=torch.float64))
        pairs = list(zip(_chunks(q), _chunks(do)))
        for c in reversed(range(len(pairs))):
            dhs[:, c] = g
            g = g + scale * torch.einsum("bthk,bthv->bhkv", *pairs[c])
        if dh0.numel():
            dh0.copy_(g)

    def dqk(q, k, v, do, hs, dhs, dq, dk, scale):
        seen.append("chunk_linear_bwd_dqk")
        gq, gk = [], []
        for c, (qc, kc, vc, dc) in enumerate(zip(
                _chunks(q), _chunks(k), _chunks(v), _chunks(do))):
            da = scale * torch.einsum("bihv,bjhv->bhij", dc, vc).tril()
            gq.append(scale * torch.einsum("bthv,bhkv->bthk", dc,
                                           hs[:, c].double()) +
                      torch.einsum("bhij,bjhk->bihk", da, kc))
            gk.append(torch.einsum("bthv,bhkv->bthk", vc,
                                   dhs[:, c].double()) +
                      torch.einsum("bhij,bihk->bjhk", da, qc))
        dq.copy_(torch.cat(gq, 1))
        dk.copy_(torch.cat(gk, 1))

    def dv(q, k, do, dhs, dv, scale):
        seen.append("chunk_linear_bwd_dv")
        out = []
        for c, (qc, kc, dc) in enumerate(zip(_chunks(q), _chunks(k),
                                             _chunks(do))):
            a = torch.einsum("bihk,bjhk->bhij", qc, kc).tril()
            out.append(scale * torch.einsum("bhij,bihv->bjhv", a, dc) +
                       torch.einsum("bthk,bhkv->bthv", kc,
                                    dhs[:, c].double()))
        dv.copy_(torch.cat(out, 1))

    def recurrent(q, k, v, h0, o, ht, scale):
        seen.append("recurrent_linear_fwd")
        b, t, h, kd = q.shape
        s = (h0.double() if h0.numel() else
             torch.zeros(b, h, kd, v.shape[-1], dtype=torch.float64))
        for i in range(t):
            s = s + k[:, i, :, :, None].double() * v[:, i, :, None, :]
            o[:, i] = scale * torch.einsum("bhk,bhkv->bhv", q[:, i].double(),
                                           s)
        ht.copy_(s)

    kernels = {"recurrent_linear_fwd": recurrent,
               "chunk_linear_states": states, "chunk_linear_output": output,
               "chunk_linear_bwd_dh": dh, "chunk_linear_bwd_dqk": dqk,
               "chunk_linear_bwd_dv": dv}
    return lambda bundle, entry, on: kernels[entry]


def _reference(q, k, v, h0, scale):
    """o and the final state by the step recurrence (float64 autograd)."""
    s = h0
    out = []
    for t in range(q.shape[1]):
        s = s + k[:, t, :, :, None] * v[:, t, :, None, :]
        out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], s))
    return torch.stack(out, 1), s


def _inputs(b=2, t=150, h=3, kd=8, vd=16, seed=7):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(b, t, h, kd, generator=g) for _ in range(2))
    v = torch.randn(b, t, h, vd, generator=g)
    h0 = torch.randn(b, h, kd, vd, generator=g)
    return [x.requires_grad_() for x in (q, k, v, h0)]


@pytest.fixture
def seen(monkeypatch):
    calls = []
    monkeypatch.setattr(_common, "kernel", _emulated(calls))
    # The checks want CUDA tensors; these run on the CPU.
    monkeypatch.setattr(_gla, "_check", lambda *args: None)
    return calls


@pytest.mark.parametrize("form,scale", [
    ("chunk", None), ("chunk", -0.6), ("fused_recurrent", -0.6)])
def test_eager_op_against_the_recurrence(seen, form, scale):
    """Forward and backward, twice (the second call's launches are
    repeats), against float64 autograd: o, ht, dq, dk, dv, dh0. The
    recurrent form has its own forward and the chunked backward."""
    q, k, v, h0 = _inputs()
    c = q.shape[-1] ** -0.5 if scale is None else scale
    q64, k64, v64, h064 = (x.detach().double().requires_grad_()
                           for x in (q, k, v, h0))
    o64, ht64 = _reference(q64, k64, v64, h064, c)
    g = torch.Generator().manual_seed(8)
    do, dht = torch.randn(o64.shape, generator=g), \
        torch.randn(ht64.shape, generator=g)
    ((o64 * do.double()).sum() + (ht64 * dht.double()).sum()).backward()
    for _ in range(2):
        for x in (q, k, v, h0):
            x.grad = None
        o, ht = getattr(tegula.ops, form + "_linear_attention")(
            q, k, v, scale=scale, initial_state=h0, output_final_state=True)
        ((o * do).sum() + (ht * dht).sum()).backward()
        for got, want in ((o, o64), (ht, ht64), (q.grad, q64.grad),
                          (k.grad, k64.grad), (v.grad, v64.grad),
                          (h0.grad, h064.grad)):
            assert torch.allclose(got.double(), want, rtol=1e-4, atol=1e-4)
    forward = (["recurrent_linear_fwd"] if form == "fused_recurrent" else
               ["chunk_linear_states", "chunk_linear_output"])
    one = forward + ["chunk_linear_states", "chunk_linear_bwd_dh",
                     "chunk_linear_bwd_dqk", "chunk_linear_bwd_dv"]
    assert seen == one + one


def test_no_final_state_and_no_gradient(seen):
    """output_final_state=False returns None; without gradients only the
    forward's two kernels run."""
    q, k, v, _ = _inputs(t=37)
    with torch.no_grad():
        o, ht = tegula.ops.chunk_linear_attention(q, k, v, scale=0.3)
    want, _ = _reference(*(x.double() for x in (q, k, v)),
                         torch.zeros(2, 3, 8, 16, dtype=torch.float64), 0.3)
    assert ht is None
    assert torch.allclose(o.double(), want, rtol=1e-4, atol=1e-4)
    assert seen == ["chunk_linear_states", "chunk_linear_output"]


@pytest.mark.parametrize("with_h0,recurrent", [
    (True, False), (False, False), (True, True)])
def test_opcheck(seen, with_h0, recurrent):
    """torch.library.opcheck of the forward op (its autograd formula runs
    the backward op): schema, fakes, autograd registration, AOT dispatch."""
    q, k, v, h0 = _inputs(t=70)
    torch.library.opcheck(torch.ops.tegula.linear_attention_forward,
                          (q, k, v, h0 if with_h0 else None, 0.125,
                           recurrent))


def _error(op, *args, **kwargs):
    with pytest.raises(tegula.LaunchError) as caught:
        getattr(tegula.ops, op)(*args, **kwargs)
    return caught.value


@pytest.mark.parametrize("op", ["chunk_linear_attention",
                                "fused_recurrent_linear_attention"])
def test_errors_name_the_argument(op):
    """Each error names the op and the argument (LaunchError.argument),
    before any kernel is looked up (fake CUDA tensors, no GPU)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(1, 20, 2, 64, dtype=torch.bfloat16, device="cuda")
        error = _error(op, x, x[:, :10], x)
        assert str(error) == (
            f"{op}: argument 'k' has shape [1, 10, 2, 64] but q has "
            "[1, 20, 2, 64]: q and k must be [B, T, H, K] alike")
        assert error.argument == "k"
        x96 = torch.empty(1, 20, 2, 96, dtype=torch.bfloat16, device="cuda")
        error = _error(op, x96, x96, x)
        assert str(error).startswith(
            f"{op}: key and value head dimensions K = 96 (q's last extent) "
            "and V = 64 (v's): tegula.ops ships K=8 V=16, K=64 V=64")
        assert error.argument == "q"
        error = _error(op, x, x, x, initial_state=torch.zeros(
            1, 2, 64, 32, device="cuda"))
        assert str(error) == (
            f"{op}: argument 'initial_state' is [1, 2, 64, 32]: expected "
            "[B, H, K, V] = [1, 2, 64, 64] on cuda:0")
        assert error.argument == "initial_state"
        error = _error(op, x, x.float(), x)
        assert str(error) == (f"{op}: argument 'k' is torch.float32: "
                              "expected torch.bfloat16 or torch.float16, "
                              "as q")
        assert error.argument == "k"
    error = _error(op, *(torch.empty(1, 4, 2, 64, dtype=torch.bfloat16)
                         for _ in range(3)))
    assert str(error) == (f"{op}: argument 'q' is on cpu: expected a CUDA "
                          "tensor on q's device")
    with pytest.raises(TypeError, match=f"^{op}: k must be a torch.Tensor, "
                       "got NoneType$"):
        getattr(tegula.ops, op)(x, None, x)
