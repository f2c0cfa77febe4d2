#!/usr/bin/env python3
"""Writes the index inputs of the varlen and paged attention checks as .npy
files (int32), and a few float inputs, into DIR:
test/Kernels/attention-varlen.test, attention-paged.test and
attention-bwd.test read them in the interpreter, and
scripts/gpu/stage-kernels.sh stages them for the GPU runs of
scripts/gpu/kernel-configs.sh. Plain Python, no numpy.

    python3 attention_inputs.py DIR
"""
import os
import struct
import sys


def write_npy(path, rows, shape=None, descr="<i4"):
    """rows: a list of ints (1-D) or a list of equal-length lists (2-D), or
    a flat list with its `shape` (a tuple)."""
    if shape is not None:
        flat = list(rows)
    elif rows and isinstance(rows[0], list):
        shape = (len(rows), len(rows[0]))
        flat = [x for row in rows for x in row]
    else:
        shape = (len(rows),)
        flat = list(rows)
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = (f"{{'descr': '{descr}', 'fortran_order': False, "
              f"'shape': ({dims}), }}")
    # Magic (6) + version (2) + length (2) + header + newline: a multiple of 64.
    pad = -(10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        code = {"<f4": "f", "<i4": "i", "<i8": "q"}[descr]
        f.write(struct.pack(f"<{len(flat)}{code}", *flat))


def paged(num_pages, page, lens, max_pages, seed):
    """A block table of distinct pages in a scrambled order (entries past a
    sequence's pages are -1: never used) and the sequence lengths."""
    order = [(i * seed) % num_pages for i in range(num_pages)]
    assert len(set(order)) == num_pages, "seed must be coprime to num_pages"
    table, at = [], 0
    for n in lens:
        used = -(-n // page)
        assert used <= max_pages
        table.append(order[at:at + used] + [-1] * (max_pages - used))
        at += used
    assert at <= num_pages
    return table, lens


def poisoned_cache(table, lens, num_pages, page, hkv, d, seed):
    """A K or V cache (float32, rounded to the kernel's dtype on load) whose
    rows hold values in [-1, 1] where a sequence has a key and NaN
    everywhere else: a kernel that loads a row past a sequence's end, or a
    page it does not own, turns its output into NaN."""
    nan = float("nan")
    flat = [nan] * (num_pages * page * hkv * d)
    state = seed
    for pages, n in zip(table, lens):
        for j in range(n):
            row = pages[j // page] * page + j % page
            for e in range(hkv * d):
                state = (state * 6364136223846793005 + 1442695040888963407) \
                    % 2**64
                flat[row * hkv * d + e] = ((state >> 11) / 2**53) * 2 - 1
    return flat


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # varlen: sequences of 1, 65, 0, 74 and 63 rows covering T = 203; and
    # two covering 100 of T = 110 rows (rows 100..109 are in no sequence).
    write_npy(os.path.join(out, "cu-203.npy"), [0, 1, 66, 66, 140, 203])
    write_npy(os.path.join(out, "cu-110.npy"), [0, 37, 100])
    # varlen on the GPU: 7 sequences over T = 3000 rows, longest 1000.
    write_npy(os.path.join(out, "cu-3000.npy"),
              [0, 1000, 1017, 1500, 1501, 2222, 2900, 3000])
    # varlen with separate key bounds (attention_varlen_fwd and the
    # backward): over cu-203's queries (1, 65, 0, 74, 63) keys of 3, 40,
    # 20, 74 and 0 (TK = 137): more keys than queries, fewer (causal rows
    # that see none), keys without queries, equal, queries without keys.
    write_npy(os.path.join(out, "cu-k-137.npy"), [0, 3, 43, 63, 137, 137])
    # ... and keys 0..49, 50..89 for cu-110's queries over TK = 95 (key
    # rows 90..94 in no sequence).
    write_npy(os.path.join(out, "cu-k-95.npy"), [0, 50, 90])
    # ... on the GPU: keys of 800, 17, 600, 0, 721, 1000, 33 for cu-3000's
    # queries (1000, 17, 483, 1, 721, 678, 100) over TK = 3171.
    write_npy(os.path.join(out, "cu-k-3171.npy"),
              [0, 800, 817, 1417, 1417, 2138, 3138, 3171])
    # paged, PAGE = 16: lengths 1, 16, 0, 37, 100 over 17 pages, at most 7
    # pages a sequence (NUM_PAGES = 17).
    table, lens = paged(17, 16, [1, 16, 0, 37, 100], 7, 5)
    write_npy(os.path.join(out, "table-p16.npy"), table)
    write_npy(os.path.join(out, "lens-p16.npy"), lens)
    # ... and its caches for HKV = 2, D = 32, NaN outside the sequences, as
    # pages and flat (the same values).
    for name, seed in (("k", 1), ("v", 2)):
        cache = poisoned_cache(table, lens, 17, 16, 2, 32, seed)
        write_npy(os.path.join(out, f"cache-p16-{name}.npy"), cache,
                  (17, 16, 2, 32), "<f4")
        write_npy(os.path.join(out, f"cache-p16-{name}-flat.npy"), cache,
                  (17 * 16, 2, 32), "<f4")
    # paged, PAGE = 64: lengths 65, 3, 200 over 7 pages (NUM_PAGES = 7, at
    # most 4 a sequence).
    table, lens = paged(7, 64, [65, 3, 200], 4, 3)
    write_npy(os.path.join(out, "table-p64.npy"), table)
    write_npy(os.path.join(out, "lens-p64.npy"), lens)
    # paged on the GPU, PAGE = 256: 4 sequences up to 2000 keys over
    # NUM_PAGES = 21 (at most 8 pages a sequence).
    table, lens = paged(21, 256, [2000, 1, 777, 1280], 8, 5)
    write_npy(os.path.join(out, "table-p256.npy"), table)
    write_npy(os.path.join(out, "lens-p256.npy"), lens)
    # paged on the GPU, PAGE = 16: 6 sequences up to 1000 keys over
    # NUM_PAGES = 180 (at most 64 pages a sequence).
    table, lens = paged(180, 16, [1000, 15, 16, 0, 333, 1], 64, 7)
    write_npy(os.path.join(out, "table-p16-gpu.npy"), table)
    write_npy(os.path.join(out, "lens-p16-gpu.npy"), lens)
    # attention_bwd, [1, 1, 70, D] for D = 32 (interpreter) and 64 (GPU):
    # q = e_0 and k with k[:, 0] = 1 and the other features in [-1, 1].
    # With scale -100 every score is -100 and lse about -96, so a key past N
    # (score 0) would weigh exp(96), which f32 cannot hold: dQ must mask it.
    # (P is uniform; dq is not 0.)
    for d in (32, 64):
        e0 = [1.0 if f == 0 else 0.0 for _ in range(70) for f in range(d)]
        write_npy(os.path.join(out, f"bwd-q-e0-d{d}.npy"), e0,
                  (1, 1, 70, d), "<f4")
        state, k = 3, []
        for _ in range(70):
            for f in range(d):
                state = (state * 6364136223846793005 +
                         1442695040888963407) % 2**64
                k.append(1.0 if f == 0 else ((state >> 11) / 2**53) * 2 - 1)
        write_npy(os.path.join(out, f"bwd-k-d{d}.npy"), k, (1, 1, 70, d),
                  "<f4")
        # The same rows packed for the varlen backward ([70, 1, D]).
        write_npy(os.path.join(out, f"varlen-q-e0-d{d}.npy"), e0,
                  (70, 1, d), "<f4")
        write_npy(os.path.join(out, f"varlen-k-d{d}.npy"), k, (70, 1, d),
                  "<f4")
    # ... over two sequences: queries 30 and 40, keys 45 and 25 (causal
    # rows 0..14 of the second see none).
    write_npy(os.path.join(out, "cu-70.npy"), [0, 30, 70])
    write_npy(os.path.join(out, "cu-k-70.npy"), [0, 45, 70])


if __name__ == "__main__":
    main()
