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
