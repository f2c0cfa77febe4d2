#!/usr/bin/env python3
"""Small .npy tools for the interpreter tests (standard library only).

  npy.py print FILE            shape, then one line per row of the last dim
  npy.py make FILE DESCR SHAPE EXPR
                               element i (flat) = EXPR with i bound; DESCR is
                               <f2, <f4, <f8 or <i4; SHAPE is "3,5"
  npy.py matmul OUT A B [C]    OUT = C + A @ B in float64, as <f8
"""
import ast
import struct
import sys

FORMATS = {"<f2": "e", "<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?"}


def load(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    assert not header["fortran_order"]
    fmt = FORMATS[header["descr"]]
    shape = list(header["shape"])
    n = 1
    for e in shape:
        n *= e
    body = data[start + hlen:]
    values = list(struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)]))
    return shape, values


def save(path, descr, shape, values):
    fmt = FORMATS[descr]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % e for e in shape) if len(shape) == 1 else
        ", ".join(str(e) for e in shape))
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def fmt(v):
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def main():
    cmd = sys.argv[1]
    if cmd == "print":
        shape, values = load(sys.argv[2])
        print("shape", shape)
        row = shape[-1] if shape else 1
        for k in range(0, len(values), max(row, 1)):
            print(" ".join(fmt(v) for v in values[k:k + row]))
    elif cmd == "make":
        path, descr, shape = sys.argv[2], sys.argv[3], [int(s) for s in sys.argv[4].split(",")]
        n = 1
        for e in shape:
            n *= e
        values = [eval(sys.argv[5], {"i": i}) for i in range(n)]
        save(path, descr, shape, values)
    elif cmd == "matmul":
        (M, K), a = load(sys.argv[3])
        (K2, N), b = load(sys.argv[4])
        assert K == K2
        c = load(sys.argv[5])[1] if len(sys.argv) > 5 else [0.0] * (M * N)
        out = [c[i * N + j] + sum(a[i * K + k] * b[k * N + j] for k in range(K))
               for i in range(M) for j in range(N)]
        save(sys.argv[2], "<f8", [M, N], out)
    else:
        sys.exit("unknown command " + cmd)


main()
