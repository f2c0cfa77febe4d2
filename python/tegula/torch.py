"""Kernels as torch.library custom ops (this module needs PyTorch).

    import tegula.torch
    rmsnorm = tegula.torch.op(lib.rmsnorm, "tegula::rmsnorm")
    y = rmsnorm(x, w, 1e-5)            # torch.ops.tegula.rmsnorm

The op takes the kernel's parameters in order, except its write-only
tensors: those are allocated and returned (a fake implementation makes
their shapes from the declared dims, so torch.compile traces through the
op). Tensors the kernel reads and writes are mutated arguments
(`Tensor(a!)`). With mutate_outputs=True the write-only tensors are
mutated arguments too and the op returns nothing.
"""

from __future__ import annotations

from typing import Any, Dict, List

import torch as _torch

from ._expr import evaluate
from ._kernel import Kernel, Param, _torch_dtype

_libraries: List[Any] = []  # torch.library.Library objects must stay alive
_SCALAR = {"f32": "float", "i32": "int", "i64": "int", "bool": "bool"}


def _schema(kernel: Kernel, name: str, mutate_outputs: bool) -> str:
    args = []
    for i, p in enumerate(kernel.params):
        if p.is_output and not mutate_outputs:
            continue
        if not p.is_tensor:
            args.append(f"{_SCALAR[p.dtype]} {p.name}")
        elif p.mut:
            args.append(f"Tensor(a{i}!) {p.name}")
        else:
            args.append(f"Tensor {p.name}")
    outputs = [] if mutate_outputs else \
        [p for p in kernel.params if p.is_output]
    returns = "()" if not outputs else "Tensor" if len(outputs) == 1 else \
        "(" + ", ".join("Tensor" for _ in outputs) + ")"
    return f"{name}({', '.join(args)}) -> {returns}"


def _fake_outputs(kernel: Kernel, values: Dict[str, Any]) -> Any:
    env: Dict[str, Any] = {}
    for p in kernel.params:
        value = values.get(p.name)
        if p.is_tensor and value is not None:
            for dim, size in zip(p.dims, value.shape):
                if dim.isidentifier():
                    env.setdefault(dim, size)
        elif not p.is_tensor and p.dtype != "f32":
            env[p.name] = int(value)
    device = next(v.device for v in values.values()
                  if isinstance(v, _torch.Tensor))
    outputs = [_torch.empty([evaluate(d, env) for d in p.dims],
                            dtype=_torch_dtype(_torch, p.dtype),
                            device=device)
               for p in kernel.params if p.is_output]
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def op(kernel: Kernel, qualname: str, *, mutate_outputs: bool = False) -> Any:
    """Registers `kernel` as the custom op `qualname` ("namespace::name")
    with a CUDA implementation and a fake one; returns the op."""
    namespace, _, name = qualname.partition("::")
    if not namespace or not name.isidentifier():
        raise ValueError(f"op name '{qualname}' is not 'namespace::name'")
    library = _torch.library.Library(namespace, "FRAGMENT")
    _libraries.append(library)
    library.define(_schema(kernel, name, mutate_outputs))
    order: List[Param] = [p for p in kernel.params
                          if mutate_outputs or not p.is_output]

    def cuda(*args: Any) -> Any:
        result = kernel(**{p.name: a for p, a in zip(order, args)})
        return None if mutate_outputs else result

    def fake(*args: Any) -> Any:
        if mutate_outputs or not any(p.is_output for p in kernel.params):
            return None
        return _fake_outputs(kernel, {p.name: a for p, a in zip(order, args)})

    library.impl(name, cuda, "CUDA")
    _torch.library.register_fake(qualname, fake, lib=library)
    return getattr(getattr(_torch.ops, namespace), name)
