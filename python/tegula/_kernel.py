"""Libraries of kernels, their signatures, binding and launching."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import c_int64, c_uint64, c_void_p
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from . import _checks, _fast, _lib
from ._arrays import (ArrayArg, is_array, to_array,
                      torch_allocation, torch_allocation_key)
from ._errors import BundleError, DriverError, Error, LaunchError

# Bindings cached per kernel and thread, keyed by the arguments' shapes,
# strides, dtypes and the scalars: a repeated call only swaps pointers.
_CACHE_LIMIT = 32
# An output the caller left out (the launch allocates it).
_MISSING = _fast.MISSING


def _raise(status: int) -> None:
    message = _lib.last_error()
    if status == _lib.ERROR_BUNDLE:
        raise BundleError(message)
    if status == _lib.ERROR_LAUNCH_CHECK:
        raise LaunchError(message)
    if status in (_lib.ERROR_NO_DRIVER, _lib.ERROR_NO_CONTEXT,
                  _lib.ERROR_DRIVER):
        raise DriverError(message, status)
    raise Error(message)


class Param:
    """One kernel parameter as the bundle declares it."""

    def __init__(self, index: int, name: str, is_tensor: bool, dtype: str,
                 access: str, dims: Tuple[str, ...], strided: bool = False):
        self.index = index
        self.name = name
        self.is_tensor = is_tensor
        self.dtype = dtype
        self.access = access  # "read", "write" or "readwrite"
        self.dims = dims  # as the bundle writes them: "R", "64", "R / 2"
        self.strided = strided  # takes any strides (a view), not row-major

    @property
    def mut(self) -> bool:
        """Written by the kernel (the language's `mut tensor`)."""
        return self.is_tensor and self.access != "read"

    @property
    def is_output(self) -> bool:
        """Only written: a call may leave it out to have it allocated."""
        return self.is_tensor and self.access == "write"

    def type_text(self) -> str:
        if not self.is_tensor:
            return self.dtype
        return ("mut " if self.mut else "") + \
            f"{self.dtype}[{', '.join(self.dims)}]" + \
            (" strided" if self.strided else "")

    def __str__(self) -> str:
        return f"{self.name}: {self.type_text()}"

    def __repr__(self) -> str:
        return f"<tegula.Param {self}>"


class Binding:
    """A checked launch that did not run (Kernel.bind): the shape of every
    tensor, the grid, the config and variant chosen, and the outputs a call
    would allocate. `config` is None for a bundle without configs;
    `config_source` says how it was chosen: "pinned" (TEGULA_CONFIG),
    "tuned" (the bundle's tuning table) or "default" (docs/tuning.md)."""

    def __init__(self, kernel: "Kernel", shapes: Dict[str, Tuple[int, ...]],
                 grid: Tuple[int, int, int], variant: str,
                 allocations: Dict[str, Tuple[Tuple[int, ...], str]],
                 packed: bool, config: Optional[str] = None,
                 config_source: str = "default"):
        self.kernel = kernel
        self.shapes = shapes
        self.grid = grid
        self.variant = variant
        self.config = config
        self.config_source = config_source
        self.allocations = allocations  # name -> (shape, dtype)
        self.packed = packed  # every pointer given and aligned

    def __repr__(self) -> str:
        config = "" if self.config is None else f" config={self.config}"
        return (f"<tegula.Binding {self.kernel.name} grid={self.grid}"
                f"{config} variant={self.variant} "
                f"allocations={self.allocations}>")


class _Plan:
    """A checked C binding kept for repeated launches."""

    __slots__ = ("handle", "output_shapes", "grid", "variant", "pointers",
                 "bases", "_free")

    def __init__(self, handle: int, output_shapes: Dict[int, Tuple[int, ...]],
                 grid: Tuple[int, int, int], variant: int, count: int = 0):
        self.handle = handle
        # Refilled by each launch; plans are per thread (Kernel._plan).
        self.pointers = (c_uint64 * max(count, 1))()
        # Strided views' allocations (0: none), checked at each launch: a
        # plan serves every view at the same offset in its allocation (the
        # plans' keys), wherever that allocation lies.
        self.bases = (c_uint64 * max(count, 1))()
        self.output_shapes = output_shapes
        self.grid = grid
        self.variant = variant
        self._free = _lib.lib().tegula_rt_binding_free

    def __del__(self) -> None:
        try:
            self._free(self.handle)
        except Exception:  # interpreter shutdown
            pass


class Kernel:
    """A kernel of a loaded bundle. Call it like a function (see
    docs/python.md); `signature` says what it takes."""

    def __init__(self, library: "Library", handle: int):
        rt = _lib.lib()
        self._library = library  # keeps the C library alive
        self._handle = handle
        self.name = _lib.text(rt.tegula_rt_kernel_name(handle))
        self.target = _lib.text(rt.tegula_rt_kernel_target(handle))
        self.json_path = _lib.text(rt.tegula_rt_kernel_json_path(handle))
        self.threads = rt.tegula_rt_kernel_threads(handle)
        params = []
        for i in range(rt.tegula_rt_kernel_num_params(handle)):
            rank = rt.tegula_rt_kernel_param_rank(handle, i)
            params.append(Param(
                i, _lib.text(rt.tegula_rt_kernel_param_name(handle, i)),
                bool(rt.tegula_rt_kernel_param_is_tensor(handle, i)),
                _lib.DTYPES[rt.tegula_rt_kernel_param_dtype(handle, i)],
                _lib.ACCESS[rt.tegula_rt_kernel_param_access(handle, i)],
                tuple(_lib.text(rt.tegula_rt_kernel_param_dim(handle, i, d))
                      for d in range(rank)),
                rt.tegula_rt_kernel_param_is_strided(handle, i) == 1))
        self.params: Tuple[Param, ...] = tuple(params)
        self._by_name = {p.name: p for p in params}
        self.size_vars: Tuple[str, ...] = tuple(
            _lib.text(rt.tegula_rt_kernel_size_var(handle, i))
            for i in range(rt.tegula_rt_kernel_num_size_vars(handle)))
        self.variants: Tuple[str, ...] = tuple(
            _lib.text(rt.tegula_rt_kernel_variant_name(handle, i))
            for i in range(rt.tegula_rt_kernel_num_variants(handle)))
        # Tuning configs (docs/tuning.md); () for a bundle without them.
        self.configs: Tuple[str, ...] = tuple(
            name for name in (
                _lib.text(rt.tegula_rt_kernel_config_name(handle, i))
                for i in range(rt.tegula_rt_kernel_num_configs(handle)))
            if name)
        self._local = threading.local()
        # For the fast path of __call__: parameter names in order, which are
        # tensors, and which positions return (write-only outputs).
        self._names = tuple(p.name for p in params)
        self._fast_kinds = tuple(
            _fast.STRIDED if p.strided else _fast.TENSOR if p.is_tensor
            else _fast.SCALAR for p in params)
        self._any_strided = any(p.strided for p in params)
        self._output_positions = tuple(p.index for p in params if p.is_output)
        self._output_set = frozenset(self._output_positions)

    @property
    def signature(self) -> str:
        """`rmsnorm(x: bf16[R, C], w: bf16[C], y: mut bf16[R, C], eps: f32)`"""
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def __repr__(self) -> str:
        return f"<tegula.Kernel {self.signature}>"

    def param(self, name: str) -> Param:
        return self._by_name[name]

    def uses_cubin(self, major: int, minor: int,
                   variant: Optional[str] = None) -> bool:
        """Whether a GPU of compute capability major.minor loads the
        bundle's cubin (built for exactly that GPU) rather than its PTX."""
        if variant in (None, "general"):
            index = -1
        elif variant in self.variants:
            index = self.variants.index(variant)
        else:
            raise Error(f"kernel '{self.name}' has no variant {variant!r} "
                        f"(variants: general, {', '.join(self.variants)})")
        result = _lib.lib().tegula_rt_kernel_uses_cubin(
            self._handle, index, _checks.c_int("uses_cubin(major)", major),
            _checks.c_int("uses_cubin(minor)", minor))
        if result < 0:
            _raise(_lib.ERROR_USAGE)
        return bool(result)

    def prepare(self) -> None:
        """Loads the module in the current CUDA context now, so that the
        first call does no loading."""
        status = _lib.lib().tegula_rt_kernel_prepare(self._handle)
        if status:
            _raise(status)

    # --- Arguments ---------------------------------------------------------

    def _arguments(self, args: Tuple[Any, ...],
                   kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        if len(args) > len(self.params):
            raise LaunchError(f"{self.name}() takes {len(self.params)} "
                              f"arguments, got {len(args)}")
        values: Dict[str, Any] = {}
        for param, value in zip(self.params, args):
            if param.is_tensor and not is_array(value) and param.is_output:
                raise LaunchError(
                    f"argument '{param.name}' ({param.type_text()}) expects a "
                    f"tensor, got {type(value).__name__}: an output left out "
                    f"must be followed by keyword arguments", param.name)
            values[param.name] = value
        for name, value in kwargs.items():
            if name not in self._by_name:
                raise LaunchError(
                    f"{self.name}() has no parameter '{name}' (parameters: "
                    f"{', '.join(p.name for p in self.params)})")
            if name in values:
                raise LaunchError(f"argument '{name}' given twice", name)
            values[name] = value
        for param in self.params:
            if param.name in values or param.is_output:
                continue
            what = "scalar" if not param.is_tensor else "argument"
            why = (": the kernel reads it, so it cannot be allocated"
                   if param.mut else "")
            raise LaunchError(f"missing {what} '{param.name}' "
                              f"({param.type_text()}){why}", param.name)
        return values

    def _arrays(self, values: Dict[str, Any]) -> Dict[str, ArrayArg]:
        arrays: Dict[str, ArrayArg] = {}
        first_device: Optional[Tuple[str, str]] = None
        for param in self.params:
            if not param.is_tensor or param.name not in values:
                continue
            a = to_array(values[param.name], param.name)
            if a.dtype is None:
                raise LaunchError(
                    f"argument '{param.name}' has dtype {a.dtype_text}, which "
                    f"no kernel takes; the kernel expects {param.dtype}",
                    param.name)
            if a.device is not None and not a.device.startswith("cuda"):
                raise LaunchError(
                    f"argument '{param.name}' is in {a.device} memory; the "
                    f"kernel needs CUDA device memory", param.name)
            if a.device is not None:
                if first_device and first_device[1] != a.device:
                    raise LaunchError(
                        f"argument '{param.name}' is on {a.device} but "
                        f"'{first_device[0]}' is on {first_device[1]}",
                        param.name)
                first_device = first_device or (param.name, a.device)
            if a.readonly and param.mut:
                raise LaunchError(f"argument '{param.name}' is read-only but "
                                  f"the kernel writes it", param.name)
            arrays[param.name] = a
        return arrays

    def _new_plan(self, values: Dict[str, Any], arrays: Dict[str, ArrayArg],
                  dims: Optional[Mapping[str, int]]) -> Tuple[_Plan, bool]:
        """A checked C binding; also whether every pointer was given and
        packed (aligned, non-null)."""
        rt = _lib.lib()
        handle = c_void_p()
        status = rt.tegula_rt_binding_create(self._handle, ctypes.byref(handle))
        if status:
            _raise(status)
        plan = _Plan(handle.value, {}, (0, 0, 0), -1, len(self.params))
        for name, value in (dims or {}).items():
            # Checked by _checks.dims: a str and an integer; one past 64
            # bits is no size variable's, and the library names it.
            value = int(value)
            if not _checks.INT64[0] <= value <= _checks.INT64[1]:
                value = 0
            rt.tegula_rt_binding_set_dim(
                plan.handle, name.encode("utf-8", "backslashreplace"), value)
        for param in self.params:
            key = param.name.encode()
            if param.is_tensor:
                a = arrays.get(param.name)
                if a is None:
                    continue
                rank = len(a.shape)
                shape = (c_int64 * max(rank, 1))(*a.shape)
                strides = (c_int64 * max(rank, 1))(*a.strides) \
                    if a.strides is not None else None
                status = rt.tegula_rt_binding_set_tensor(
                    plan.handle, key, _lib.DTYPE_CODE[a.dtype], rank, shape,
                    strides, a.pointer)
                allocation = torch_allocation(a.keep) if param.strided \
                    else None
                if not status and allocation is not None:
                    status = rt.tegula_rt_binding_set_allocation(
                        plan.handle, key, *allocation)
            else:
                kind, value = _checks.scalar(param.name, param.dtype,
                                             values[param.name])
                setter = rt.tegula_rt_binding_set_scalar_int \
                    if kind == "int" else rt.tegula_rt_binding_set_scalar_float
                status = setter(plan.handle, key, value)
            if status:
                _raise(status)
        status = rt.tegula_rt_binding_check(plan.handle)
        if status:
            _raise(status)
        grid = (c_int64 * 3)()
        rt.tegula_rt_binding_grid(plan.handle, grid)
        plan.grid = (grid[0], grid[1], grid[2])
        plan.variant = rt.tegula_rt_binding_variant(plan.handle)
        shape = (c_int64 * 64)()
        for param in self.params:
            if param.is_tensor and param.name not in arrays:
                rank = rt.tegula_rt_binding_param_shape(plan.handle,
                                                        param.index, shape, 64)
                plan.output_shapes[param.index] = tuple(shape[:rank])
        packed = False
        if len(arrays) == sum(p.is_tensor for p in self.params):
            status = rt.tegula_rt_binding_pack(plan.handle)
            if status:
                _raise(status)
            packed = True
        return plan, packed

    def bind(self, *args: Any, dims: Optional[Mapping[str, int]] = None,
             **kwargs: Any) -> Binding:
        """Every check of a call, with no driver and no allocation: the
        dry run of `kernel(*args, **kwargs)`. Raises LaunchError."""
        dims = _checks.dims(dims, self.size_vars)
        values = self._arguments(args, kwargs)
        arrays = self._arrays(values)
        plan, packed = self._new_plan(values, arrays, dims)
        rt = _lib.lib()
        shape = (c_int64 * 64)()
        shapes = {}
        for param in self.params:
            if param.is_tensor:
                rank = rt.tegula_rt_binding_param_shape(plan.handle,
                                                        param.index, shape, 64)
                shapes[param.name] = tuple(shape[:rank])
        allocations = {self.params[i].name: (s, self.params[i].dtype)
                       for i, s in plan.output_shapes.items()}
        variant = _lib.text(rt.tegula_rt_binding_variant_name(plan.handle))
        config = _lib.text(rt.tegula_rt_binding_config(plan.handle)) or None
        source = _lib.text(rt.tegula_rt_binding_config_source(plan.handle))
        return Binding(self, shapes, plan.grid, variant, allocations, packed,
                       config, source)

    # --- Calls -------------------------------------------------------------

    def _plan(self, values: Dict[str, Any], arrays: Dict[str, ArrayArg],
              dims: Optional[Mapping[str, int]]) -> _Plan:
        # A strided view's check also depends on where it lies in its
        # allocation.
        key = (tuple((a.shape, a.strides, a.dtype,
                      torch_allocation_key(a.keep) if p.strided else None)
                     if a is not None else None
                     for p, a in ((p, arrays.get(p.name)) for p in self.params
                                  if p.is_tensor)),
               tuple(_checks.scalar_key(values[p.name])
                     for p in self.params if not p.is_tensor),
               tuple(sorted(dims.items())) if dims else ())
        cache = getattr(self._local, "plans", None)
        if cache is None:
            cache = self._local.plans = {}
        plan = cache.get(key)
        if plan is None:
            plan, _ = self._new_plan(values, arrays, dims)
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[key] = plan
        return plan

    def __call__(self, *args: Any, stream: Any = None,
                 dims: Optional[Mapping[str, int]] = None,
                 **kwargs: Any) -> Any:
        """Checks the arguments, allocates the outputs left out (with
        torch.empty), and launches on `stream` (default: PyTorch's current
        stream for the tensors' device, else the legacy default stream).
        Returns the outputs (write-only tensors): None, one, or a tuple."""
        if stream is None and dims is None:
            done, result = self._fast_call(args, kwargs)
            if done:
                return result
        return self._call(args, kwargs, stream, dims)

    def _fast_values(self, args: Tuple[Any, ...],
                     kwargs: Mapping[str, Any]) -> Optional[List[Any]]:
        """The call's arguments in parameter order, _MISSING for outputs
        left out; None for anything the full path must check (too many
        arguments, an unknown keyword, an input left out)."""
        names = self._names
        if len(args) > len(names):
            return None
        values = list(args)
        found = 0
        for i in range(len(args), len(names)):
            value = kwargs.get(names[i], _MISSING)
            if value is not _MISSING:
                found += 1
            elif i not in self._output_set:
                return None
            values.append(value)
        return values if found == len(kwargs) else None

    def _fast_call(self, args: Tuple[Any, ...],
                   kwargs: Mapping[str, Any]) -> Tuple[bool, Any]:
        """A repeated call on CUDA torch tensors: the checked binding is
        found by the arguments' shapes, strides, dtypes and scalars
        (_fast.scan), the outputs left out are allocated as the first call
        sized them, and only the pointers are passed on. Anything else (a
        first call, another kind of array) returns (False, None) for the
        full path, which checks everything."""
        values = self._fast_values(args, kwargs)
        if values is None:
            return False, None
        torch = sys.modules.get("torch")
        if torch is None:
            return False, None
        found = _fast.scan(values, self._fast_kinds, torch.Tensor)
        if found is None:
            return False, None
        key, device, pointers, bases = found
        fast = getattr(self._local, "fast", None)
        entry = fast.get(key) if fast is not None else None
        if entry is None:
            return True, self._first_fast_call(args, kwargs, key)
        plan, allocate = entry
        entry_points = _fast.torch_entry_points()
        if entry_points.current_device() != device:
            return False, None
        empty = entry_points.empty
        kinds = self._fast_kinds
        for i, shape, dtype in allocate:
            output = values[i] = empty(shape, dtype=dtype, device=device)
            pointers[i] = output.data_ptr()
            if kinds[i] == _fast.STRIDED:
                bases[i] = pointers[i]
        count = len(values)
        plan.pointers[:count] = pointers
        if self._any_strided:
            plan.bases[:count] = bases
        status = _fast.launch(plan, count, self._any_strided,
                              entry_points.stream(device) or None)
        if status:
            _raise(status)
        outputs = self._output_positions
        if not outputs:
            return True, None
        if len(outputs) == 1:
            return True, values[outputs[0]]
        return True, tuple(values[i] for i in outputs)

    def _repeatable(self, *args: Any,
                   **kwargs: Any) -> Optional[_fast.Repeat]:
        """Calls the kernel (a first call: every check, then the launch)
        and returns its _fast.Repeat for repeats of this call on other
        tensors of the same shapes, strides, dtypes and storage offsets;
        None when the call is not one it serves (a tensor left out or not
        a CUDA torch tensor, or a scalar before a tensor), after the
        call."""
        self._call(args, kwargs, None, None)
        plan = getattr(self._local, "last_plan", None)
        values = self._fast_values(args, kwargs)
        torch = sys.modules.get("torch")
        if plan is None or values is None or torch is None:
            return None
        tensors = [(p, values[p.index]) for p in self.params if p.is_tensor]
        if any(p.index != i or v is _MISSING or
               not isinstance(v, torch.Tensor)
               for i, (p, v) in enumerate(tensors)):
            return None
        device = tensors[0][1].get_device() if tensors else -1
        if device < 0:
            return None
        offsets = [v.storage_offset() * v.element_size() if p.strided else -1
                   for p, v in tensors] if self._any_strided else None
        return _fast.Repeat(plan, len(self.params), offsets, device)

    def _first_fast_call(self, args: Tuple[Any, ...],
                         kwargs: Mapping[str, Any], key: tuple) -> Any:
        """The full path checks this call; its plan serves the next calls
        of the same key."""
        result = self._call(args, kwargs, None, None)
        fast = getattr(self._local, "fast", None)
        if fast is None:
            fast = self._local.fast = {}
        if len(fast) >= _CACHE_LIMIT:
            fast.clear()
        plan = getattr(self._local, "last_plan", None)
        if plan is not None:
            torch = sys.modules["torch"]
            allocate = tuple(
                (i, shape, _torch_dtype(torch, self.params[i].dtype))
                for i, shape in plan.output_shapes.items())
            fast[key] = (plan, allocate)
        return result

    def _call(self, args: Tuple[Any, ...], kwargs: Mapping[str, Any],
              stream: Any, dims: Optional[Mapping[str, int]]) -> Any:
        self._local.last_plan = None
        dims = _checks.dims(dims, self.size_vars)
        values = self._arguments(args, kwargs)
        arrays = self._arrays(values)
        plan = self._plan(values, arrays, dims)
        device = next((a.device for a in arrays.values() if a.device), None)
        torch = sys.modules.get("torch") if device or plan.output_shapes \
            else None
        if plan.output_shapes:
            torch = _need_torch(self.params[next(iter(plan.output_shapes))])
            index = int(device.split(":")[1]) if device else \
                torch.cuda.current_device()
            for i, shape in plan.output_shapes.items():
                p = self.params[i]
                values[p.name] = torch.empty(
                    shape, dtype=_torch_dtype(torch, p.dtype),
                    device=f"cuda:{index}")
                arrays[p.name] = to_array(values[p.name], p.name)
            device = device or f"cuda:{index}"
        pointers = plan.pointers
        for i, p in enumerate(self.params):
            pointers[i] = arrays[p.name].pointer if p.is_tensor else 0
        bases = None
        if self._any_strided:
            bases = plan.bases
            for i, p in enumerate(self.params):
                allocation = torch_allocation(arrays[p.name].keep) \
                    if p.strided else None
                bases[i] = allocation[0] if allocation else 0
        handle = _stream_handle(stream, torch, device)
        _launch(plan, pointers, bases, len(self.params), handle, torch,
                device)
        self._local.last_plan = plan  # per thread, for _fast_call
        outputs = tuple(values[p.name] for p in self.params if p.is_output)
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else outputs


def _need_torch(param: Param) -> Any:
    try:
        import torch
    except ImportError:
        raise LaunchError(f"argument '{param.name}' was left out, and "
                          f"allocating it needs PyTorch: pass it",
                          param.name) from None
    return torch


def _torch_dtype(torch: Any, dtype: str) -> Any:
    return {"f16": torch.float16, "bf16": torch.bfloat16,
            "f32": torch.float32, "i32": torch.int32, "i64": torch.int64,
            "bool": torch.bool}[dtype]


def _device_index(device: str) -> int:
    return int(device[5:]) if device.startswith("cuda:") else -1


def _stream_handle(stream: Any, torch: Any, device: Optional[str]) -> int:
    if stream is None:
        if torch is not None and device and device.startswith("cuda"):
            return _fast.torch_entry_points().stream(_device_index(device))
        return 0
    if isinstance(stream, int):
        return _checks.stream(stream)
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise Error(f"stream= takes a CUstream as an int or an object with "
                f".cuda_stream (torch.cuda.Stream) or .ptr (CuPy), got "
                f"{type(stream).__name__}")


def _launch(plan: _Plan, pointers: Any, bases: Any, count: int, stream: int,
            torch: Any, device: Optional[str]) -> None:
    rt = _lib.lib()
    if torch is not None and device:
        index = _device_index(device)
        if _fast.torch_entry_points().current_device() != index:
            # The launch goes to the current context: the tensors' device's.
            with torch.cuda.device(index):
                return _launch(plan, pointers, bases, count, stream, torch,
                               device)

    def launch() -> int:
        if bases is not None:
            return rt.tegula_rt_launch_views(plan.handle, pointers, bases,
                                             count, stream or None)
        return rt.tegula_rt_launch_pointers(plan.handle, pointers, count,
                                            stream or None)
    status = launch()
    if status == _lib.ERROR_NO_CONTEXT and torch is not None and device:
        # A thread where PyTorch has not made its context current yet.
        torch.cuda.set_device(device)
        status = launch()
    if status:
        _raise(status)


class Library:
    """The kernels of a bundle directory or of one KERNEL.json, as
    attributes (`lib.rmsnorm`) and by name (`lib["rmsnorm"]`)."""

    def __init__(self, path: str):
        rt = _lib.lib()
        handle = c_void_p()
        status = rt.tegula_rt_library_load(os.fsencode(str(path)),
                                           ctypes.byref(handle))
        if status:
            _raise(status)
        self._handle = handle.value
        self._free = rt.tegula_rt_library_free
        self.path = str(path)
        self.kernels: Dict[str, Kernel] = {}
        for i in range(rt.tegula_rt_library_num_kernels(self._handle)):
            kernel = Kernel(self, rt.tegula_rt_library_kernel(self._handle, i))
            self.kernels[kernel.name] = kernel

    def __del__(self) -> None:
        try:
            self._free(self._handle)
        except Exception:  # a failed load, or interpreter shutdown
            pass

    def __getattr__(self, name: str) -> Kernel:
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"'{self.__dict__.get('path')}' has no kernel "
                             f"'{name}' (kernels: {', '.join(kernels)})")

    def __getitem__(self, name: str) -> Kernel:
        return self.kernels[name]

    def __iter__(self) -> Iterator[Kernel]:
        return iter(self.kernels.values())

    def __len__(self) -> int:
        return len(self.kernels)

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self.kernels))

    def __repr__(self) -> str:
        return f"<tegula.Library {self.path}: {', '.join(self.kernels)}>"


def load(path: Any) -> Library:
    """Loads a bundle directory (every KERNEL.json in it) or one
    KERNEL.json. Raises BundleError."""
    return Library(str(path))
