"""What every op does to find its kernel: the prebuilt bundle for the GPU
that holds its tensors (tegula/_prebuilt.py)."""

from __future__ import annotations

import functools

import torch
from torch import Tensor

from .. import _prebuilt
from .._kernel import Kernel


def kernel(bundle: str, entry: str, on: Tensor) -> Kernel:
    """Kernel `entry` of prebuilt `bundle`, for the GPU `on` lives on."""
    capability = torch.cuda.get_device_capability(on.device)
    return _prebuilt.kernel(bundle, entry, capability)


@functools.lru_cache(maxsize=None)
def _multiprocessors(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def multiprocessors(on: Tensor) -> int:
    """The multiprocessor count of the GPU `on` lives on, read once per
    device (ops pick kernels by it on every call)."""
    return _multiprocessors(on.device.index if on.device.index is not None
                            else torch.cuda.current_device())
