"""What every op does to find its kernel (the prebuilt bundle for the GPU
that holds its tensors, tegula/_prebuilt.py), and how an eager call skips
the dispatcher."""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Tuple

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
    dispatch costs 10-20 us of host time per call, more than the launch."""
    if torch.compiler.is_compiling():
        return False
    return all(t is None or type(t) in _PLAIN for t in tensors)


def autograd_function(forward: Callable, setup_context: Callable,
                      backward: Callable) -> Any:
    """The torch.autograd.Function of an op's implementation and the
    formula its custom op registers (register_autograd's setup_context and
    backward): the eager path, the same code and gradients as the op."""
    return type(forward.__name__ + "_eager", (torch.autograd.Function,), {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward)})
