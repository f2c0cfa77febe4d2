"""The wiring of tegula.ops.chunk_gla and fused_recurrent_gla without a GPU
(needs torch, else skipped; python.test). Stand-in kernels record every
launch (bundle, entry, each tensor's shape, strides and dtype, the scalars)
and fill their outputs from their inputs. The eager path (no dispatcher,
repeated launches, checks once per signature) must launch what the custom
ops launch (torch.ops.tegula.gla_forward and gla_backward, torch.compile's
path), with the same outputs and gradients, in all three forward forms;
opcheck holds the fakes to the implementations. The kernels' values are
checked against float64 on the GPU: scripts/gpu/check-gla-ops.py."""

import pytest

torch = pytest.importorskip("torch")

import tegula.ops  # noqa: E402
from tegula.ops import _common, _gla  # noqa: E402

# How many trailing tensors each kernel writes (kernels/gla*.tile).
OUTPUTS = {"chunk_gla_fwd": 3, "recurrent_gla_fwd": 2, "chunk_gla_cumsum": 1,
           "chunk_gla_states": 2, "chunk_gla_intra": 1,
           "chunk_gla_output": 1, "chunk_gla_bwd_dh": 2,
           "chunk_gla_bwd_da": 1, "chunk_gla_bwd_dqk_intra": 2,
           "chunk_gla_bwd_dqkg": 3, "chunk_gla_bwd_dv": 1}


def _stand_ins(seen):
    def kernel(bundle, entry, on):
        def launch(*tensors, **scalars):
            seen.append((bundle, entry, tuple(
                (tuple(t.shape), t.stride(), t.dtype) for t in tensors),
                tuple(sorted(scalars.items()))))
            n = OUTPUTS[entry]
            inputs, outputs = tensors[:-n], tensors[-n:]
            total = sum(float(t.double().sum()) for t in inputs)
            for i, out in enumerate(outputs):
                # A different value per element, a function of the inputs.
                ramp = torch.arange(out.numel(), dtype=torch.float64)
                out.copy_((1e-3 * (total + i) * torch.sin(ramp))
                          .reshape(out.shape))
        return launch
    return kernel


@pytest.fixture
def seen(monkeypatch):
    calls = []
    monkeypatch.setattr(_common, "kernel", _stand_ins(calls))
    # The checks want CUDA tensors; these run on the CPU.
    monkeypatch.setattr(_gla, "_check", lambda *args: None)
    monkeypatch.setattr(_gla, "_checked", _common.CheckedSignatures())
    return calls


def _inputs(t, kd=64, vd=64, seed=3, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(2, t, 2, kd, generator=g).to(dtype) for _ in "qk")
    v = torch.randn(2, t, 2, vd, generator=g).to(dtype)
    gate = torch.nn.functional.logsigmoid(torch.randn(2, t, 2, kd,
                                                      generator=g))
    h0 = torch.randn(2, 2, kd, vd, generator=g)
    return [x.requires_grad_() for x in (q, k, v, gate, h0)]


def _train_step(op, inputs, with_h0):
    """o, ht and every gradient of one forward and backward."""
    for x in inputs:
        x.grad = None
    q, k, v, gate, h0 = inputs
    o, ht = op(q, k, v, gate, scale=-0.3,
               initial_state=h0 if with_h0 else None,
               output_final_state=True)
    (o.float().sum() + 0.5 * ht.sum()).backward()
    return [o, ht] + [x.grad for x in inputs]


@pytest.mark.parametrize("form,t,with_h0", [
    ("chunk", 150, True), ("chunk", 150, False), ("chunk", 40, True),
    ("fused_recurrent", 7, True)])
def test_eager_path_launches_what_the_custom_ops_launch(
        seen, monkeypatch, form, t, with_h0):
    """Twice on the eager path (the second call repeats), then through the
    custom ops: the same launches, outputs and gradients."""
    op = getattr(tegula.ops, form + "_gla")
    inputs = _inputs(t)
    eager = [_train_step(op, inputs, with_h0) for _ in range(2)]
    eager_launches = list(seen)
    seen.clear()
    monkeypatch.setattr(_common, "eager_call", lambda *args: None)
    monkeypatch.setattr(_common, "eager", lambda *args: False)
    dispatched = _train_step(op, inputs, with_h0)
    assert eager_launches == seen + seen
    for a, b, c in zip(eager[0], eager[1], dispatched):
        if a is None:
            assert b is None and c is None
            continue
        assert torch.equal(a, b) and torch.equal(a, c)
    entries = [entry for _, entry, _, _ in seen]
    forward = {"fused_recurrent": ["recurrent_gla_fwd"],
               "chunk": (["chunk_gla_cumsum", "chunk_gla_states",
                          "chunk_gla_intra", "chunk_gla_output"]
                         if t > _gla._prebuilt.GLA_FWD_CHUNK else
                         ["chunk_gla_fwd"])}[form]
    # The backward takes the chunked forward's scores, else makes them.
    intra = [] if forward[-1] == "chunk_gla_output" else ["chunk_gla_intra"]
    assert entries == forward + [
        "chunk_gla_cumsum", "chunk_gla_states", "chunk_gla_bwd_dh"] + \
        intra + ["chunk_gla_bwd_da", "chunk_gla_bwd_dqk_intra",
                 "chunk_gla_bwd_dqkg", "chunk_gla_bwd_dv"]
    bundles = {entry: bundle for bundle, entry, _, _ in seen}
    assert bundles["chunk_gla_bwd_dh"].endswith(
        ("-h0" if with_h0 else "") + "-dht")


def test_no_gradient_keys_the_callers_tensors(seen, monkeypatch):
    """Without autograd the forward alone runs, keyed by the caller's
    views: strided inputs give the launches of their contiguous copies,
    and the checks run once per signature."""
    checks = []
    monkeypatch.setattr(_gla, "_check", lambda *args: checks.append(1))
    q, k, v, gate, _ = (x.detach() for x in _inputs(150))
    with torch.no_grad():
        o1, ht = tegula.ops.chunk_gla(q, k, v, gate, scale=0.2)
        o2, _ = tegula.ops.chunk_gla(q, k, v, gate, scale=0.2)
        qt = q.transpose(0, 1).contiguous().transpose(0, 1)
        o3, _ = tegula.ops.chunk_gla(qt, k, v, gate, scale=0.2)
    assert ht is None
    assert len(checks) == 2
    assert torch.equal(o1, o2) and torch.equal(o1, o3)
    assert seen[:4] == seen[4:8] == seen[8:]
    assert [entry for _, entry, _, _ in seen[:4]] == [
        "chunk_gla_cumsum", "chunk_gla_states", "chunk_gla_intra",
        "chunk_gla_output"]


@pytest.mark.parametrize("t,with_h0,recurrent", [
    (150, True, False), (40, False, False), (5, True, True)])
def test_opcheck(seen, t, with_h0, recurrent):
    """torch.library.opcheck of the forward op (its autograd formula runs
    the backward op): schema, fakes, autograd registration, AOT dispatch."""
    q, k, v, gate, h0 = _inputs(t, kd=8, vd=16)
    torch.library.opcheck(torch.ops.tegula.gla_forward,
                          (q, k, v, gate, h0 if with_h0 else None, 0.125,
                           recurrent, True))


@pytest.mark.parametrize("op", ["chunk_gla", "fused_recurrent_gla"])
def test_gate_errors_name_the_argument(op):
    """The gates' errors name the op and g (LaunchError.argument), before
    any kernel is looked up (fake CUDA tensors, no GPU)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(1, 20, 2, 64, dtype=torch.bfloat16, device="cuda")
        with pytest.raises(tegula.LaunchError) as caught:
            getattr(tegula.ops, op)(x, x, x, x.double())
        assert str(caught.value) == (
            f"{op}: argument 'g' is torch.float64: expected a float32, "
            "bfloat16 or float16 tensor")
        assert caught.value.argument == "g"
        with pytest.raises(tegula.LaunchError) as caught:
            getattr(tegula.ops, op)(x, x, x, x[:, :, :1])
        assert str(caught.value) == (
            f"{op}: argument 'g' has shape [1, 20, 1, 64] but q has "
            "[1, 20, 2, 64]: q, k and g must be [B, T, H, K] alike")
        assert caught.value.argument == "g"
