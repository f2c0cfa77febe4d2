"""What every op does to find its kernel (the prebuilt bundle for the GPU
that holds its tensors, tegula/_prebuilt.py), and how an eager call skips
the dispatcher."""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import torch
from torch import Tensor

from .. import _prebuilt
from .._kernel import Kernel

_kernels: Dict[Tuple[str, str, int], Kernel] = {}


def kernel(bundle: str, entry: str, on: Tensor) -> Kernel:
    """Kernel `entry` of prebuilt `bundle`, for the GPU `on` lives on
    (found once per device: ops look kernels up on every call)."""
    index = on.get_device()
    found = _kernels.get((bundle, entry, index))
    if found is None:
        capability = torch.cuda.get_device_capability(on.device)
        found = _kernels[(bundle, entry, index)] = _prebuilt.kernel(
            bundle, entry, capability)
    return found


@functools.lru_cache(maxsize=None)
def _multiprocessors(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def multiprocessors(on: Tensor) -> int:
    """The multiprocessor count of the GPU `on` lives on, read once per
    device (ops pick kernels by it on every call)."""
    return _multiprocessors(on.device.index if on.device.index is not None
                            else torch.cuda.current_device())


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def eager(*tensors: Any) -> bool:
    """True when a call may run its op's implementation directly, without
    the dispatcher: outside torch.compile and export, on plain tensors
    (not the fake or functional tensors a trace passes). The custom op's
    dispatch cost 10 us a call without autograd and 22 us with it, an
    autograd.Function's 1.4 and 3.4 (CPU torch 2.15 on the development
    machine, a trivial op), more than the launch itself."""
    return _needs_grad(tensors) is not None


def autograd_function(forward: Callable, setup_context: Callable,
                      backward: Callable) -> Any:
    """The torch.autograd.Function of an op's implementation and the
    formula its custom op registers (register_autograd's setup_context and
    backward): the eager path, the same code and gradients as the op.

    Its forward takes ctx and calls setup_context itself: torch 2.11's
    Function.apply binds a forward without ctx to its signature through
    inspect on every call (35 us of attention's 101 us a call on the H100
    machine's host, stop 39), which an old-style forward skips."""
    def forward_with_ctx(ctx: Any, *args: Any) -> Any:
        output = forward(*args)
        setup_context(ctx, args, output)
        return output
    return type(forward.__name__ + "_eager", (torch.autograd.Function,), {
        "forward": staticmethod(forward_with_ctx),
        "backward": staticmethod(backward)})


def no_autograd(*tensors: Any) -> bool:
    """True when a call of a forward-only op may run its implementation
    itself: eager() and no input needs a gradient (else the custom op
    runs, and autograd says it has no formula)."""
    return _needs_grad(tensors) is False


def eager_call(function: Any, impl: Callable, *tensors: Any
               ) -> Optional[Callable]:
    """What an eager call of an op runs: its implementation itself when no
    input needs a gradient (nothing to record), else `function`'s apply
    (its autograd_function); None where the custom op must run (eager()
    is false)."""
    needs = _needs_grad(tensors)
    if needs is None:
        return None
    return function.apply if needs else impl


def _needs_grad(tensors: Tuple[Any, ...]) -> Optional[bool]:
    """None where the custom op must run (eager()), else whether autograd
    must record the call: one pass over the tensors, on every op call."""
    if _is_compiling():
        return None
    grad = _grad_enabled()
    needs = False
    for t in tensors:
        if t is None:
            continue
        if type(t) not in _PLAIN:
            return None
        if grad and t.requires_grad:
            needs = True
    return needs


class CheckedSignatures:
    """The keys (views_key) of the calls whose checks passed, so that a
    repeated call skips them (attention's took 4 us of its 12.7 us of
    Python a call on the development machine, stop 41). Bounded: cleared
    past LIMIT entries."""

    LIMIT = 1024

    def __init__(self) -> None:
        self._seen: set = set()

    def __contains__(self, key: Optional[tuple]) -> bool:
        return key is not None and key in self._seen

    def add(self, key: Optional[tuple]) -> None:
        if key is None:
            return
        if len(self._seen) >= self.LIMIT:
            self._seen.clear()
        self._seen.add(key)


def views_key(tensors: Sequence[Any], *scalars: Any) -> Optional[tuple]:
    """What a kernel's checked call depends on, for Repeats: each tensor's
    shape, strides, dtype, storage offset and device, and the scalars; None
    when any is not a plain tensor (a trace's), and under torch.compile
    (Dynamo cannot put storage_offset's int in its graph: tracing a call
    checks it every time)."""
    if _is_compiling():
        return None
    key = list(scalars)
    for t in tensors:
        if type(t) not in _PLAIN:
            return None
        key += (t.shape, t.stride(), t.dtype, t.storage_offset(),
                t.get_device())
    return tuple(key)


def optional_views_key(tensors: Sequence[Optional[Any]],
                       *scalars: Any) -> Optional[tuple]:
    """views_key of the tensors present and which are (an optional input
    given or None)."""
    present = tuple(t is not None for t in tensors)
    return views_key([t for t in tensors if t is not None], present,
                     *scalars)


_UNSERVED = object()


class Repeats:
    """The repeated calls of one kernel of an op (Kernel._repeatable), by the
    op's views_key of its inputs: a repeat reads only the pointers. The op
    allocates the outputs, which follow from the inputs (their layouts are
    functions of the inputs' shapes and strides), so the inputs' key
    covers every tensor the kernel takes. An op that keys its calls in two
    ways (its caller's tensors, and the views it made of them) keeps the
    two kinds of key apart (one has an element the other lacks). Per
    thread, as the kernel's plans are; bounded, cleared past LIMIT entries.

    An attention call took 16.4 us on the development machine with the
    launch stubbed (stop 42), 3.6 of them in Kernel's scan of its six
    arguments and 2.8 in finding its kernel."""

    LIMIT = 256

    def __init__(self) -> None:
        self._local = threading.local()
        # Calls served by a repeat, over every thread (autograd runs the
        # backward on its own): what the GPU checks read.
        self.served = 0

    def launch(self, key: Optional[tuple], kernel: Callable[[], Kernel],
               tensors: Tuple[Tensor, ...], **scalars: Any) -> None:
        """Launches kernel() on tensors (its tensor parameters, in order)
        and scalars (by name)."""
        launches = getattr(self._local, "launches", None)
        if launches is None:
            launches = self._local.launches = {}
        found = launches.get(key) if key is not None else None
        if found is not None and found is not _UNSERVED and found(tensors):
            self.served += 1
            return
        run = kernel()
        if found is None and key is not None and isinstance(run, Kernel):
            if len(launches) >= self.LIMIT:
                launches.clear()
            launch = run._repeatable(*tensors, **scalars)
            launches[key] = _UNSERVED if launch is None else launch
            return
        # A repeat on another device, or a stand-in kernel (the tests').
        run(*tensors, **scalars)


_is_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
