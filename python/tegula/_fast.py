"""The fast path of a kernel call (Kernel._fast_call): a repeated call on
CUDA torch tensors finds its checked binding by one pass over the
arguments, which gathers the binding's key, the pointers and the strided
views' allocations together, and launches without the full path's checks.

Everything here runs on every call of every tegula.ops op, so it reads
each tensor attribute once and calls nothing it can look up ahead
(stop 39 measured 31 us a call through the old two-pass path on an H100
machine's host, twice Triton's launch)."""

from __future__ import annotations

import sys
from typing import Any, List, Optional, Sequence, Tuple

from . import _checks, _lib

# An output the caller left out (the launch allocates it).
MISSING = object()

# What a parameter is, for the scan: a scalar, a tensor, or a tensor whose
# view is checked against its allocation (Param.strided).
SCALAR, TENSOR, STRIDED = 0, 1, 2

def scan(values: Sequence[Any], kinds: Sequence[int], tensor_type: type
         ) -> Optional[Tuple[tuple, int, List[int], List[int]]]:
    """(key, device, pointers, bases) of a call whose every tensor given is
    a torch tensor on one CUDA device; None for any other call. The key
    holds what a checked binding depends on: each tensor's shape, strides
    and dtype (and, for a strided view, its offset in its storage), each
    scalar, and which outputs were left out (None). pointers and bases
    have a slot per parameter (0 for a scalar or an output left out).

    A strided view's base is its storage's start, from the view's own
    offset: torch keeps every view inside its storage, so a view at the
    checked offset with the checked shape and strides passes the C side's
    allocation check as the checked one did, whatever its storage's size.
    No storage object is made (0.22 against 0.26 us a view on the
    development machine, stop 41: a small part of a call)."""
    key: List[Any] = []
    pointers: List[int] = []
    bases: List[int] = []
    device: Optional[int] = None
    for kind, v in zip(kinds, values):
        if v is MISSING:
            key.append(None)
            pointers.append(0)
            bases.append(0)
        elif kind:
            if not isinstance(v, tensor_type):
                return None
            index = v.get_device()
            if index != device:
                # A second device, or a CPU tensor (-1).
                if device is not None or index < 0:
                    return None
                device = index
            pointer = v.data_ptr()
            pointers.append(pointer)
            if kind == STRIDED:
                offset = v.storage_offset()
                key += (v.shape, v.stride(), v.dtype, offset)
                bases.append(pointer - offset * v.element_size())
            else:
                key += (v.shape, v.stride(), v.dtype)
                bases.append(0)
        else:
            key.append(_checks.scalar_key(v))
            pointers.append(0)
            bases.append(0)
    if device is None:
        return None
    key.append(device)
    return tuple(key), device, pointers, bases


class Torch:
    """PyTorch's entry points the fast path calls, looked up once (torch is
    imported by then: the arguments are its tensors)."""

    def __init__(self, torch: Any) -> None:
        self.module = torch
        self.empty = torch.empty
        c = torch._C
        # The raw calls where this torch has them: no torch.device or
        # torch.cuda.Stream built (Triton's launcher reads them too).
        self.current_device = getattr(c, "_cuda_getDevice", None) or (
            lambda: torch.cuda.current_device())
        self.stream = getattr(c, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)


_torch: Optional[Torch] = None


def torch_entry_points() -> Torch:
    """Torch of the torch module imported now (the tests put a fake one in
    sys.modules)."""
    global _torch
    torch = sys.modules["torch"]
    if _torch is None or _torch.module is not torch:
        _torch = Torch(torch)
    return _torch


def launch(plan: Any, count: int, views: bool, stream: Any) -> int:
    """The C API's launch of a plan whose pointers (and, for a kernel with
    strided views, bases) are filled for its `count` parameters: the
    status. Kernel's fast path and Repeat both launch through it."""
    rt = _lib.lib()
    if views:
        return rt.tegula_rt_launch_views(plan.handle, plan.pointers,
                                         plan.bases, count, stream)
    return rt.tegula_rt_launch_pointers(plan.handle, plan.pointers, count,
                                        stream)


class Repeat:
    """One checked call of a kernel, launched again on other tensors with
    the same shapes, strides, dtypes and storage offsets, the same scalars
    and on the same device: only the pointers change (Kernel._repeatable).

    For a caller that keys its calls itself (tegula.ops keys each op call
    by its inputs, from which its outputs follow): a repeat reads each
    tensor's data_ptr and nothing else, where Kernel's fast path scans
    every argument (3.6 of attention's 7.2 us a kernel call on the
    development machine, stop 42). The key is the caller's promise; the
    C side still checks each strided view against its allocation. Per
    thread, as the kernel's plans are. Only for kernels whose tensors come
    before their scalars (every tegula.ops kernel): the tensors fill the
    plan's first slots."""

    __slots__ = ("_plan", "_count", "_offsets", "_device")

    def __init__(self, plan: Any, count: int,
                 offsets: Optional[Sequence[int]], device: int) -> None:
        self._plan = plan
        self._count = count
        # None for a kernel without strided views, else per tensor the byte
        # offset of a strided view in its storage (its allocation starts
        # that far before its pointer), -1 for the others (no base).
        self._offsets = tuple(offsets) if offsets is not None else None
        self._device = device

    def __call__(self, tensors: Sequence[Any]) -> bool:
        """Launches on the tensors (every tensor parameter, in order) on
        the current stream; False, launching nothing, when the current
        device is not the first call's (the caller then calls the kernel,
        which switches)."""
        entry = torch_entry_points()
        if entry.current_device() != self._device:
            return False
        plan = self._plan
        found = [t.data_ptr() for t in tensors]
        plan.pointers[:len(found)] = found
        offsets = self._offsets
        if offsets is not None:
            plan.bases[:len(found)] = [p - o if o >= 0 else 0
                                       for p, o in zip(found, offsets)]
        status = launch(plan, self._count, offsets is not None,
                        entry.stream(self._device) or None)
        if status:
            from ._kernel import _raise
            _raise(status)
        return True
