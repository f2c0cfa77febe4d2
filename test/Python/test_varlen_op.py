"""tegula.ops.attention_varlen without a GPU (needs torch, else skipped;
python.test): every argument error is raised before a launch, on CPU and
fake CUDA tensors, and the fake implementations give the shapes that
torch.compile traces. The op itself runs on the GPU:
scripts/gpu/check-ops.py (check_attention_varlens)."""

import pytest

torch = pytest.importorskip("torch")

import tegula  # noqa: E402
import tegula.ops  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402


def arguments(device, d=64, dtype=torch.bfloat16):
    q = torch.empty(10, 4, d, dtype=dtype, device=device)
    kv = torch.empty(12, 2, d, dtype=dtype, device=device)
    cu_q = torch.empty(3, dtype=torch.int32, device=device)
    cu_k = torch.empty(3, dtype=torch.int32, device=device)
    return [q, kv, kv, cu_q, cu_k, 6, 7]


def error_of(args):
    with pytest.raises(tegula.LaunchError) as caught:
        tegula.ops.attention_varlen(*args)
    return str(caught.value)


CASES = [
    ("rank", lambda a: [a[0][None]] + a[1:],
     "argument 'q' has shape [1, 10, 4, 64]: expected [total_q, H, D]"),
    ("k rank", lambda a: [a[0], a[1][None]] + a[2:],
     "argument 'k' has shape [1, 12, 2, 64]: expected [total_k, HKV, D]"),
    ("f32", lambda a: [a[0].float()] + a[1:],
     "argument 'q' is torch.float32: expected torch.bfloat16 or "
     "torch.float16"),
    ("v dtype", lambda a: a[:2] + [a[2].half()] + a[3:],
     "argument 'v' is torch.float16 but q is torch.bfloat16"),
    ("k's D", lambda a: [a[0], a[1][..., :32], a[2]] + a[3:],
     "argument 'k' has shape [12, 2, 32] but q has [10, 4, 64]"),
    ("heads", lambda a: [a[0][:, :3]] + a[1:],
     "argument 'k' has shape [12, 2, 64] but q has [10, 3, 64]"),
    ("v's rows", lambda a: a[:2] + [a[2][:11]] + a[3:], "argument 'v'"),
    ("cu int64", lambda a: a[:3] + [a[3].long()] + a[4:],
     "argument 'cu_seqlens_q' is torch.int64: expected torch.int32"),
    ("cu rank", lambda a: a[:4] + [a[4][None]] + a[5:],
     "argument 'cu_seqlens_k' has shape [1, 3]: expected [B + 1] bounds, "
     "B >= 1"),
    ("cu one bound", lambda a: a[:3] + [a[3][:1], a[4][:1]] + a[5:],
     "argument 'cu_seqlens_q' has shape [1]: expected [B + 1] bounds"),
    ("cu lengths", lambda a: a[:4] + [a[4][:2]] + a[5:],
     "argument 'cu_seqlens_k' has shape [2] but cu_seqlens_q has [3]"),
    ("max tensor", lambda a: a[:5] + [torch.tensor(6), 7],
     "argument 'max_seqlen_q' is tensor(6): expected a Python int >= 0"),
    ("max negative", lambda a: a[:6] + [-1],
     "argument 'max_seqlen_k' is -1: expected a Python int >= 0"),
    ("max bool", lambda a: a[:6] + [True],
     "argument 'max_seqlen_k' is True"),
]


@pytest.mark.parametrize("label,change,text", CASES,
                         ids=[c[0] for c in CASES])
def test_argument_errors_on_cpu(label, change, text):
    assert text in error_of(change(arguments("cpu")))


def test_head_size_and_device_errors():
    # D = 96 passes every check above it; CPU tensors then fail last.
    assert "head dimension D = 96 (q's last extent): " \
        "tegula.ops.attention_varlen ships D = 64 and 128" in \
        error_of(arguments("cpu", d=96))
    assert "argument 'q' is on cpu: expected a CUDA tensor" in \
        error_of(arguments("cpu"))
    with FakeTensorMode():
        args = arguments("cuda")
        args[4] = args[4].cpu()
        assert "argument 'cu_seqlens_k' is on cpu: expected a CUDA tensor" \
            in error_of(args)


@pytest.mark.parametrize("causal", [False, True])
def test_fake_shapes(causal):
    """What torch.compile traces: o as q, lse f32 [H, total_q], and the
    gradients shaped as q, k, v."""
    with FakeTensorMode():
        q, k, v, cu_q, cu_k, _, _ = arguments("cuda")
        o, lse = torch.ops.tegula.attention_varlen_forward(
            q, k, v, cu_q, cu_k, 6, 7, causal, 0.125)
        assert o.shape == q.shape and o.dtype == q.dtype
        assert lse.shape == (4, 10) and lse.dtype == torch.float32
        dq, dk, dv = torch.ops.tegula.attention_varlen_backward(
            o, None, q, k, v, o, lse, cu_q, cu_k, 6, 7, causal, 0.125)
        assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)


# --- The op's wiring, its kernels emulated on the CPU -------------------------
#
# Each kernel of kernels/attention_varlen*.tile as a float64 function with
# the kernel's own parameter names (a wrong keyword is a TypeError), writing
# the rows of each sequence only, as the kernels do. The op's forward and
# backward (custom ops, autograd, dlse folded into delta, zero-filled
# outputs, the bundle each call picks) then run on CPU tensors against
# autograd of a float64 reference.

def _sequences(cu_q, cu_k):
    bounds_q, bounds_k = cu_q.tolist(), cu_k.tolist()
    for b in range(len(bounds_q) - 1):
        yield bounds_q[b], bounds_q[b + 1], bounds_k[b], bounds_k[b + 1]


def _probs(q, k, lse, q0, q1, k0, k1, causal, scale, group):
    """P [H, Lq, Lk] of one sequence from lse [H, TQ] (0 where hidden)."""
    qb = q[q0:q1].double().transpose(0, 1)
    kb = k[k0:k1].double().transpose(0, 1).repeat_interleave(group, 0)
    s = scale * qb @ kb.transpose(-1, -2)
    i = torch.arange(q1 - q0)[:, None]
    j = torch.arange(k1 - k0)[None, :]
    keep = (j <= i + (k1 - k0) - (q1 - q0)) if causal else (i + j >= 0)
    p = torch.exp(s - lse[:, q0:q1].double()[..., None])
    return torch.where(keep, p, 0.0)


def _emulated(causal, calls):
    def fwd(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
            scale):
        group = q.shape[1] // k.shape[1]
        for q0, q1, k0, k1 in _sequences(cu_seqlens_q, cu_seqlens_k):
            qb = q[q0:q1].double().transpose(0, 1)
            kb, vb = (t[k0:k1].double().transpose(0, 1)
                      .repeat_interleave(group, 0) for t in (k, v))
            s = scale * qb @ kb.transpose(-1, -2)
            i = torch.arange(q1 - q0)[:, None]
            j = torch.arange(k1 - k0)[None, :]
            if causal:
                s = s.masked_fill(j > i + (k1 - k0) - (q1 - q0),
                                  float("-inf"))
            lb = torch.logsumexp(s, -1) if k1 > k0 else \
                torch.full(s.shape[:2], float("-inf"), dtype=s.dtype)
            p = torch.nan_to_num(torch.exp(s - lb[..., None]))
            o[q0:q1] = (p @ vb).transpose(0, 1).to(o.dtype)
            lse[:, q0:q1] = lb.float()

    def preprocess(o, do, delta=None):
        return (o.double() * do.double()).sum(-1).transpose(0, 1).float()

    def grads(q, k, v, do, lse, delta, cu_q, cu_k, scale):
        group = q.shape[1] // k.shape[1]
        for q0, q1, k0, k1 in _sequences(cu_q, cu_k):
            p = _probs(q, k, lse, q0, q1, k0, k1, causal, scale, group)
            vb = v[k0:k1].double().transpose(0, 1).repeat_interleave(group, 0)
            kb = k[k0:k1].double().transpose(0, 1).repeat_interleave(group, 0)
            gb = do[q0:q1].double().transpose(0, 1)
            ds = p * (gb @ vb.transpose(-1, -2) -
                      delta[:, q0:q1].double()[..., None])
            qb = q[q0:q1].double().transpose(0, 1)
            # Sum each K/V head's query heads: [H, Lk, D] -> [HKV, Lk, D].
            fold = (lambda t: t.reshape(k.shape[1], group, k1 - k0,
                                        k.shape[2]).sum(1).transpose(0, 1))
            yield ((q0, q1, scale * (ds @ kb).transpose(0, 1)),
                   (k0, k1, fold(scale * ds.transpose(-1, -2) @ qb),
                    fold(p.transpose(-1, -2) @ gb)))

    def dkdv(q, k, v, do, lse, delta, dk, dv, cu_seqlens_q, cu_seqlens_k,
             max_seqlen_k, scale):
        for _, (k0, k1, gk, gv) in grads(q, k, v, do, lse, delta,
                                         cu_seqlens_q, cu_seqlens_k, scale):
            dk[k0:k1], dv[k0:k1] = gk.to(dk.dtype), gv.to(dv.dtype)

    def dq(q, k, v, do, lse, delta, dq, cu_seqlens_q, cu_seqlens_k,
           max_seqlen_q, scale):
        for (q0, q1, g), _ in grads(q, k, v, do, lse, delta, cu_seqlens_q,
                                    cu_seqlens_k, scale):
            dq[q0:q1] = g.to(dq.dtype)

    kernels = {"attention_varlen_fwd": fwd,
               "attention_varlen_bwd_preprocess": preprocess,
               "attention_varlen_bwd_dkdv": dkdv,
               "attention_varlen_bwd_dq": dq}

    def kernel(bundle, entry, on):
        calls.append(bundle)
        return kernels[entry]
    return kernel


def _reference(q, k, v, cu_q, cu_k, causal, scale):
    """o and lse in float64 by autograd-friendly ops (rows without keys
    kept off the logsumexp; 0 and -inf there and in no sequence)."""
    group = q.shape[1] // k.shape[1]
    o = q.new_zeros(q.shape)
    lse = q.new_full((q.shape[1], q.shape[0]), float("-inf"))
    for q0, q1, k0, k1 in _sequences(cu_q, cu_k):
        qb = q[q0:q1].transpose(0, 1)
        kb, vb = (t[k0:k1].transpose(0, 1).repeat_interleave(group, 0)
                  for t in (k, v))
        s = scale * qb @ kb.transpose(-1, -2)
        i = torch.arange(q1 - q0)[:, None]
        j = torch.arange(k1 - k0)[None, :]
        keep = (j <= i + (k1 - k0) - (q1 - q0)) if causal else (i + j >= 0)
        sees = keep.any(-1)
        s = s.masked_fill(~keep, float("-inf"))
        s_safe = torch.where(sees[:, None], s, 0.0)
        l_safe = torch.logsumexp(s_safe, -1) if k1 > k0 else \
            s_safe.new_zeros(s_safe.shape[:2])
        p = torch.where(sees[:, None], torch.exp(s - l_safe[..., None]), 0.0)
        rows = torch.arange(q0, q1)
        o = o.index_copy(0, rows, (p @ vb).transpose(0, 1))
        lse = lse.index_copy(1, rows, torch.where(sees, l_safe, float("-inf")))
    return o, lse


@pytest.mark.parametrize("causal,heads,kv_heads", [
    (False, 4, 4), (True, 4, 4), (False, 6, 2), (True, 3, 1)])
def test_op_with_emulated_kernels(monkeypatch, causal, heads, kv_heads):
    """Queries 3, 2, 0, 5 against keys 2, 0, 4, 7, two rows of each side
    in no sequence: a loss of o and of the finite lse, gradients against
    float64 autograd; rows in no sequence 0 (lse -inf); the bundles picked
    (dK/dV's GROUPED build when HKV < H)."""
    from tegula.ops import _common
    calls = []
    monkeypatch.setattr(_common, "kernel", _emulated(causal, calls))
    torch.manual_seed(7)
    cu_q = torch.tensor([0, 3, 5, 5, 10], dtype=torch.int32)
    cu_k = torch.tensor([0, 2, 2, 6, 13], dtype=torch.int32)
    d, scale = 8, -0.4 if causal else 0.3
    q = torch.randn(12, heads, d, requires_grad=True)
    k, v = (torch.randn(15, kv_heads, d, requires_grad=True)
            for _ in range(2))
    do, dlse = torch.randn(12, heads, d), torch.randn(heads, 12)
    o, lse = torch.ops.tegula.attention_varlen_forward(
        q, k, v, cu_q, cu_k, 5, 7, causal, scale)
    finite = torch.isfinite(lse)
    ((torch.where(finite, lse, 0.0) * dlse).sum() + (o * do).sum()).backward()
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    o64, lse64 = _reference(q64, k64, v64, cu_q, cu_k, causal, scale)
    assert torch.equal(finite, torch.isfinite(lse64))
    ((torch.where(torch.isfinite(lse64), lse64, 0.0) * dlse.double()).sum()
     + (o64 * do.double()).sum()).backward()
    for got, want in ((o, o64), (lse[finite], lse64[finite]),
                      (q.grad, q64.grad), (k.grad, k64.grad),
                      (v.grad, v64.grad)):
        assert torch.allclose(got.double(), want, atol=1e-5), (got, want)
    # Rows in no sequence: queries 10, 11 and keys 13, 14.
    assert not o[10:].any() and not q.grad[10:].any()
    assert not k.grad[13:].any() and not v.grad[13:].any()
    assert (lse[:, 10:] == float("-inf")).all()
    grouped = "-grouped" if kv_heads < heads else ""
    mask = "-causal" if causal else ""
    assert calls == [f"attention-varlen-fwd-d8{mask}",
                     "attention-varlen-bwd-preprocess-d8",
                     f"attention-varlen-bwd-dkdv{grouped}-d8{mask}",
                     f"attention-varlen-bwd-dq-d8{mask}"]


def test_op_without_keys_launches_nothing(monkeypatch):
    """max_seqlen_k = 0: o = 0, lse = -inf, zero gradients, no kernel."""
    from tegula.ops import _common
    calls = []
    monkeypatch.setattr(_common, "kernel", _emulated(False, calls))
    q = torch.randn(4, 2, 8, requires_grad=True)
    k = torch.randn(3, 2, 8, requires_grad=True)
    cu_q = torch.tensor([0, 4], dtype=torch.int32)
    cu_k = torch.tensor([0, 0], dtype=torch.int32)
    o, lse = torch.ops.tegula.attention_varlen_forward(
        q, k, k, cu_q, cu_k, 4, 0, False, 0.5)
    o.sum().backward()
    assert not o.any() and (lse == float("-inf")).all()
    assert not q.grad.any() and not k.grad.any() and calls == []
