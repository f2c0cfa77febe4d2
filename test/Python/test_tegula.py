"""The tegula package with no GPU: loading, signatures, binding, every
launch-time error, output allocation, cubin selection, the missing driver.

Run by python.test (lit), which compiles the bundles and sets
TEGULA_TEST_BUNDLES, TEGULA_TEST_INPUTS (test/Runtime/Inputs) and
TEGULA_RT_LIBRARY. Tensors are fakes with __cuda_array_interface__ (or
numpy arrays through DLPack): nothing here touches a driver until a test
means to."""

import ctypes
import math
import os
import subprocess
import sys
import types

import pytest

import tegula

BUNDLES = os.environ["TEGULA_TEST_BUNDLES"]
INPUTS = os.environ["TEGULA_TEST_INPUTS"]


class Fake:
    """A device array as __cuda_array_interface__ describes it."""

    def __init__(self, shape, typestr="<f2", ptr=0x100000, strides=None,
                 readonly=False):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
            "strides": strides, "version": 3}


def has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def lib():
    return tegula.load(os.path.join(BUNDLES, "sm90"))


@pytest.fixture(scope="module")
def runtime_inputs():
    return {name: tegula.load(os.path.join(INPUTS, name, name + ".json"))
            for name in ("rotary", "scale_add")}


def launch_error(call, *args, **kwargs):
    with pytest.raises(tegula.LaunchError) as info:
        call(*args, **kwargs)
    return info.value


# --- Loading and signatures ------------------------------------------------

def test_import_needs_no_torch():
    code = "import sys, tegula; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_library(lib):
    assert sorted(lib.kernels) == ["rmsnorm", "rotary", "rotary_inplace"]
    assert lib.rmsnorm is lib["rmsnorm"]
    assert "rmsnorm" in dir(lib) and len(lib) == 3
    with pytest.raises(AttributeError, match="has no kernel 'nope' "
                       r"\(kernels: rmsnorm, rotary, rotary_inplace\)"):
        lib.nope


def test_load_errors(tmp_path):
    with pytest.raises(tegula.BundleError,
                       match="cannot open bundle '/nonexistent.json'"):
        tegula.load("/nonexistent.json")
    with pytest.raises(tegula.BundleError, match="holds no KERNEL.json"):
        tegula.load(tmp_path)
    with pytest.raises(tegula.BundleError, match="unknown dtype 'f64'"):
        tegula.load(os.path.join(INPUTS, "bad", "dtype.json"))


def test_missing_library():
    code = "import tegula; tegula.load('x')"
    env = dict(os.environ, TEGULA_RT_LIBRARY="/nonexistent/libtegula_rt.so")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env=env)
    assert out.returncode != 0
    assert ("tegula._errors.Error: cannot load libtegula_rt.so "
            "(/nonexistent/libtegula_rt.so: no such file): build it "
            "(ninja -C build tegula_rt) or set TEGULA_RT_LIBRARY") in out.stderr


def test_signatures(lib, runtime_inputs):
    assert lib.rmsnorm.signature == \
        "rmsnorm(x: bf16[R, C], w: bf16[C], y: mut bf16[R, C], eps: f32)"
    assert lib.rotary_inplace.signature == \
        "rotary_inplace(x: mut bf16[B, T, H, 128], cos: f32[T, 64], " \
        "sin: f32[T, 64])"
    assert runtime_inputs["rotary"].rotary.signature == \
        "rotary(x: bf16[B, T, H, D], cos: f32[T, R / 2], " \
        "sin: f32[T, R / 2], out: mut bf16[B, T, H, D])"
    assert runtime_inputs["scale_add"].scale_add.signature == \
        "scale_add(x: f32[N], y: mut f32[N], a: f32, b: i32)"
    y = lib.rmsnorm.param("y")
    assert (y.access, y.mut, y.is_output, y.dims) == \
        ("write", True, True, ("R", "C"))
    assert lib.rotary_inplace.param("x").access == "readwrite"
    assert not lib.rotary_inplace.param("x").is_output
    assert lib.rmsnorm.size_vars == ("R", "C")
    assert lib.rmsnorm.variants == ("div16",)
    assert lib.rmsnorm.target == "sm_90a"


# --- Binding ---------------------------------------------------------------

def rms_args(rows=3, cols=100, dtype="<f4"):
    # bf16 has no typestr: fakes of bf16 go through DLPack below; here the
    # dtype check itself is what some tests look at.
    return Fake((rows, cols), dtype), Fake((cols,), dtype)


def test_bind_allocates_left_out_outputs(runtime_inputs):
    scale_add = runtime_inputs["scale_add"].scale_add
    b = scale_add.bind(Fake((1000,), "<f4"), Fake((1000,), "<f4", 0x200000),
                       a=0.5, b=3)
    assert b.shapes == {"x": (1000,), "y": (1000,)}
    assert b.grid == (8, 1, 1)
    assert b.allocations == {} and b.packed and b.variant == "general"
    assert (b.config, b.config_source) == (None, "default")
    assert scale_add.configs == ()
    rotary = runtime_inputs["rotary"].rotary
    x = Fake((2, 16, 4, 64), "<f4")
    cos = Fake((16, 16), "<f4")
    # x is bf16 in this bundle: a float32 fake is refused by dtype...
    assert str(launch_error(rotary.bind, x, cos, cos, dims={"R": 32})) == \
        "argument 'x' has dtype f32 but the kernel expects bf16"


def test_unsupported_dtype_through_dlpack(lib):
    # numpy arrays come through DLPack: the dtype is read (and refused)
    # before anything else.
    np = pytest.importorskip("numpy")
    e = launch_error(lib.rotary.bind, np.zeros((2, 3), np.float64), None,
                     None)
    assert str(e) == ("argument 'x' has dtype DLPack code 2, 64 bits, which "
                      "no kernel takes; the kernel expects bf16")


def test_configs(monkeypatch):
    # A bundle of tuning configs (docs/tuning.md): the first by default (no
    # driver, so no tuned choice), TEGULA_CONFIG's pin, or an error.
    scale = tegula.load(os.path.join(BUNDLES, "configs")).scale
    assert scale.configs == ("BLOCK=64", "BLOCK=128")
    args = (Fake((1000,), "<f4"), Fake((1000,), "<f4", 0x200000))
    monkeypatch.delenv("TEGULA_CONFIG", raising=False)
    b = scale.bind(*args)
    assert (b.config, b.config_source, b.grid) == \
        ("BLOCK=64", "default", (16, 1, 1))
    monkeypatch.setenv("TEGULA_CONFIG", "scale=BLOCK=128")
    b = scale.bind(*args)
    assert (b.config, b.config_source, b.grid, b.variant) == \
        ("BLOCK=128", "pinned", (8, 1, 1), "general")
    b = scale.bind(Fake((1024,), "<f4"), Fake((1024,), "<f4", 0x200000))
    assert (b.config, b.variant) == ("BLOCK=128", "div16")
    monkeypatch.setenv("TEGULA_CONFIG", "BLOCK=1")
    assert str(launch_error(scale.bind, *args)) == (
        "TEGULA_CONFIG: kernel 'scale' has no config 'BLOCK=1' (configs: "
        "BLOCK=64; BLOCK=128)")


def test_variant_and_outputs(runtime_inputs):
    scale_add = runtime_inputs["scale_add"].scale_add
    # y is readwrite: it cannot be left out.
    e = launch_error(scale_add.bind, Fake((1000,), "<f4"), a=1.0, b=1)
    assert str(e) == ("missing argument 'y' (mut f32[N]): the kernel reads "
                      "it, so it cannot be allocated")
    assert e.argument == "y"


def test_rotary_output_allocation(runtime_inputs):
    # A bf16 kernel bound with its output left out: the allocation it would
    # make, and nothing packed (no pointer for it yet).
    rotary = runtime_inputs["rotary"].rotary
    x = BF16Fake((2, 16, 4, 64))
    cos = Fake((16, 16), "<f4", 0x200000)
    b = rotary.bind(x, cos, cos, dims={"R": 32})
    assert b.allocations == {"out": ((2, 16, 4, 64), "bf16")}
    assert not b.packed
    assert b.grid == (32, 1, 1)
    b = rotary.bind(x, cos, cos, BF16Fake((2, 16, 4, 64), 0x300000),
                    dims={"R": 32})
    assert b.allocations == {} and b.packed


class BF16Fake:
    """A bf16 device array: DLPack is the protocol that can say bf16."""

    def __init__(self, shape, ptr=0x100000):
        self.shape, self.ptr = shape, ptr

    def __dlpack__(self, stream=None):
        from tegula._arrays import _DLTensor
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        t = _DLTensor()
        t.data, t.device.device_type, t.device.device_id = self.ptr, 2, 0
        t.ndim, t.dtype.code, t.dtype.bits, t.dtype.lanes = \
            len(self.shape), 4, 16, 1
        t.shape = shape
        self._keep = (t, shape)
        capsule = ctypes.pythonapi.PyCapsule_New
        capsule.restype = ctypes.py_object
        capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return capsule(ctypes.addressof(t), b"dltensor", None)


# --- Every launch-time error -----------------------------------------------

def test_errors(lib, runtime_inputs):
    rms = lib.rmsnorm
    x, w = BF16Fake((3, 100)), BF16Fake((100,), 0x200000)
    cases = [
        # shape, naming the argument, its shape and the expected one
        (lambda: rms.bind(x, BF16Fake((99,)), eps=1.0),
         "argument 'w' has shape [99] but the kernel expects [C] = [100]",
         "w"),
        (lambda: rms.bind(x, BF16Fake((1, 100)), eps=1.0),
         "argument 'w' has shape [1, 100] (rank 2) but the kernel expects "
         "[C] (rank 1)", "w"),
        (lambda: rms.bind(x, Fake((100,), "<f2"), eps=1.0),
         "argument 'w' has dtype f16 but the kernel expects bf16", "w"),
        (lambda: rms.bind(x, Fake((100,), "<f8"), eps=1.0),
         "argument 'w' has dtype typestr '<f8', which no kernel takes; the "
         "kernel expects bf16", "w"),
        (lambda: rms.bind(x, BF16Fake((100,), 0x200008), eps=1.0),
         "argument 'w' is at a device address that is not 16-byte aligned "
         "(0x200008)", "w"),
        (lambda: rms.bind(x, w, eps="big"),
         "scalar 'eps' (f32) expects a number, got str", "eps"),
        (lambda: rms.bind(x, w, eps=1e39),
         "scalar 'eps' (f32): value 1e+39 does not fit in f32", "eps"),
        (lambda: rms.bind(x, w),
         "missing scalar 'eps' (f32)", "eps"),
        (lambda: rms.bind(x, eps=1.0),
         "missing argument 'w' (bf16[C])", "w"),
        (lambda: rms.bind(x, w, 1e-5),
         "argument 'y' (mut bf16[R, C]) expects a tensor, got float: an "
         "output left out must be followed by keyword arguments", "y"),
        (lambda: rms.bind(x, w, [1, 2], eps=1.0),
         "argument 'y' (mut bf16[R, C]) expects a tensor, got list: an "
         "output left out must be followed by keyword arguments", "y"),
        (lambda: rms.bind(x, w, eps=1.0, epsilon=2.0),
         "rmsnorm() has no parameter 'epsilon' (parameters: x, w, y, eps)",
         None),
        (lambda: rms.bind(x, w, None, 1.0, 5),
         "rmsnorm() takes 4 arguments, got 5", None),
        (lambda: rms.bind(x, w, x=x, eps=1.0),
         "argument 'x' given twice", "x"),
        (lambda: rms.bind(x, w, eps=1.0, dims={"Q": 3}),
         "dims sets 'Q', which is not a size variable of 'rmsnorm' (size "
         "variables: R, C)", None),
        (lambda: lib.rotary_inplace.bind(
            BF16Fake((1, 4, 2, 128)), Fake((4, 64), "<f4"),
            Fake((4, 64), "<f4", strides=(4, 256))),
         "argument 'sin' with shape [4, 64] has strides [1, 64] (in elements) "
         "but the kernel expects a contiguous row-major tensor, strides "
         "[64, 1]", "sin"),
        (lambda: lib.rotary_inplace.bind(
            BF16Fake((1, 4, 2, 128)), Fake((4, 64), "<f4"),
            Fake((4, 64), "<f4", strides=(6, 2))),
         "argument 'sin' has strides [6, 2] bytes, not multiples of its "
         "element size 4", "sin"),
        (lambda: runtime_inputs["scale_add"].scale_add.bind(
            Fake((1000,), "<f4"), Fake((1000,), "<f4", readonly=True),
            a=1.0, b=1),
         "argument 'y' is read-only but the kernel writes it", "y"),
        (lambda: runtime_inputs["scale_add"].scale_add.bind(
            Fake((1001,), "<f4"), Fake((1001,), "<f4"), a=1.0, b=1),
         "requires 'N % 4 == 0' does not hold: N = 1001", None),
        (lambda: runtime_inputs["scale_add"].scale_add.bind(
            Fake((1000,), "<f4"), Fake((1000,), "<f4"), a=1.0, b=-2),
         "requires 'b >= 0' does not hold: b = -2", None),
        (lambda: runtime_inputs["scale_add"].scale_add.bind(
            Fake((1000,), "<f4"), Fake((1000,), "<f4"), a=1.0, b=2**31),
         "scalar 'b' (i32): value 2147483648 does not fit in i32", "b"),
        (lambda: runtime_inputs["scale_add"].scale_add.bind(
            Fake((1000,), "<f4"), Fake((1000,), "<f4"), a=1.0, b=2.5),
         "scalar 'b' (i32): expects an integer, got '2.5'", "b"),
        (lambda: runtime_inputs["rotary"].rotary.bind(
            BF16Fake((2, 16, 4, 64)), Fake((16, 16), "<f4"),
            Fake((16, 16), "<f4")),
         "size variable 'R' has no value: pass dims={'R': VALUE} "
         "(tegula_rt_binding_set_dim) or a tensor with R in its shape", None),
        (lambda: runtime_inputs["rotary"].rotary.bind(
            BF16Fake((2, 16, 4, 64)), Fake((16, 40), "<f4"),
            Fake((16, 40), "<f4"), dims={"R": 80}),
         "requires 'R <= D' does not hold: R = 80, D = 64", None),
    ]
    for call, message, argument in cases:
        e = launch_error(call)
        assert str(e) == message
        assert e.argument == argument, message


def test_cpu_memory_refused():
    np = pytest.importorskip("numpy")
    lib = tegula.load(os.path.join(INPUTS, "scale_add", "scale_add.json"))
    e = launch_error(lib.scale_add.bind, np.zeros(1000, np.float32),
                     np.zeros(1000, np.float32), a=1.0, b=1)
    assert str(e) == ("argument 'x' is in dlpack device 1 memory; the kernel "
                      "needs CUDA device memory")


# --- Launching without a GPU -----------------------------------------------

@pytest.mark.skipif(has_driver(), reason="a CUDA driver is installed")
def test_no_driver(runtime_inputs):
    scale_add = runtime_inputs["scale_add"].scale_add
    x, y = Fake((1000,), "<f4"), Fake((1000,), "<f4", 0x200000)
    with pytest.raises(tegula.DriverError,
                       match=r"^no CUDA driver: cannot load libcuda.so.1 "
                       r"\(.*\); the tegula runtime needs a machine with an "
                       r"NVIDIA GPU and its driver$") as info:
        scale_add(x, y, a=1.0, b=1)
    assert info.value.status == 4
    # Same shapes again: the cached binding still checks new pointers
    # before the driver.
    e = launch_error(scale_add, x, Fake((1000,), "<f4", 0x200004), a=1.0, b=1)
    assert str(e) == ("argument 'y' is at a device address that is not "
                      "16-byte aligned")
    with pytest.raises(tegula.DriverError, match="no CUDA driver"):
        scale_add.prepare()


def test_left_out_output_needs_torch_or_allocates(lib):
    x, w = BF16Fake((3, 100)), BF16Fake((100,), 0x200000)
    try:
        import torch  # noqa: F401
    except ImportError:
        e = launch_error(lib.rmsnorm, x, w, eps=1.0)
        assert str(e) == ("argument 'y' was left out, and allocating it "
                          "needs PyTorch: pass it")
        return
    pytest.skip("torch is installed: allocation is tested on the GPU")


def test_stream_argument(runtime_inputs):
    scale_add = runtime_inputs["scale_add"].scale_add
    with pytest.raises(tegula.Error, match="stream= takes a CUstream"):
        scale_add(Fake((1000,), "<f4"), Fake((1000,), "<f4"), a=1.0, b=1,
                  stream="s")


# --- Cubin selection --------------------------------------------------------

def test_cubin_selection(lib):
    rms = lib.rmsnorm  # built for sm_90a with ptxas
    assert rms.uses_cubin(9, 0) and rms.uses_cubin(9, 0, "div16")
    assert not rms.uses_cubin(8, 0) and not rms.uses_cubin(10, 0)
    assert not rms.uses_cubin(9, 1)
    plain = tegula.load(os.path.join(BUNDLES, "nocubin"))
    assert not plain.rmsnorm.uses_cubin(9, 0)


# --- Expressions of the fake implementation ---------------------------------

def test_dim_expressions():
    from tegula._expr import evaluate
    assert evaluate("R / 2", {"R": 64}) == 32
    assert evaluate("cdiv(N, 64) * 64", {"N": 65}) == 128
    assert evaluate("-7 / 2", {}) == -3 and evaluate("-7 % 2", {}) == -1
    assert evaluate("max(A, min(B, 3))", {"A": 1, "B": 9}) == 3
    with pytest.raises(ValueError, match="unsupported dim expression"):
        evaluate("A ** 2", {"A": 3})


# --- torch.library ------------------------------------------------------------

def test_torch_op_schema(lib):
    pytest.importorskip("torch")
    import tegula.torch as tt
    assert tt._schema(lib.rmsnorm, "rmsnorm", False) == \
        "rmsnorm(Tensor x, Tensor w, float eps) -> Tensor"
    assert tt._schema(lib.rmsnorm, "rmsnorm", True) == \
        "rmsnorm(Tensor x, Tensor w, Tensor(a2!) y, float eps) -> ()"
    assert tt._schema(lib.rotary_inplace, "rot", False) == \
        "rot(Tensor(a0!) x, Tensor cos, Tensor sin) -> ()"
    import torch
    op = tt.op(lib.rmsnorm, "tegula_test::rmsnorm")
    with torch._subclasses.fake_tensor.FakeTensorMode():
        x = torch.empty(3, 100, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(100, dtype=torch.bfloat16, device="cuda")
        y = op(x, w, 1e-5)
        assert tuple(y.shape) == (3, 100) and y.dtype == torch.bfloat16


# --- The fast path of repeated calls ------------------------------------------

class _FakeTorchModule:
    """Just enough of torch for Kernel.__call__ on CUDA tensors: a Tensor
    type, the dtypes, and torch._C's current device and raw stream."""

    class Tensor:
        def __init__(self, shape, dtype, ptr, device=0, storage=None):
            self.shape, self.dtype = tuple(shape), dtype
            self._ptr, self._device = ptr, device
            # (address, bytes) of the allocation: the tensor's own memory.
            self._storage = storage or (ptr, 4 * math.prod(shape))

        def untyped_storage(self):
            address, size = self._storage
            return types.SimpleNamespace(data_ptr=lambda: address,
                                         nbytes=lambda: size)

        def element_size(self):
            return 2 if self.dtype in ("float16", "bfloat16") else 4

        def storage_offset(self):
            return (self._ptr - self._storage[0]) // self.element_size()

        def stride(self):
            strides, step = [], 1
            for d in reversed(self.shape):
                strides.append(step)
                step *= d
            return tuple(reversed(strides))

        def get_device(self):
            return self._device

        def data_ptr(self):
            return self._ptr

    float16, bfloat16, float32 = "float16", "bfloat16", "float32"
    int32, int64, bool = "int32", "int64", "bool"
    allocated = []

    @classmethod
    def empty(cls, shape, dtype, device):
        # The full path names the device ("cuda:0"), the fast path its index.
        if isinstance(device, str):
            device = int(device.split(":")[1])
        t = cls.Tensor(shape, dtype, 0x900000 + 0x10000 * len(cls.allocated),
                       device)
        cls.allocated.append(t)
        return t

    class _C:
        @staticmethod
        def _cuda_getDevice():
            return 0

        @staticmethod
        def _cuda_getCurrentRawStream(device):
            return 0x5000 + device


def _record_full_calls(monkeypatch):
    """The arguments of every call that takes Kernel's full path."""
    from tegula import _kernel
    full = []
    real_call = _kernel.Kernel._call
    monkeypatch.setattr(_kernel.Kernel, "_call",
                        lambda self, *a: full.append(a) or real_call(self, *a))
    return full


def test_fast_path(monkeypatch, runtime_inputs):
    """The second call with the same shapes, dtypes and scalars skips the
    checks and passes only the new pointers; anything else takes the full
    path, which checks (and raises) as the first call did."""
    from tegula import _arrays, _lib
    fake = _FakeTorchModule()
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(_arrays, "_torch_dtypes", None)
    launches = []

    def launch(handle, pointers, count, stream):
        launches.append((handle, tuple(pointers[i] for i in range(count)),
                         stream))
        return 0
    monkeypatch.setattr(_lib.lib(), "tegula_rt_launch_pointers", launch)
    full = _record_full_calls(monkeypatch)

    k = runtime_inputs["scale_add"].scale_add  # (x: f32[N], y: mut f32[N], a, b)
    x, y = fake.Tensor((64,), "float32", 0x10000), fake.Tensor((64,), "float32", 0x20000)
    assert k(x, y, a=0.5, b=1) is None and len(full) == 1
    x2, y2 = fake.Tensor((64,), "float32", 0x30000), fake.Tensor((64,), "float32", 0x40000)
    assert k(x2, y2, a=0.5, b=1) is None and len(full) == 1
    assert launches[-1][1:] == ((0x30000, 0x40000, 0, 0), 0x5000)
    assert launches[-1][0] == launches[0][0]
    # Another scalar or size: the full path, once.
    k(x2, y2, a=0.25, b=1)
    k(x2, y2, a=0.25, b=1)
    assert len(full) == 2
    # A size the kernel refuses (requires N % 4 == 0) raises every time.
    bad = fake.Tensor((63,), "float32", 0x50000)
    for _ in range(2):
        e = launch_error(k, bad, bad, a=0.5, b=1)
        assert "N % 4 == 0" in str(e)


def test_fast_path_allocates_outputs(monkeypatch, lib):
    """An output left out is allocated on every call, in the shape and
    dtype the first call's check gave it, without the full path."""
    from tegula import _arrays, _lib
    fake = _FakeTorchModule()
    fake.allocated.clear()
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(_arrays, "_torch_dtypes", None)
    launches = []
    monkeypatch.setattr(
        _lib.lib(), "tegula_rt_launch_pointers",
        lambda h, p, n, s: launches.append(tuple(p[i] for i in range(n))) or 0)
    full = _record_full_calls(monkeypatch)
    # rmsnorm(x: bf16[R, C], w: bf16[C], y: mut bf16[R, C], eps: f32)
    k = lib.rmsnorm
    x = fake.Tensor((4, 256), "bfloat16", 0x10000)
    w = fake.Tensor((256,), "bfloat16", 0x20000)
    first = k(x, w, eps=1e-5)
    second = k(x, w, eps=1e-5)
    assert len(full) == 1 and len(fake.allocated) == 2
    assert second is fake.allocated[1] and first is fake.allocated[0]
    assert second.shape == (4, 256) and second.dtype == "bfloat16"
    assert launches[-1] == (0x10000, 0x20000, second.data_ptr(), 0)
    # The output given: another binding key, the full path once.
    y = fake.Tensor((4, 256), "bfloat16", 0x40000)
    assert k(x, w, y, eps=1e-5) is y and len(full) == 2
    assert k(x, w, y=y, eps=1e-5) is y and len(full) == 2
    # An input left out, or an unknown keyword: the full path's errors.
    assert "missing argument 'w'" in str(launch_error(k, x, eps=1e-5))
    assert "no parameter 'ys'" in str(launch_error(k, x, w, ys=y, eps=1e-5))


def test_fast_path_strided_allocations(monkeypatch):
    """A strided view's plan serves views at the same offset in an
    allocation of the same size, wherever it lies: each launch passes the
    allocations' addresses (tegula_rt_launch_views), so the C side checks
    the view against its own allocation, not the first call's (the
    attention backward's o, a new tensor each step, failed that check)."""
    from tegula import _arrays, _lib
    fake = _FakeTorchModule()
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(_arrays, "_torch_dtypes", None)
    launches = []

    def views(handle, pointers, bases, count, stream):
        launches.append((tuple(pointers[i] for i in range(count)),
                         tuple(bases[i] for i in range(count))))
        return 0
    monkeypatch.setattr(_lib.lib(), "tegula_rt_launch_views", views)
    full = _record_full_calls(monkeypatch)
    scale2 = tegula.load(os.path.join(BUNDLES, "strided")).scale2
    for step in range(3):
        # Rows 4..7 of a fresh [8, 64] tensor each step, written to another.
        base = 0x100000 * (step + 1)
        x = fake.Tensor((4, 64), "float32", base + 4 * 64 * 4,
                        storage=(base, 8 * 64 * 4))
        y = fake.Tensor((4, 64), "float32", base + 0x80000)
        scale2(x, y)
        assert launches[-1] == ((base + 1024, base + 0x80000),
                                (base, base + 0x80000))
    assert len(full) == 1  # the later steps took the fast path


# --- Strided tensors ---------------------------------------------------------

def test_strided_views():
    scale2 = tegula.load(os.path.join(BUNDLES, "strided")).scale2
    assert scale2.signature == \
        "scale2(x: f32[M, N] strided, y: mut f32[M, N] strided)"
    assert scale2.param("x").strided and not scale2.param("x").is_output
    # Columns 3..10 of a 4 x 16 matrix (strides in bytes), written into a
    # column-major y: any strides, 4-byte alignment.
    x = Fake((4, 8), "<f4", 0x100000 + 12, strides=(64, 4))
    y = Fake((4, 8), "<f4", 0x200000, strides=(4, 16))
    binding = scale2.bind(x, y)
    assert binding.shapes["y"] == (4, 8)
    # A written view may not alias itself; a read one may (a broadcast row).
    scale2.bind(Fake((4, 8), "<f4", strides=(0, 4)), y)
    error = launch_error(scale2.bind, x, Fake((4, 8), "<f4", 0x200000,
                                              strides=(16, 4)))
    assert str(error) == (
        "argument 'y' with shape [4, 8] has strides [4, 1]: the kernel writes "
        "it, and elements would overlap (dimension 0's stride 4 does not step "
        "past the smaller dimensions)")
    error = launch_error(scale2.bind, Fake((4, 8), "<f4", 0x100002,
                                           strides=(64, 4)), y)
    assert "not 4-byte aligned (0x100002)" in str(error)


def test_strided_variants():
    scale2 = tegula.load(os.path.join(BUNDLES, "strided")).scale2
    # div16 would be the general code: only the unit-stride variants.
    assert scale2.variants == ("div16_unit", "unit")
    y = Fake((16, 64), "<f4", 0x200000)

    def variant(ptr=0x100000, strides=None, shape=(16, 64), out=y):
        return scale2.bind(Fake(shape, "<f4", ptr, strides=strides),
                           out).variant
    # Unit last stride, rows 16 bytes apart, a 16-byte aligned address: the
    # variant, as for row-major views and broadcast rows.
    assert variant() == "div16_unit"
    assert variant(strides=(320, 4)) == "div16_unit"
    assert variant(strides=(0, 4)) == "div16_unit"
    # Sizes off 16: unit.
    assert variant(shape=(12, 64), out=Fake((12, 64), "<f4")) == "unit"
    # Otherwise the general code: a slice starting mid-vector, rows 8 bytes
    # off 16, a transposed view, at any size.
    assert variant(ptr=0x100000 + 12, strides=(320, 4)) == "general"
    assert variant(strides=(264, 4)) == "general"
    assert variant(strides=(4, 64)) == "general"
    assert variant(shape=(12, 64), strides=(4, 48),
                   out=Fake((12, 64), "<f4")) == "general"


class _RepeatRuntime:
    """The C API's two launches, recording what they were given."""

    def __init__(self, status=0):
        self.calls = []
        self.status = status

    def tegula_rt_launch_pointers(self, handle, pointers, count, stream):
        self.calls.append(("pointers", handle, list(pointers[:count]), None,
                           count, stream))
        return self.status

    def tegula_rt_last_error(self):
        return b"launch failed"

    def tegula_rt_launch_views(self, handle, pointers, bases, count, stream):
        self.calls.append(("views", handle, list(pointers[:count]),
                           list(bases[:count]), count, stream))
        return self.status


class _RepeatPlan:
    def __init__(self, count):
        self.handle = 7
        self.pointers = (ctypes.c_uint64 * count)()
        self.bases = (ctypes.c_uint64 * count)()


class _Pointer:
    def __init__(self, address):
        self.address = address

    def data_ptr(self):
        return self.address


def test_repeat_sets_pointers_and_bases(monkeypatch):
    """_fast.Repeat (tegula.ops' repeated kernel calls): each tensor's
    pointer to its parameter's slot, a strided view's allocation base its
    pointer less its first call's byte offset, 0 for the others; nothing
    launched (False) on another current device; a failed launch raises."""
    from tegula import _fast, _lib
    current = [0]
    entry = types.SimpleNamespace(current_device=lambda: current[0],
                                  stream=lambda device: 0xabc)
    monkeypatch.setattr(_fast, "torch_entry_points", lambda: entry)
    rt = _RepeatRuntime()
    monkeypatch.setattr(_lib, "lib", lambda: rt)
    # Tensors in slots 0-2 before a scalar (slot 3); slot 1 is a view 256
    # bytes into its storage.
    repeat = _fast.Repeat(_RepeatPlan(4), 4, [-1, 256, -1], 0)
    assert repeat([_Pointer(0x1000), _Pointer(0x2100), _Pointer(0x3000)])
    assert rt.calls[-1] == ("views", 7, [0x1000, 0x2100, 0x3000, 0],
                            [0, 0x2000, 0, 0], 4, 0xabc)
    # No strided view: the pointers alone.
    repeat = _fast.Repeat(_RepeatPlan(3), 3, None, 0)
    assert repeat([_Pointer(5), _Pointer(9)])
    assert rt.calls[-1] == ("pointers", 7, [5, 9, 0], None, 3, 0xabc)
    current[0] = 1
    assert not repeat([_Pointer(6), _Pointer(8)])
    assert len(rt.calls) == 2
    current[0] = 0
    rt.status = 1
    with pytest.raises(tegula.Error, match="^launch failed$"):
        repeat([_Pointer(4), _Pointer(2)])
