"""The eager path of tegula.ops (needs torch, else skipped; python.test):
an op's implementation run through _common.autograd_function gives the
values and gradients of the same implementation through its custom op,
and _common.eager sends traced (fake) tensors and torch.compile to the
custom op. The ops themselves run on the GPU: scripts/gpu/check-ops.py."""

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from tegula.ops import _common  # noqa: E402


def _scale_impl(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * w


_scale = torch.library.custom_op("tegula_test::scale", _scale_impl,
                                 mutates_args=())


@_scale.register_fake
def _scale_fake(x, w):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dy):
    x, w = ctx.saved_tensors
    return dy * w, (dy * x).sum(0)


_scale.register_autograd(_backward, setup_context=_setup)
_Eager = _common.autograd_function(_scale_impl, _setup, _backward)


def test_eager_function_matches_custom_op():
    g = torch.Generator().manual_seed(3)
    x0 = torch.randn(5, 7, generator=g, dtype=torch.float64)
    w0 = torch.nn.Parameter(torch.randn(7, generator=g, dtype=torch.float64))
    results = []
    for run in (_Eager.apply, torch.ops.tegula_test.scale):
        x = x0.clone().requires_grad_()
        w0.grad = None
        y = run(x, w0)
        (y * torch.arange(7.0, dtype=torch.float64)).sum().backward()
        results.append((y.detach(), x.grad, w0.grad.clone()))
    for a, b in zip(*results):
        assert torch.equal(a, b)
    assert torch.equal(results[0][2], (torch.arange(7.0, dtype=torch.float64)
                                       * x0).sum(0))


def test_eager_only_for_plain_tensors():
    x = torch.empty(3)
    assert _common.eager(x, torch.nn.Parameter(torch.empty(3)), None)
    with FakeTensorMode():
        fake = torch.empty(3)
    assert not _common.eager(x, fake)


def test_compiled_calls_take_the_custom_op():
    seen = []

    def f(x):
        seen.append(_common.eager(x))
        return x + 1

    torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
    assert seen == [False]


def test_eager_call_records_only_what_needs_a_gradient():
    """No input needing a gradient (or no_grad): the implementation itself,
    no autograd node; an input that needs one: the Function; a trace's
    tensors: None (the custom op)."""
    x, w = torch.ones(2, 3), torch.ones(3)
    assert _common.eager_call(_Eager, _scale_impl, x, w) is _scale_impl
    wg = torch.ones(3, requires_grad=True)
    assert _common.eager_call(_Eager, _scale_impl, x, wg) == _Eager.apply
    with torch.no_grad():
        assert _common.eager_call(_Eager, _scale_impl, x, wg) is _scale_impl
    with FakeTensorMode():
        fake = torch.empty(3)
    assert _common.eager_call(_Eager, _scale_impl, x, fake) is None


def test_eager_function_skips_signature_binding(monkeypatch):
    """The Function's forward takes ctx (old style), so apply never binds
    its arguments through inspect.signature (torch 2.11 does so for a
    forward without ctx, on every call)."""
    import inspect
    calls = []
    real = inspect.signature
    monkeypatch.setattr(inspect, "signature",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    y = _Eager.apply(torch.ones(2, 3), torch.ones(3, requires_grad=True))
    assert y.grad_fn is not None and calls == []


def test_compiled_calls_of_eager_call_take_the_custom_op():
    seen = []

    def f(x):
        seen.append(_common.eager_call(_Eager, _scale_impl, x))
        return x + 1

    torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
    assert seen == [None]


def test_views_key():
    """What a repeated kernel call depends on: each tensor's shape,
    strides, dtype, storage offset and device, after the scalars; None for
    a trace's tensors."""
    x = torch.ones(2, 3)[:, 1:]
    assert _common.views_key((x,), 0.5, True) == (
        0.5, True, torch.Size([2, 2]), (3, 1), torch.float32, 1, -1)
    with FakeTensorMode():
        fake = torch.empty(3)
    assert _common.views_key((x, fake)) is None


def test_views_key_in_a_compiled_call():
    """Under torch.compile no key (Dynamo cannot trace storage_offset's
    int into its graph: the op's checks run in the trace instead), and no
    graph break (stop 42's first try failed check-ops' fullgraph case)."""
    seen = []

    def f(x):
        seen.append(_common.views_key((x,), 1.0))
        return x + 1

    torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2))
    assert seen == [None]


def test_no_autograd():
    """A forward-only op runs its implementation itself only when nothing
    needs a gradient and nothing is traced."""
    x = torch.ones(2)
    assert _common.no_autograd(x, None)
    assert not _common.no_autograd(x, torch.ones(2, requires_grad=True))
    with torch.no_grad():
        assert _common.no_autograd(torch.ones(2, requires_grad=True))
    with FakeTensorMode():
        fake = torch.empty(3)
    assert not _common.no_autograd(x, fake)
