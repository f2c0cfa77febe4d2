"""ctypes declarations of libtegula_rt.so (include/tegula/tegula_rt.h).

The library is found, in order, at $TEGULA_RT_LIBRARY, beside this package,
in the source tree's build directories (build/lib, build-gpu-runner/lib),
then by the dynamic loader's own search (LD_LIBRARY_PATH). It is opened on
first use, so importing tegula needs neither the library nor a GPU.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (POINTER, c_char_p, c_double, c_int, c_int64, c_uint64,
                    c_void_p)
from typing import List, Optional

from ._errors import Error

ABI_VERSION = 2

# tegula_rt_status
OK = 0
ERROR_USAGE = 1
ERROR_BUNDLE = 2
ERROR_LAUNCH_CHECK = 3
ERROR_NO_DRIVER = 4
ERROR_NO_CONTEXT = 5
ERROR_DRIVER = 6
ERROR_INTERNAL = 7

DTYPES = ("f16", "bf16", "f32", "i32", "i64", "bool")
DTYPE_CODE = {name: code for code, name in enumerate(DTYPES)}
DTYPE_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i64": 8, "bool": 1}
ACCESS = ("read", "write", "readwrite")

_SIGNATURES = {
    "tegula_rt_abi_version": (c_int, []),
    "tegula_rt_version": (c_char_p, []),
    "tegula_rt_last_error": (c_char_p, []),
    "tegula_rt_library_load": (c_int, [c_char_p, POINTER(c_void_p)]),
    "tegula_rt_library_free": (None, [c_void_p]),
    "tegula_rt_library_num_kernels": (c_int, [c_void_p]),
    "tegula_rt_library_kernel": (c_void_p, [c_void_p, c_int]),
    "tegula_rt_kernel_name": (c_char_p, [c_void_p]),
    "tegula_rt_kernel_target": (c_char_p, [c_void_p]),
    "tegula_rt_kernel_json_path": (c_char_p, [c_void_p]),
    "tegula_rt_kernel_threads": (c_int, [c_void_p]),
    "tegula_rt_kernel_num_params": (c_int, [c_void_p]),
    "tegula_rt_kernel_param_name": (c_char_p, [c_void_p, c_int]),
    "tegula_rt_kernel_param_is_tensor": (c_int, [c_void_p, c_int]),
    "tegula_rt_kernel_param_dtype": (c_int, [c_void_p, c_int]),
    "tegula_rt_kernel_param_access": (c_int, [c_void_p, c_int]),
    "tegula_rt_kernel_param_is_strided": (c_int, [c_void_p, c_int]),
    "tegula_rt_kernel_param_rank": (c_int, [c_void_p, c_int]),
    "tegula_rt_kernel_param_dim": (c_char_p, [c_void_p, c_int, c_int]),
    "tegula_rt_kernel_num_size_vars": (c_int, [c_void_p]),
    "tegula_rt_kernel_size_var": (c_char_p, [c_void_p, c_int]),
    "tegula_rt_kernel_num_variants": (c_int, [c_void_p]),
    "tegula_rt_kernel_variant_name": (c_char_p, [c_void_p, c_int]),
    "tegula_rt_kernel_uses_cubin": (c_int, [c_void_p, c_int, c_int, c_int]),
    "tegula_rt_kernel_num_configs": (c_int, [c_void_p]),
    "tegula_rt_kernel_config_name": (c_char_p, [c_void_p, c_int]),
    "tegula_rt_kernel_prepare": (c_int, [c_void_p]),
    "tegula_rt_binding_create": (c_int, [c_void_p, POINTER(c_void_p)]),
    "tegula_rt_binding_free": (None, [c_void_p]),
    "tegula_rt_binding_set_dim": (c_int, [c_void_p, c_char_p, c_int64]),
    "tegula_rt_binding_set_tensor": (c_int, [c_void_p, c_char_p, c_int, c_int,
                                             POINTER(c_int64),
                                             POINTER(c_int64), c_uint64]),
    "tegula_rt_binding_set_pointer": (c_int, [c_void_p, c_char_p, c_uint64]),
    "tegula_rt_binding_set_allocation": (c_int, [c_void_p, c_char_p, c_uint64,
                                                 c_uint64]),
    "tegula_rt_binding_set_scalar_int": (c_int, [c_void_p, c_char_p, c_int64]),
    "tegula_rt_binding_set_scalar_float": (c_int,
                                           [c_void_p, c_char_p, c_double]),
    "tegula_rt_binding_check": (c_int, [c_void_p]),
    "tegula_rt_binding_param_shape": (c_int, [c_void_p, c_int,
                                              POINTER(c_int64), c_int]),
    "tegula_rt_binding_grid": (c_int, [c_void_p, POINTER(c_int64)]),
    "tegula_rt_binding_variant": (c_int, [c_void_p]),
    "tegula_rt_binding_config": (c_char_p, [c_void_p]),
    "tegula_rt_binding_config_source": (c_char_p, [c_void_p]),
    "tegula_rt_binding_variant_name": (c_char_p, [c_void_p]),
    "tegula_rt_binding_pack": (c_int, [c_void_p]),
    "tegula_rt_launch": (c_int, [c_void_p, c_void_p]),
    "tegula_rt_launch_pointers": (c_int, [c_void_p, POINTER(c_uint64), c_int,
                                          c_void_p]),
    "tegula_rt_launch_views": (c_int, [c_void_p, POINTER(c_uint64),
                                       POINTER(c_uint64), c_int, c_void_p]),
}

_lock = threading.Lock()
_library: Optional[ctypes.CDLL] = None


def candidates() -> List[str]:
    """Where libtegula_rt.so is looked for, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    found = []
    env = os.environ.get("TEGULA_RT_LIBRARY")
    if env:
        return [env]
    found.append(os.path.join(here, "libtegula_rt.so"))
    for build in ("build", "build-gpu-runner", ".device-bundle"):
        found.append(os.path.join(root, build, "lib", "libtegula_rt.so"))
    found.append("libtegula_rt.so")
    return found


def lib() -> ctypes.CDLL:
    """The loaded library, opened and checked on first use."""
    global _library
    if _library is not None:
        return _library
    with _lock:
        if _library is not None:
            return _library
        reasons = []
        for path in candidates():
            if os.sep in path and not os.path.exists(path):
                reasons.append(f"{path}: no such file")
                continue
            try:
                handle = ctypes.CDLL(path)
                break
            except OSError as e:
                reasons.append(f"{path}: {e}")
        else:
            raise Error("cannot load libtegula_rt.so (" + "; ".join(reasons) +
                        "): build it (ninja -C build tegula_rt) or set "
                        "TEGULA_RT_LIBRARY to its path")
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(handle, name)
            function.restype = restype
            function.argtypes = argtypes
        version = handle.tegula_rt_abi_version()
        if version != ABI_VERSION:
            raise Error(f"{path} has C ABI version {version}; this tegula "
                        f"package needs {ABI_VERSION}")
        _library = handle
        return handle


def last_error() -> str:
    text = lib().tegula_rt_last_error()
    return text.decode("utf-8", "replace") if text else ""


def text(value: Optional[bytes]) -> str:
    return value.decode("utf-8", "replace") if value is not None else ""
