"""Values checked before ctypes converts them: ctypes wraps a Python int past
the C type silently (2**64 + 3 reaches the library as 3), and raises its own
TypeError for a wrong type. Every value the package passes on goes through
here, so that what the caller gets is the value or a tegula.Error."""

from __future__ import annotations

import numbers
import struct
from typing import Any, Mapping, Optional, Tuple

from ._errors import Error, LaunchError

INT32 = (-2**31, 2**31 - 1)
INT64 = (-2**63, 2**63 - 1)
UINT64 = (0, 2**64 - 1)


def is_int(value: Any) -> bool:
    """A Python or numpy integer; bool is not one here."""
    return isinstance(value, numbers.Integral) and not is_bool(value)


def is_bool(value: Any) -> bool:
    """A Python or numpy bool."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def scalar(name: str, dtype: str, value: Any) -> Tuple[str, Any]:
    """Scalar `name`'s value as the C ABI takes it: ("int", int) for
    set_scalar_int or ("float", float) for set_scalar_float. i32 and i64
    take integers in their range (and floats, which the library refuses
    unless integral), bool takes bools, 0 and 1, and f32 takes any real
    number, rounded to nearest: a finite value past f32's range is an
    error, infinities and NaN pass as given."""
    what = f"scalar '{name}' ({dtype})"
    if dtype == "bool":
        if is_bool(value) or (is_int(value) and int(value) in (0, 1)):
            return "int", int(value)
        if is_int(value):
            raise LaunchError(f"{what}: expects true, false, 1 or 0, got "
                              f"'{int(value)}'", name)
        raise LaunchError(f"{what} expects a bool, got "
                          f"{type(value).__name__}", name)
    if is_bool(value) or not isinstance(value, numbers.Real):
        kind = "a number" if dtype == "f32" else "an integer"
        raise LaunchError(f"{what} expects {kind}, got "
                          f"{type(value).__name__}", name)
    if dtype == "f32":
        try:
            return "float", float(value)
        except OverflowError:
            raise LaunchError(f"{what}: value {_short(value)} does not fit "
                              f"in f32", name) from None
    if not is_int(value):
        return "float", float(value)  # the library says it is no integer
    low, high = INT32 if dtype == "i32" else INT64
    if not low <= int(value) <= high:
        raise LaunchError(f"{what}: value {int(value)} does not fit in "
                          f"{dtype}", name)
    return "int", int(value)


def _short(value: Any) -> str:
    """An integer for a message: its first digits when it is long."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} digits)"


_PACK_DOUBLE = struct.Struct("<d").pack


def scalar_key(value: Any) -> Any:
    """What a binding made for scalar `value` depends on: floats by their
    bits, so that -0.0 and 0.0 differ and a NaN matches itself. The plain
    float and int every op passes first, without the numbers ABC checks
    (the fast path of a kernel call keys on this)."""
    kind = type(value)
    if kind is float:
        return _PACK_DOUBLE(value)
    if kind is int:
        return (int, value)
    if isinstance(value, numbers.Real) and not isinstance(
            value, numbers.Integral):
        try:
            return struct.pack("<d", float(value))
        except (OverflowError, ValueError):
            pass
    return (type(value), value)


def dims(value: Any, size_vars: Tuple[str, ...]) -> Optional[Mapping[str, int]]:
    """dims= checked: a mapping of size variable names to integers. A value
    past 64 bits of a size variable gets the library's own message."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise LaunchError(f"dims= takes a mapping of size variable names to "
                          f"integers, got {type(value).__name__}")
    for name, size in value.items():
        if not isinstance(name, str):
            raise LaunchError(f"dims= takes size variable names as str, got "
                              f"{type(name).__name__}")
        if not is_int(size):
            raise LaunchError(f"dims: '{name}' expects an integer, got "
                              f"{type(size).__name__}")
        if name in size_vars and not INT64[0] <= int(size) <= INT64[1]:
            raise LaunchError(
                f"size variable '{name}' = {int(size)} (from dims) must be "
                f"in [0, 2147483647]: size variables are not negative and are "
                f"passed as 32 bits")
    return value


def integers(name: str, what: str, values: Any, low: int, high: int,
             unit: str = "") -> Tuple[int, ...]:
    """An array's shape, strides or address: integers in [low, high], else
    a LaunchError naming argument `name`."""
    try:
        items = tuple(values)
    except TypeError:
        raise LaunchError(f"argument '{name}' has {what} "
                          f"{values!r}, not a sequence of integers",
                          name) from None
    for v in items:
        if not is_int(v):
            raise LaunchError(f"argument '{name}' has {what} {list(items)}, "
                              f"not all integers", name)
        if not low <= int(v) <= high:
            raise LaunchError(f"argument '{name}' has {what} "
                              f"{[int(x) for x in items]}{unit}, past 64 bits",
                              name)
    return tuple(int(v) for v in items)


def pointer(name: str, value: Any) -> int:
    """A device address: an integer in [0, 2^64)."""
    if value is None:
        return 0
    if not is_int(value) or not UINT64[0] <= int(value) <= UINT64[1]:
        raise LaunchError(f"argument '{name}' has data pointer {value!r}, "
                          f"not a device address (an integer in [0, 2^64))",
                          name)
    return int(value)


def c_int(what: str, value: Any) -> int:
    """An argument passed as a C int (32 bits)."""
    if not is_int(value) or not INT32[0] <= int(value) <= INT32[1]:
        raise Error(f"{what} takes an integer in [-2^31, 2^31), got "
                    f"{value!r}")
    return int(value)


def stream(value: int) -> int:
    """A CUstream given as an int: an address, [0, 2^64)."""
    if is_bool(value) or not UINT64[0] <= value <= UINT64[1]:
        raise Error(f"stream= takes a CUstream, an address in [0, 2^64), "
                    f"got {value!r}")
    return value
