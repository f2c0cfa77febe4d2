#!/usr/bin/env python3
"""Writes bundles with malformed images into the directory given, one
directory per case, each holding copy.json, copy.ptx and (for the cubin
cases) copy.cubin: the copy kernel of ../copy with a hand-made ELF64 file
(three sections: null, .shstrtab, .text) or a damaged PTX."""
import json
import os
import struct
import sys

out, inputs = sys.argv[1], os.path.dirname(os.path.abspath(__file__))
copy = os.path.join(inputs, "..", "copy")
ptx = open(os.path.join(copy, "copy.ptx")).read()
bundle = json.load(open(os.path.join(copy, "copy.json")))


def elf(cls=2, shnum=3, shstrndx=1, shoff=None, names_type=3,
        text_offset=None, phnum=0, phoff=0):
    names = b"\0.shstrtab\0.text\0"
    text = b"\0" * 32
    body_at = 64
    names_at, text_at = body_at, body_at + len(names)
    shoff = text_at + len(text) if shoff is None else shoff
    header = b"\x7fELF" + bytes([cls, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, phoff, shoff, 0, 64,
                          56, phnum, 64, shnum, shstrndx)

    def section(name, kind, offset, size):
        return struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, offset, size, 0,
                           0, 1, 0)
    sections = section(0, 0, 0, 0)
    sections += section(1, names_type, names_at, len(names))
    sections += section(11, 1, text_at if text_offset is None else text_offset,
                        len(text))
    return header + names + text + sections


ptx_cut = ptx[:ptx.index(")", ptx.index(".entry copy(")) + 1] + "\n"
entry = ptx[ptx.index(".visible .entry copy("):ptx.index(")", ptx.index(".entry copy(")) + 1]
ptx_comment = ptx.replace(".entry copy(", ".entry other(").replace(
    "// .globl\tcopy", "/*\n" + entry + "\n{ }\n*/")
ptx_shared = ptx.replace(".address_size 64\n",
                         ".address_size 64\n\n.shared .align 16 .b8 buf[4096];\n"
                         "// .shared .b8 commented[65536];\n")

cases = {
    "elf-good": (elf(), ptx),
    "elf-short": (elf()[:40], ptx),
    "elf-32": (elf(cls=1), ptx),
    "elf-shtable": (elf()[:-10], ptx),
    "elf-section": (elf(text_offset=1 << 63), ptx),
    "elf-shstrndx": (elf(shstrndx=7), ptx),
    "elf-notstrtab": (elf(names_type=1), ptx),
    "elf-phdr": (elf(phnum=2, phoff=4096), ptx),
    "ptx-cut": (None, ptx_cut),
    "ptx-comment": (None, ptx_comment),
    "ptx-shared": (None, ptx_shared),
}
for name, (cubin, text) in cases.items():
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    description = dict(bundle)
    if cubin is not None:
        description["cubin"] = "copy.cubin"
        open(os.path.join(directory, "copy.cubin"), "wb").write(cubin)
    json.dump(description, open(os.path.join(directory, "copy.json"), "w"))
    open(os.path.join(directory, "copy.ptx"), "w").write(text)
