"""A compiled kernel whose dims are size expressions (x [M, N * 2],
s [M + 1, N]: test/Frontend/size-expressions.tile) through the tegula
package with no GPU: its signature, a binding that computes the left-out
output's shape, and each expression's shape check as a LaunchError.

Run by size-expressions.test, which compiles the bundle into
TEGULA_TEST_BUNDLES."""

import os

import pytest

import tegula

BUNDLES = os.environ["TEGULA_TEST_BUNDLES"]


class Fake:
    """A float32 device array as __cuda_array_interface__ describes it."""

    def __init__(self, shape, ptr):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": "<f4", "data": (ptr, False),
            "strides": None, "version": 3}


@pytest.fixture(scope="module")
def halves():
    return tegula.load(os.path.join(BUNDLES, "halves.json")).halves


def test_signature(halves):
    assert halves.signature == \
        "halves(x: f32[M, N * 2], o: mut f32[M, N], s: f32[M + 1, N])"
    assert halves.size_vars == ("M", "N")


def test_bind(halves):
    b = halves.bind(Fake((5, 38), 0x1000), s=Fake((6, 19), 0x2000))
    assert b.shapes["o"] == (5, 19)
    assert b.grid == (5, 2, 1)


@pytest.mark.parametrize("x, s, message", [
    ((5, 37), (6, 19), "argument 'x' has shape [5, 37] but the kernel "
                       "expects [M, N * 2] = [5, 38]"),
    ((5, 38), (5, 19), "argument 's' has shape [5, 19] but the kernel "
                       "expects [M + 1, N] = [6, 19]"),
])
def test_shape_checks(halves, x, s, message):
    with pytest.raises(tegula.LaunchError) as info:
        halves.bind(Fake(x, 0x1000), s=Fake(s, 0x2000))
    assert str(info.value) == message
