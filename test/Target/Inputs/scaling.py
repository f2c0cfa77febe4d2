"""Writes a large generated program for test/Target/compile-time-scaling.test.

    scaling.py asserts N   one kernel with N device_asserts
    scaling.py stores N    one kernel storing N blocks of one tensor
    scaling.py kernels N   N small kernels in one file
"""
import sys


def asserts(n):
    yield "kernel k(x: tensor<f32>[N], y: mut tensor<f32>[N]) grid [1] {"
    yield "  let v = load(x[arange(128)]);"
    for i in range(n):
        yield f'  device_assert(v < {i}.0 + 1000.0, "a{i}");'
    yield "  store(y[arange(128)], v);"
    yield "}"


def stores(n):
    yield "kernel k(x: tensor<f32>[N], y: mut tensor<f32>[N]) grid [1] {"
    yield "  let v = load(x[arange(128)]);"
    for i in range(n):
        yield f"  store(y[{i * 128} : {(i + 1) * 128}], v + {i}.0);"
    yield "}"


def kernels(n):
    for i in range(n):
        yield (f"kernel k{i}(x: tensor<f32>[N], y: mut tensor<f32>[N]) "
               "grid [cdiv(N, 128)] {")
        yield "  let i = program_id(0) * 128 + arange(128);"
        yield f"  store(y[i], load(x[i]) * {i}.0);"
        yield "}"


kind, count = sys.argv[1], int(sys.argv[2])
print("\n".join({"asserts": asserts, "stores": stores,
                 "kernels": kernels}[kind](count)))
