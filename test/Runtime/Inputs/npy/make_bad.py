#!/usr/bin/env python3
"""Writes malformed .npy files into the directory given, one per case."""
import os
import struct
import sys

out = sys.argv[1]


def npy(header, data=b"", version=1):
    h = header.encode("latin1")
    if version == 1:
        prefix = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h))
    else:
        prefix = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h))
    return prefix + h + data


cases = {
    "empty": b"",
    "magic": b"\x89PNG\r\n\x1a\n\x00\x00\x00\x00",
    "short": b"\x93NUMPY\x01\x00",
    "version": npy("{}", version=9),
    "long-header": b"\x93NUMPY\x01\x00\xff\xff{}",
    "long-header-v2": b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}",
    "no-descr": npy("{'shape': (16,), }"),
    "descr": npy("{'descr': '<c16', 'fortran_order': False, 'shape': (16,), }"),
    "no-shape": npy("{'descr': '<i4', 'fortran_order': False, }"),
    "shape-open": npy("{'descr': '<i4', 'shape': (16, }"),
    "negative": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (-16,), }"),
    "huge": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"),
    "huge-dim": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
    "fortran-end": npy("{'descr': '<i4', 'shape': (16,), 'fortran_order':}"),
    "fortran": npy("{'descr': '<i4', 'fortran_order': True, 'shape': (4, 4), }", b"\0" * 64),
    "not-dict": npy("[1, 2, 3]"),
    "unclosed": npy("{'descr': '<i4', 'shape': (16, "),
    "blank": npy("   \n"),
    # Bytes that are not UTF-8 reach the message and the --json report.
    "descr-bytes": npy("{'descr': '<\xff\xfe', 'fortran_order': False, 'shape': (16,), }"),
    "size": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (16,), }", b"\0" * 60),
    # numpy keeps the last of duplicate keys: (4,) here, not (16,).
    "dup-shape": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (16,), 'shape': (4,), }", b"\0" * 64),
    "dup-descr": npy("{'descr': '<i4', \"descr\" : '<f4', 'fortran_order': False, 'shape': (16,), }", b"\0" * 64),
    "dup-fortran": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (16,), 'fortran_order': True, }", b"\0" * 64),
}
for name, data in cases.items():
    with open(os.path.join(out, name + ".npy"), "wb") as f:
        f.write(data)
