"""Checks bench/train_gla.py on the CPU: its pure-PyTorch GLA (the chunked
form that --impl naive trains with, and the step recurrence) against a
closed form in float64, forward and gradients, and a tiny model trained
for a few steps (finite, falling loss; same seed, same curve; --compare).

    python3 -m pytest -q bench/test_train_gla.py
"""
import json
import math
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_gla as tg  # noqa: E402


def closed_form_gla(q, k, v, g, scale, h0):
    """o_t = scale * (sum_{s <= t} (q_t * exp(G_t - G_s)) . k_s v_s
    + (q_t * exp(G_t)) S_0), G the inclusive cumulative sum of g: the GLA
    recurrence unrolled, per (b, h), with no state carried in a loop.
    Returns o and S_T = sum_s exp(G_T - G_s) k_s^T v_s + exp(G_T) S_0."""
    qh, kh, vh, gh = (x.transpose(1, 2) for x in (q, k, v, g))  # [B, H, T, *]
    gc = gh.cumsum(2)
    t = q.shape[1]
    o = torch.empty_like(vh)
    for i in range(t):
        w = (gc[:, :, i, None, :] - gc[:, :, :i + 1]).exp()   # [B, H, s, K]
        scores = (qh[:, :, i, None, :] * w * kh[:, :, :i + 1]).sum(-1)
        o[:, :, i] = scale * (
            torch.einsum("bhs,bhsv->bhv", scores, vh[:, :, :i + 1])
            + torch.einsum("bhk,bhkv->bhv",
                           qh[:, :, i] * gc[:, :, i].exp(), h0))
    w = (gc[:, :, -1, None, :] - gc).exp()
    st = (torch.einsum("bhsk,bhsv->bhkv", kh * w, vh)
          + gc[:, :, -1].exp()[..., None] * h0)
    return o.transpose(1, 2), st


def gla_inputs(b, t, h, kd, vd, seed):
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    q, k = randn(b, t, h, kd), randn(b, t, h, kd)
    v = randn(b, t, h, vd)
    # Log-space gates as the model makes them (<= 0), some strongly decaying.
    g = torch.nn.functional.logsigmoid(randn(b, t, h, kd) * 2)
    h0 = randn(b, h, kd, vd)
    return [x.requires_grad_() for x in (q, k, v, g, h0)]


FORMS = {
    "recurrent": tg.naive_recurrent_gla,
    "chunk16": tg.naive_chunk_gla,
    "chunk5": lambda *a, **kw: tg.naive_chunk_gla(*a, chunk=5, **kw),
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("t", [1, 16, 37])
def test_gla_forms_against_closed_form(form, t):
    """Outputs, final state and every gradient (q, k, v, g, h0) of each
    form against the closed form's, float64, at ragged T."""
    inputs = gla_inputs(2, t, 3, 8, 5, seed=t)
    scale = 0.3
    o, st = FORMS[form](*inputs[:4], scale=scale, initial_state=inputs[4],
                        output_final_state=True)
    o_ref, st_ref = closed_form_gla(*inputs[:4], scale, inputs[4])
    assert o.dtype == torch.float64 and st.dtype == torch.float64
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(st, st_ref, rtol=1e-10, atol=1e-10)
    gen = torch.Generator().manual_seed(99)
    do = torch.randn(o.shape, generator=gen, dtype=torch.float64)
    dst = torch.randn(st.shape, generator=gen, dtype=torch.float64)
    grads = torch.autograd.grad((o * do).sum() + (st * dst).sum(), inputs)
    grads_ref = torch.autograd.grad((o_ref * do).sum() + (st_ref * dst).sum(),
                                    inputs)
    for name, got, want in zip("q k v g h0".split(), grads, grads_ref):
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9,
                                   msg=lambda m, n=name: f"d{n}: {m}")


def test_gla_defaults_match_fla():
    """scale None is K ** -0.5; no initial state is a zero state; no final
    state unless asked; o in q's dtype; float32 inside for low precision."""
    q, k, v, g, _ = (x.detach() for x in gla_inputs(1, 20, 2, 16, 8, seed=3))
    o, st = tg.naive_chunk_gla(q, k, v, g)
    o_ref, _ = closed_form_gla(q, k, v, g, 16 ** -0.5,
                               torch.zeros(1, 2, 16, 8, dtype=torch.float64))
    assert st is None
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    qb, kb, vb = (x.bfloat16() for x in (q, k, v))
    o16, st16 = tg.naive_chunk_gla(qb, kb, vb, g.float(),
                                   output_final_state=True)
    assert o16.dtype == torch.bfloat16 and st16.dtype == torch.float32
    o16_ref, _ = tg.naive_recurrent_gla(qb, kb, vb, g.float())
    torch.testing.assert_close(o16, o16_ref, rtol=2e-2, atol=2e-2)


TINY = ["--impl", "naive", "--device", "cpu", "--layers", "1",
        "--hidden", "64", "--heads", "2", "--seq", "32", "--batch", "2",
        "--vocab", "256", "--lr", "3e-3", "--lr-warmup", "0"]


def test_model_shapes():
    """The GLA layer's dimensions at the bench's size (no weights built
    beyond one layer): head K = 64, V = 128, MLP 5632, low-rank gate."""
    args = tg.argparse.Namespace(hidden=2048, heads=16, expand_k=0.5,
                                 expand_v=1.0, norm_eps=1e-6,
                                 intermediate=tg.default_intermediate(2048))
    assert args.intermediate == 5632
    block = tg.GLABlock(args, tg.gla_kernel("naive"))
    attn = block.attn
    assert (attn.head_k, attn.head_v) == (64, 128)
    assert attn.q_proj.weight.shape == attn.k_proj.weight.shape == (1024, 2048)
    assert attn.v_proj.weight.shape == attn.g_proj.weight.shape == (2048, 2048)
    assert attn.gk_proj[0].weight.shape == (16, 2048)
    assert attn.gk_proj[1].weight.shape == (1024, 16)
    assert attn.gk_proj[1].bias is not None and attn.gk_proj[0].bias is None
    assert attn.o_proj.weight.shape == (2048, 2048)
    assert attn.g_norm.weight.shape == (128,)


def test_kernel_call():
    """What the model hands the pluggable kernel (as fla's and tegula's
    chunk_gla take it): q, k [B, T, H, K] and v [B, T, H, V] in the model's
    bf16, contiguous; gk float32, <= 0, of q's shape. With the recurrence
    in the chunked form's place the logits agree to bf16 rounding."""
    args = tg.argparse.Namespace(
        impl="naive", seed=0, vocab=100, hidden=64, heads=2, layers=2,
        expand_k=0.5, expand_v=1.0, norm_eps=1e-6, initializer_range=0.02,
        intermediate=tg.default_intermediate(64))
    seen = []

    def spy(q, k, v, gk):
        seen.append((q, k, v, gk))
        return tg.naive_recurrent_gla(q, k, v, gk)[0]

    model = tg.build_model(args, "cpu")
    ids = torch.randint(0, 100, (2, 24), generator=torch.Generator()
                        .manual_seed(0))
    logits = model(ids)
    for layer in model.layers:
        layer.attn.kernel = spy
    logits_rec = model(ids)
    assert len(seen) == 2
    for q, k, v, gk in seen:
        assert q.shape == k.shape == gk.shape == (2, 24, 2, 16)
        assert v.shape == (2, 24, 2, 32)
        assert q.dtype == k.dtype == v.dtype == torch.bfloat16
        assert gk.dtype == torch.float32 and (gk <= 0).all()
        assert all(x.is_contiguous() for x in (q, k, v, gk))
    assert logits.dtype == torch.bfloat16
    torch.testing.assert_close(logits_rec, logits, rtol=2e-2, atol=2e-2)


def test_tiny_training_run(tmp_path, capsys):
    """A tiny naive model trained on the CPU: finite losses starting near
    ln(vocab) and falling; the same seed gives the same curve; --compare
    passes on two identical runs and writes the plot."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert tg.main(TINY + ["--steps", "12", "--out", str(a)]) == 0
    assert tg.main(TINY + ["--steps", "12", "--out", str(b)]) == 0
    run = json.load(open(a))
    losses = run["losses"]
    assert len(losses) == 12 and all(math.isfinite(x) for x in losses)
    assert abs(losses[0] - math.log(256)) < 0.5
    assert losses[-1] < losses[0] - 0.1
    assert run["tokens_per_s"] > 0 and run["config"]["head_k"] == 16
    assert json.load(open(b))["losses"] == losses
    pytest.importorskip("matplotlib")
    plot = tmp_path / "loss.png"
    assert tg.main(["--compare", str(a), str(b), "--plot", str(plot)]) == 0
    assert "PASS naive vs naive" in capsys.readouterr().out
    assert plot.stat().st_size > 0
