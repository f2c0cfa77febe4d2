"""Checks every Triton and eager peer of bench/baselines.py against float64.

On a GPU machine the tests run on CUDA; with TRITON_INTERPRET=1 they run on
the CPU through Triton's interpreter, at smaller sizes.
"""
import os

import pytest
import torch

pytest.importorskip("triton")

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
if INTERPRET:
    DEVICE = "cpu"
    # Triton 3.6's interpreter turns loop bounds into Python ints through
    # int() of a 1-element array, which numpy >= 2.4 refuses (triton#9171).
    numpy = pytest.importorskip("numpy")
    if tuple(int(p) for p in numpy.__version__.split(".")[:2]) >= (2, 4):
        pytest.skip("Triton's interpreter needs numpy < 2.4",
                    allow_module_level=True)
elif torch.cuda.is_available():
    DEVICE = "cuda"
else:
    pytest.skip("needs CUDA or TRITON_INTERPRET=1", allow_module_level=True)

import baselines as bl  # noqa: E402

# numpy < 2.4 still warns once per interpreted loop bound (see above).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim > 0:DeprecationWarning")

TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3}
DTYPES = [torch.bfloat16, torch.float16]


def randn(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device=DEVICE, dtype=dtype)


def check(out, ref, dtype):
    assert out.dtype == dtype and out.shape == ref.shape
    err = bl.rel_l2(out, ref)
    assert err < TOL[dtype], f"rel_l2 {err:.3e} >= {TOL[dtype]:.0e}"


# Attention: ragged N (not a multiple of any block), a single row, and on the
# GPU a longer sequence as well.
ATTN_N = [1, 100, 257] + ([] if INTERPRET else [1000])
ATTN_ZH = (1, 2) if INTERPRET else (2, 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", ATTN_N)
def test_attention(n, d, causal, dtype):
    torch.manual_seed(n * 1000 + d + causal)
    q, k, v = (randn(*ATTN_ZH, n, d, dtype=dtype) for _ in range(3))
    scale = d ** -0.5
    out = bl.triton_attention(q, k, v, causal, scale)
    check(out, bl.ref_attention(q, k, v, causal, scale), dtype)


def rotary_inputs(t, d, rot_dim, dtype):
    x = randn(2, t, 3, d, dtype=dtype)
    angle = torch.randn(t, rot_dim // 2, device=DEVICE) * 3
    return x, angle.cos(), angle.sin()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("d,rot_dim", [(128, 128), (128, 64), (64, 40)])
def test_rotary(d, rot_dim, interleaved, dtype):
    torch.manual_seed(d + rot_dim + interleaved)
    x, cos, sin = rotary_inputs(37, d, rot_dim, dtype)
    ref = bl.ref_rotary(x, cos, sin, interleaved)
    # NaN poison: any element the kernel fails to write shows in the error.
    poison = torch.full_like(x, float("nan"))
    out = bl.triton_rotary(x, cos, sin, interleaved, out=poison)
    assert out is poison
    check(out, ref, dtype)
    check(bl.triton_rotary(x, cos, sin, interleaved), ref, dtype)
    check(bl.eager_rotary(x, cos, sin, interleaved), ref, dtype)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rotary_in_place(interleaved):
    torch.manual_seed(7 + interleaved)
    x, cos, sin = rotary_inputs(37, 128, 64, torch.bfloat16)
    ref = bl.ref_rotary(x, cos, sin, interleaved)
    out = bl.triton_rotary(x, cos, sin, interleaved, out=x)
    assert out is x
    check(x, ref, torch.bfloat16)


LIN_SHAPES = [(1, 150, 2, 64, 64), (1, 150, 1, 128, 128)] if INTERPRET else \
    [(2, 150, 3, 64, 64), (2, 150, 3, 128, 128), (2, 1000, 4, 128, 64)]


@pytest.mark.parametrize("scale", [-0.3, 0.7])
@pytest.mark.parametrize("b,t,h,d,dv", LIN_SHAPES)
@pytest.mark.parametrize("impl", ["triton", "eager"])
def test_linear_attention(impl, b, t, h, d, dv, scale):
    torch.manual_seed(t + d + dv)
    q, k = randn(b, t, h, d), randn(b, t, h, d)
    v = randn(b, t, h, dv)
    fn = {"triton": bl.triton_linear_attention,
          "eager": bl.eager_linear_attention}[impl]
    check(fn(q, k, v, scale), bl.ref_linear_attention(q, k, v, scale),
          torch.bfloat16)


def test_rel_l2():
    ref = torch.tensor([3.0, 4.0])
    assert bl.rel_l2(ref, ref) == 0.0
    assert abs(bl.rel_l2(torch.tensor([3.0, 5.0]), ref) - 0.2) < 1e-12


# GEMM and RMSNorm: ragged shapes (no dimension a multiple of any block).
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", [(33, 47, 29), (130, 66, 200)])
def test_matmul(m, n, k, dtype):
    torch.manual_seed(m + n + k)
    a, b = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype)
    check(bl.triton_matmul(a, b), bl.ref_matmul(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("r,c", [(3, 100), (5, 3000)])
def test_rmsnorm(r, c, dtype):
    torch.manual_seed(r + c)
    x, w = randn(r, c, dtype=dtype), randn(c, dtype=dtype)
    ref = bl.ref_rmsnorm(x, w, 1e-6)
    check(bl.triton_rmsnorm(x, w, 1e-6), ref, dtype)
    check(bl.eager_rmsnorm(x, w, 1e-6), ref, dtype)


# LayerNorm (the Triton tutorial's): M not a multiple of the tutorial's
# group count, N not a power of two; the backward through autograd. dw and
# db get bf16's tolerance: the tutorial rounds its partial sums to x's
# dtype after every row.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n", [(3, 100), (333, 1000)])
def test_layer_norm(m, n, dtype):
    torch.manual_seed(m + n)
    x = randn(m, n, dtype=dtype) * 0.5 - 2.3
    w = torch.rand(n, device=DEVICE, dtype=dtype)
    b = torch.rand(n, device=DEVICE, dtype=dtype)
    dy = randn(m, n, dtype=dtype) * 0.1
    ref = bl.ref_layer_norm(x, w, b, 1e-5)
    ref_grads = bl.ref_layer_norm(x, w, b, 1e-5, dy)
    for fn in (bl.triton_layer_norm, bl.eager_layer_norm):
        leaves = [t.clone().requires_grad_() for t in (x, w, b)]
        y = fn(*leaves, 1e-5)
        check(y, ref, dtype)
        y.backward(dy)
        check(leaves[0].grad, ref_grads[0], dtype)
        for got, want in zip((leaves[1].grad, leaves[2].grad), ref_grads[1:]):
            assert got.dtype == dtype
            assert bl.rel_l2(got, want) < 1e-2


@pytest.mark.parametrize("n", [1000, 3000])
def test_axpy(n):
    torch.manual_seed(n)
    x, y = randn(n, dtype=torch.float32), randn(n, dtype=torch.float32)
    ref = 0.5 * x.double() + y.double()
    out = bl.triton_axpy(x, y.clone(), 0.5)
    assert out.dtype == torch.float32 and bl.rel_l2(out, ref) < 1e-6


def paged_inputs(b, h, hkv, d, page, lens, dtype=torch.bfloat16,
                 poison=False):
    """A shuffled cache with more pages than the sequences use; the table's
    unused entries point at valid pages (gather_sdpa_paged reads them). With
    `poison`, slots past each sequence hold NaN, which a kernel that masks
    its loads never lets through (gathering then masking scores does)."""
    max_pages = max(1, -(-max(lens) // page))
    num_pages = b * max_pages + 3
    k_cache = randn(num_pages, page, hkv, d, dtype=dtype)
    v_cache = randn(num_pages, page, hkv, d, dtype=dtype)
    perm = torch.randperm(num_pages)[:b * max_pages].to(torch.int32)
    table = perm.reshape(b, max_pages).to(DEVICE)
    for i, n in enumerate(lens):
        used = table[i, :-(-n // page)].long()
        tail = n % page
        if tail and poison:
            k_cache[used[-1], tail:] = float("nan")
            v_cache[used[-1], tail:] = float("nan")
    q = randn(b, h, d, dtype=dtype)
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=DEVICE)
    return q, k_cache, v_cache, table, seq_lens


PAGED_CASES = [(16, 64, 4, 1), (64, 128, 8, 2)] + \
    ([] if INTERPRET else [(256, 128, 32, 8), (32, 64, 8, 8)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("page,d,h,hkv", PAGED_CASES)
@pytest.mark.parametrize("impl", ["triton", "gather_sdpa"])
def test_paged_decode(impl, page, d, h, hkv, dtype):
    torch.manual_seed(page + d + h)
    # Ragged lengths: one key, a page and a bit, an empty sequence, several
    # pages ending mid-page.
    lens = [1, page + 3, 0, 3 * page - 5]
    q, k_cache, v_cache, table, seq_lens = paged_inputs(
        4, h, hkv, d, page, lens, dtype, poison=impl == "triton")
    scale = d ** -0.5
    ref = bl.ref_attention_paged(q, k_cache, v_cache, table, seq_lens, scale)
    if impl == "triton":
        out = bl.triton_paged_decode(q, k_cache, v_cache, table, seq_lens,
                                     scale)
    else:
        out = bl.gather_sdpa_paged(q, k_cache, v_cache, table, seq_lens,
                                   scale, max_len=max(lens))
    check(out, ref, dtype)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_varlen(causal):
    torch.manual_seed(11 + causal)
    bounds = [0, 5, 5, 70, 101]
    q = randn(110, 4, 64)
    k, v = randn(110, 2, 64), randn(110, 2, 64)
    ref = bl.ref_attention_varlen(q, k, v, bounds, causal, 0.125)
    out = bl.sdpa_varlen(q, k, v, bounds, causal, 0.125)
    check(out, ref, torch.bfloat16)
    assert not out[101:].any()


def test_ref_attention_gqa_bottom_right():
    # M > N: the first M - N queries see no key (0); the last sees them all.
    torch.manual_seed(3)
    q, k, v = randn(1, 4, 5, 16), randn(1, 2, 3, 16), randn(1, 2, 3, 16)
    ref = bl.ref_attention_gqa(q, k, v, True, 0.25)
    assert not ref[:, :, :2].any()
    full = bl.ref_attention_gqa(q, k, v, False, 0.25)
    assert torch.allclose(ref[:, :, -1], full[:, :, -1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_bias_gelu(dtype):
    torch.manual_seed(11)
    a, b, bias = randn(45, 53, dtype=dtype), randn(53, 37, dtype=dtype), \
        randn(37, dtype=dtype)
    ref = bl.ref_matmul_bias_gelu(a, b, bias)
    check(bl.triton_matmul_bias_gelu(a, b, bias), ref, dtype)
    check(bl.eager_matmul_bias_gelu(a, b, bias), ref, dtype)


@pytest.mark.parametrize("r,v", [(3, 300), (4, 5000)])
def test_cross_entropy(r, v):
    torch.manual_seed(r + v)
    x = randn(r, v, dtype=torch.bfloat16)
    t = torch.randint(0, v, (r,), device=DEVICE, dtype=torch.int32)
    t[1] = -100
    ref_loss, ref_lse = bl.ref_cross_entropy(x, t)
    loss, lse = bl.triton_cross_entropy(x, t)
    assert bl.rel_l2(loss, ref_loss) < 1e-5 and bl.rel_l2(lse, ref_lse) < 1e-5
    assert bl.rel_l2(bl.eager_cross_entropy(x, t), ref_loss) < 1e-5
