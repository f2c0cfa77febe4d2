"""What a kernel's tensor argument can be: a torch.Tensor (read directly,
bf16 included), any object with __cuda_array_interface__ (CuPy, Numba,
JAX, fakes in tests), or any object with __dlpack__. Each becomes an
ArrayArg: device address, shape, strides in elements, tegula dtype."""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Dict, Optional, Tuple

from ._checks import INT64, integers
from ._checks import pointer as pointer_value
from ._errors import LaunchError

# __cuda_array_interface__ typestrs; bf16 has none (numpy lacks it).
_TYPESTR = {"<f2": "f16", "<f4": "f32", "<i4": "i32", "<i8": "i64",
            "|b1": "bool", "<b1": "bool"}
_ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i64": 8, "bool": 1}
# DLPack (code, bits) -> dtype.
_DLPACK = {(2, 16): "f16", (4, 16): "bf16", (2, 32): "f32", (0, 32): "i32",
           (0, 64): "i64", (6, 8): "bool"}
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13

_torch_dtypes: Optional[Dict[Any, str]] = None


class ArrayArg:
    """One tensor argument as the C ABI takes it."""

    __slots__ = ("pointer", "shape", "strides", "dtype", "dtype_text",
                 "device", "readonly", "keep")

    def __init__(self, pointer: int, shape: Tuple[int, ...],
                 strides: Optional[Tuple[int, ...]], dtype: Optional[str],
                 dtype_text: str, device: Optional[str], readonly: bool = False,
                 keep: Any = None):
        self.pointer = pointer
        self.shape = shape
        self.strides = strides  # in elements; None: contiguous
        self.dtype = dtype  # None: no kernel takes it
        self.dtype_text = dtype_text
        self.device = device  # "cuda:0", "cpu", or None when unknown
        self.readonly = readonly
        self.keep = keep  # what must stay alive until the launch


def torch_dtypes() -> Dict[Any, str]:
    global _torch_dtypes
    if _torch_dtypes is None:
        import torch
        _torch_dtypes = {torch.float16: "f16", torch.bfloat16: "bf16",
                         torch.float32: "f32", torch.int32: "i32",
                         torch.int64: "i64", torch.bool: "bool"}
    return _torch_dtypes


def is_torch_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _has(value: Any, name: str) -> bool:
    """hasattr, where a property that raises still counts as there (to be
    reported as malformed, not raised as is)."""
    try:
        return hasattr(value, name)
    except Exception:
        return True


def is_array(value: Any) -> bool:
    return (is_torch_tensor(value) or
            _has(value, "__cuda_array_interface__") or
            _has(value, "__dlpack__"))


_cuda_names: Dict[int, str] = {}


def from_torch(value: Any) -> ArrayArg:
    # On every call: reads only what the launch needs, with the cheapest
    # accessors (get_device, no string formatting unless an error needs it).
    name = torch_dtypes().get(value.dtype)
    index = value.get_device()
    if index >= 0:
        device = _cuda_names.get(index)
        if device is None:
            device = _cuda_names[index] = f"cuda:{index}"
    else:
        device = value.device.type
    return ArrayArg(value.data_ptr(), tuple(value.shape), value.stride(),
                    name, "" if name else
                    str(value.dtype).replace("torch.", ""),
                    device, False, value)


def torch_allocation(value: Any) -> Optional[Tuple[int, int]]:
    """(device address, bytes) of a torch tensor's storage, which a strided
    view must lie in; None for anything else."""
    if not is_torch_tensor(value):
        return None
    storage = value.untyped_storage()
    return storage.data_ptr(), storage.nbytes()


def torch_allocation_key(value: Any) -> Optional[int]:
    """What the allocation check depends on: the view's byte offset in its
    storage. Torch keeps every view inside its storage, so a view at the
    checked offset with the checked shape and strides passes the check
    wherever its storage lies and whatever its size; the fast path keys
    views by the same offset (_fast.scan)."""
    if not is_torch_tensor(value):
        return None
    return value.storage_offset() * value.element_size()


def from_cuda_array_interface(value: Any, name: str) -> ArrayArg:
    try:
        cai = value.__cuda_array_interface__
        shape = cai["shape"]
        typestr = str(cai["typestr"])
        pointer, readonly = cai["data"]
        strides = cai.get("strides")
    except Exception as e:  # a property may raise anything
        raise LaunchError(f"argument '{name}' has a malformed "
                          f"__cuda_array_interface__ ({e!r})", name) from None
    # Checked before ctypes, which would wrap values past 64 bits.
    shape = integers(name, "shape", shape, *INT64)
    address = pointer_value(name, pointer)
    dtype = _TYPESTR.get(typestr)
    element_strides = None
    if strides is not None and dtype is not None:
        strides = integers(name, "strides", strides, *INT64, " bytes")
        size = _ITEMSIZE[dtype]
        if any(s % size for s in strides):
            raise LaunchError(
                f"argument '{name}' has strides {list(strides)} bytes, not "
                f"multiples of its element size {size}", name)
        element_strides = tuple(s // size for s in strides)
    return ArrayArg(address, shape, element_strides, dtype,
                    f"typestr '{typestr}'", None, bool(readonly), value)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


def from_dlpack(value: Any, name: str) -> ArrayArg:
    # A legacy "dltensor" capsule, left unconsumed: its destructor frees the
    # tensor once `keep` lets it go, after the launch.
    try:
        capsule = value.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        address = get(capsule, b"dltensor")
    except Exception as e:  # numpy refuses object and bool arrays, say
        raise LaunchError(f"argument '{name}' cannot be read through "
                          f"__dlpack__ ({type(e).__name__}: {e})",
                          name) from None
    tensor = _DLTensor.from_address(address)
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = (tuple(tensor.strides[i] for i in range(tensor.ndim))
               if tensor.strides else None)
    code = (tensor.dtype.code, tensor.dtype.bits)
    dtype = _DLPACK.get(code) if tensor.dtype.lanes == 1 else None
    kind = tensor.device.device_type
    device = (f"cuda:{tensor.device.device_id}"
              if kind in (_DL_CUDA, _DL_CUDA_MANAGED) else f"dlpack device {kind}")
    return ArrayArg(pointer_value(name, (tensor.data or 0) +
                                  tensor.byte_offset), shape, strides,
                    dtype, f"DLPack code {code[0]}, {code[1]} bits", device,
                    False, capsule)


def to_array(value: Any, name: str) -> ArrayArg:
    """The ArrayArg of tensor argument `name`; LaunchError if `value` is no
    array at all."""
    if is_torch_tensor(value):
        return from_torch(value)
    if _has(value, "__cuda_array_interface__"):
        return from_cuda_array_interface(value, name)
    if _has(value, "__dlpack__"):
        return from_dlpack(value, name)
    raise LaunchError(f"argument '{name}' expects a tensor (a torch.Tensor, "
                      f"an object with __cuda_array_interface__ or "
                      f"__dlpack__), got {type(value).__name__}", name)
