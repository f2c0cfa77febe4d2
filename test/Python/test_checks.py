"""The tegula package's checks of what it passes through ctypes, with no
GPU: empty launches, outputs given with their contents, values past the C
types (which ctypes wrapped silently), the binding cache's scalar keys, and
malformed arguments raising tegula.Error, never a raw TypeError or
ValueError. Run by python.test with test_tegula.py."""

import ctypes
import math
import os
import struct

import pytest

import tegula
from tegula import _checks, _lib

BUNDLES = os.environ["TEGULA_TEST_BUNDLES"]
INPUTS = os.environ["TEGULA_TEST_INPUTS"]


class Fake:
    """A device array as __cuda_array_interface__ describes it."""

    def __init__(self, shape, typestr="<f4", ptr=0x100000, strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (ptr, False),
            "strides": strides, "version": 3}


@pytest.fixture(scope="module")
def scale_add():
    return tegula.load(os.path.join(INPUTS, "scale_add",
                                    "scale_add.json")).scale_add


@pytest.fixture(scope="module")
def scalars():
    return tegula.load(os.path.join(BUNDLES, "scalars")).scalars


@pytest.fixture
def launches(monkeypatch):
    """tegula_rt_launch_pointers replaced by a recorder."""
    calls = []

    def launch(handle, pointers, count, stream):
        calls.append(tuple(pointers[i] for i in range(count)))
        return 0
    monkeypatch.setattr(_lib.lib(), "tegula_rt_launch_pointers", launch)
    return calls


def recorded(monkeypatch, name):
    """Records the values the library's `name` receives (and still calls
    it)."""
    seen = []
    real = getattr(_lib.lib(), name)

    def record(handle, key, value):
        seen.append((key.decode(), value))
        return real(handle, key, value)
    monkeypatch.setattr(_lib.lib(), name, record)
    return seen


def error(call, *args, **kwargs):
    with pytest.raises(tegula.Error) as info:
        call(*args, **kwargs)
    return str(info.value)


# --- Empty launches -----------------------------------------------------------

def test_empty_launch(scale_add):
    # Address 0 (what PyTorch gives an empty CUDA tensor), a grid of 0:
    # bound, packed, and launched as nothing, without a driver.
    x, y = Fake((0,), ptr=0), Fake((0,), ptr=0)
    b = scale_add.bind(x, y, a=1.0, b=1)
    assert b.grid == (0, 1, 1) and b.packed
    assert b.shapes == {"x": (0,), "y": (0,)}
    assert scale_add(x, y, a=1.0, b=1) is None


def test_empty_output_allocation():
    scale = tegula.load(os.path.join(BUNDLES, "configs")).scale
    b = scale.bind(Fake((0,), ptr=0))
    assert b.allocations == {"y": ((0,), "f32")} and b.grid == (0, 1, 1)


# --- Outputs given --------------------------------------------------------------

def test_output_given_is_written_in_place(launches):
    # A write-only output passed in is launched on as it is (its unwritten
    # elements keep their contents) and returned; nothing is allocated.
    scale = tegula.load(os.path.join(BUNDLES, "configs")).scale
    x, y = Fake((1000,), ptr=0x100000), Fake((1000,), ptr=0x200000)
    assert scale(x, y) is y
    assert launches == [(0x100000, 0x200000)]


# --- Values past the C types ----------------------------------------------------

def test_f32_scalar_range(monkeypatch, scalars):
    y = Fake((128,))
    seen = recorded(monkeypatch, "tegula_rt_binding_set_scalar_float")
    scalars.bind(y, a=2**64 + 3, b=0, c=0, d=True)
    assert seen == [("a", float(2**64 + 3))]  # not 3.0
    assert error(scalars.bind, y, a=10**400, b=0, c=0, d=True) == (
        "scalar 'a' (f32): value 10000000000000000000... (401 digits) does "
        "not fit in f32")
    assert error(scalars.bind, y, a=2**200, b=0, c=0, d=True) == (
        "scalar 'a' (f32): value 1.6069380442589903e+60 does not fit in f32")
    assert error(scalars.bind, y, a=True, b=0, c=0, d=True) == (
        "scalar 'a' (f32) expects a number, got bool")
    scalars.bind(y, a=math.inf, b=0, c=0, d=True)  # given as such


def test_integer_scalar_ranges(monkeypatch, scalars):
    y = Fake((128,))
    seen = recorded(monkeypatch, "tegula_rt_binding_set_scalar_int")
    scalars.bind(y, a=1.0, b=-2**31, c=2**63 - 1, d=1)
    assert seen == [("b", -2**31), ("c", 2**63 - 1), ("d", 1)]
    cases = [
        (dict(b=2**64 + 3),
         "scalar 'b' (i32): value 18446744073709551619 does not fit in i32"),
        (dict(b=2**31),
         "scalar 'b' (i32): value 2147483648 does not fit in i32"),
        (dict(c=2**63),
         "scalar 'c' (i64): value 9223372036854775808 does not fit in i64"),
        (dict(c=-2**63 - 1),
         "scalar 'c' (i64): value -9223372036854775809 does not fit in i64"),
        (dict(d=2**64 + 1),
         "scalar 'd' (bool): expects true, false, 1 or 0, got "
         "'18446744073709551617'"),
        (dict(d=2), "scalar 'd' (bool): expects true, false, 1 or 0, got '2'"),
        (dict(b=True), "scalar 'b' (i32) expects an integer, got bool"),
        (dict(d="yes"), "scalar 'd' (bool) expects a bool, got str"),
        (dict(c=None), "scalar 'c' (i64) expects an integer, got NoneType"),
        (dict(b=[1]), "scalar 'b' (i32) expects an integer, got list"),
    ]
    for change, message in cases:
        args = dict(a=1.0, b=0, c=0, d=True)
        args.update(change)
        assert error(scalars.bind, y, **args) == message, change


def test_dims_ranges(scalars, scale_add):
    y = Fake((128,))
    args = dict(a=1.0, b=0, c=0, d=True)
    assert error(scalars.bind, y, dims={"N": 2**64 + 128}, **args) == (
        "size variable 'N' = 18446744073709551744 (from dims) must be in "
        "[0, 2147483647]: size variables are not negative and are passed as "
        "32 bits")
    assert error(scalars.bind, y, dims={"N": 1.5}, **args) == \
        "dims: 'N' expects an integer, got float"
    assert error(scalars.bind, y, dims={"N": True}, **args) == \
        "dims: 'N' expects an integer, got bool"
    assert error(scalars.bind, y, dims={"N": "128"}, **args) == \
        "dims: 'N' expects an integer, got str"
    assert error(scalars.bind, y, dims=[("N", 128)], **args) == \
        "dims= takes a mapping of size variable names to integers, got list"
    assert error(scalars.bind, y, dims={3: 128}, **args) == \
        "dims= takes size variable names as str, got int"
    assert error(scalars.bind, y, dims={"Q": 2**70}, **args) == (
        "dims sets 'Q', which is not a size variable of 'scalars' (size "
        "variables: N)")
    assert error(scale_add, Fake((8,)), Fake((8,)), a=1.0, b=1,
                 dims=[1]) == ("dims= takes a mapping of size variable "
                               "names to integers, got list")


def test_array_ranges(scale_add):
    def bind(x):
        return scale_add.bind(x, Fake((8,), ptr=0x200000), a=1.0, b=1)
    cases = [
        (Fake((2**64 + 8,)),
         "argument 'x' has shape [18446744073709551624], past 64 bits"),
        (Fake((8,), strides=(2**66,)),
         "argument 'x' has strides [73786976294838206464] bytes, past 64 "
         "bits"),
        (Fake((8,), ptr=2**64 + 16),
         "argument 'x' has data pointer 18446744073709551632, not a device "
         "address (an integer in [0, 2^64))"),
        (Fake((8,), ptr=-16),
         "argument 'x' has data pointer -16, not a device address (an "
         "integer in [0, 2^64))"),
        (Fake((8,), ptr="0x1000"),
         "argument 'x' has data pointer '0x1000', not a device address (an "
         "integer in [0, 2^64))"),
        (Fake(("8",)), "argument 'x' has shape ['8'], not all integers"),
        (Fake((8.0,)), "argument 'x' has shape [8.0], not all integers"),
        (Fake(8), "argument 'x' has shape 8, not a sequence of integers"),
        (Fake((8,), strides=("4",)),
         "argument 'x' has strides ['4'], not all integers"),
        (Fake((8,), strides=4),
         "argument 'x' has strides 4, not a sequence of integers"),
        (Fake(None),
         "argument 'x' has shape None, not a sequence of integers"),
        (Fake(()), "argument 'x' has shape [] (rank 0) but the kernel "
                   "expects [N] (rank 1)"),
    ]
    for x, message in cases:
        assert error(bind, x) == message, message


def test_uses_cubin_and_stream_ranges(scale_add):
    assert error(scale_add.uses_cubin, 2**32 + 9, 0) == (
        "uses_cubin(major) takes an integer in [-2^31, 2^31), got 4294967305")
    assert error(scale_add.uses_cubin, 9, "0") == (
        "uses_cubin(minor) takes an integer in [-2^31, 2^31), got '0'")
    assert error(scale_add.uses_cubin, 9, 0, "fast") == (
        "kernel 'scale_add' has no variant 'fast' (variants: general, )")
    assert not scale_add.uses_cubin(2**31 - 1, 2**31 - 1)
    for stream in (2**64, -1, True):
        assert error(scale_add, Fake((8,)), Fake((8,)), a=1.0, b=1,
                     stream=stream) == (
            f"stream= takes a CUstream, an address in [0, 2^64), got "
            f"{stream!r}")


# --- The binding cache ------------------------------------------------------------

def test_scalar_keys_by_bits(monkeypatch, launches, scale_add):
    # -0.0 after 0.0 is another binding (it once launched +0.0), and a NaN
    # finds its own binding again.
    seen = recorded(monkeypatch, "tegula_rt_binding_set_scalar_float")
    x, y = Fake((8,)), Fake((8,), ptr=0x200000)
    for a in (0.0, -0.0, -0.0, math.nan, math.nan):
        scale_add(x, y, a=a, b=1)
    bits = [struct.pack("<d", v) for _, v in seen]
    assert bits == [struct.pack("<d", v) for v in (0.0, -0.0)] + \
        [struct.pack("<d", math.nan)]
    assert len(launches) == 5
    assert _checks.scalar_key(0.0) != _checks.scalar_key(-0.0)
    assert _checks.scalar_key(math.nan) == _checks.scalar_key(math.nan)
    assert _checks.scalar_key(1) != _checks.scalar_key(True)


# --- Malformed arguments are tegula errors -----------------------------------------

class Raising:
    """An array whose protocol raises."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("no device")


def test_malformed_arrays(scale_add):
    y = Fake((8,), ptr=0x200000)
    cases = [
        (None, "argument 'x' expects a tensor (a torch.Tensor, an object "
               "with __cuda_array_interface__ or __dlpack__), got NoneType"),
        ("x", "argument 'x' expects a tensor (a torch.Tensor, an object "
              "with __cuda_array_interface__ or __dlpack__), got str"),
        ([[1.0, 2.0]], "argument 'x' expects a tensor (a torch.Tensor, an "
                       "object with __cuda_array_interface__ or __dlpack__), "
                       "got list"),
        (Raising(), "argument 'x' has a malformed __cuda_array_interface__ "
                    "(RuntimeError('no device'))"),
    ]
    for x, message in cases:
        assert error(scale_add.bind, x, y, a=1.0, b=1) == message
    cai = Fake((8,))
    cai.__cuda_array_interface__ = {"shape": (8,)}
    assert error(scale_add.bind, cai, y, a=1.0, b=1).startswith(
        "argument 'x' has a malformed __cuda_array_interface__ (KeyError(")


def test_malformed_numpy_arrays(scale_add):
    np = pytest.importorskip("numpy")
    y = Fake((8,), ptr=0x200000)
    for x in (np.array([None] * 8, dtype=object), np.zeros(8, bool)):
        message = error(scale_add.bind, x, y, a=1.0, b=1)
        assert message.startswith(
            "argument 'x' cannot be read through __dlpack__ ("), message
    assert error(scale_add.bind, np.zeros(8, np.float32)[::2], y, a=1.0,
                 b=1) == ("argument 'x' is in dlpack device 1 memory; the "
                          "kernel needs CUDA device memory")
    assert error(scale_add.bind, Fake((8,)), y, a=np.array(1.0), b=1) == (
        "scalar 'a' (f32) expects a number, got ndarray")
    scale_add.bind(Fake((8,)), y, a=np.float32(0.5), b=np.int64(3))


def test_library_paths():
    assert error(tegula.load, "/nonexistent/\udcff.json").startswith(
        "cannot open bundle '/nonexistent/")
