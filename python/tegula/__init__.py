"""Call Tegula kernel bundles from Python and PyTorch.

    import tegula
    lib = tegula.load("out/")              # a bundle directory or KERNEL.json
    print(lib.rmsnorm.signature)           # rmsnorm(x: bf16[R, C], ..., eps: f32)
    y = lib.rmsnorm(x, w, eps=1e-5)        # `y` left out: allocated, returned
    mine = tegula.compile("my.tile", defines={"BLOCK": 128})  # tilec, cached

A ctypes layer over libtegula_rt.so (include/tegula/tegula_rt.h): every
check of a launch (shapes, dtypes, requires, strides, alignment) runs before
the driver is touched and raises LaunchError. Importing tegula needs neither
torch nor a GPU; `tegula.torch` registers kernels as torch.library ops.
docs/python.md has the details.
"""

from ._errors import (BundleError, CompileError, DriverError, Error,
                      LaunchError)
from ._kernel import Binding, Kernel, Library, Param, load
from ._compile import CompileWarning, compile

__version__ = "0.1.0"


def runtime_version() -> str:
    """The loaded libtegula_rt.so's version string."""
    from . import _lib
    return _lib.text(_lib.lib().tegula_rt_version())


__all__ = ["load", "compile", "Library", "Kernel", "Param", "Binding",
           "Error", "BundleError", "LaunchError", "DriverError",
           "CompileError", "CompileWarning", "runtime_version"]
