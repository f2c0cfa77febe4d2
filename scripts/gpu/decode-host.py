#!/usr/bin/env python3
"""Host cost of one decoding step of fused_recurrent_gla and
fused_recurrent_linear_attention on the eager path (tegula.ops: no
dispatcher, checks once per signature, repeated launches) against the same
forward through its custom op (torch.ops.tegula.*_forward: the dispatcher,
as torch.compile calls it), in one process, rotated (ops_bench's
host_us_rotated). On the GPU machine:
    PYTHONPATH=python python3 scripts/gpu/decode-host.py [CALLS] [ROUNDS]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "bench"))
import ops_bench  # noqa: E402

ops_bench.load_gpu()
import tegula.ops  # noqa: E402


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    g = torch.Generator(device="cuda").manual_seed(5)
    x = ops_bench.decode_inputs(g)
    q, k, v, gate, h0 = (x[n] for n in ("q", "k", "v", "g", "h0"))
    fns = {
        "fused_recurrent_gla, tegula.ops": lambda: tegula.ops.
        fused_recurrent_gla(q, k, v, gate, scale=0.125, initial_state=h0,
                            output_final_state=True),
        "fused_recurrent_gla, custom op": lambda: torch.ops.tegula.
        gla_forward(q, k, v, gate, h0, 0.125, True, False),
        "fused_recurrent_linear_attention, tegula.ops": lambda: tegula.ops.
        fused_recurrent_linear_attention(q, k, v, scale=0.125,
                                         initial_state=h0,
                                         output_final_state=True),
        "fused_recurrent_linear_attention, custom op": lambda: torch.ops.
        tegula.linear_attention_forward(q, k, v, h0, 0.125, True),
    }
    with torch.no_grad():
        first = {name: fn() for name, fn in fns.items()}
        for op in ("fused_recurrent_gla", "fused_recurrent_linear_attention"):
            a, b = first[op + ", tegula.ops"], first[op + ", custom op"]
            same = all(torch.equal(s, t) for s, t in zip(a, b))
            print(f"{op}: eager path and custom op "
                  f"{'bit-identical' if same else 'DIFFER'}", flush=True)
        us = ops_bench.host_us_rotated(fns, calls, rounds)
    for name, value in us.items():
        print(f"{name}: {value:.2f} us per call (median of {rounds} rounds "
              f"of {calls} calls)", flush=True)


if __name__ == "__main__":
    main()
