"""What every op does to find its kernel: the prebuilt bundle for the GPU
that holds its tensors (tegula/_prebuilt.py)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import _prebuilt
from .._kernel import Kernel


def kernel(bundle: str, entry: str, on: Tensor) -> Kernel:
    """Kernel `entry` of prebuilt `bundle`, for the GPU `on` lives on."""
    capability = torch.cuda.get_device_capability(on.device)
    return _prebuilt.kernel(bundle, entry, capability)
