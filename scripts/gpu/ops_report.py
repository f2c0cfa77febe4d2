"""What the tegula.ops GPU checks share (check-ops.py, check-gla-ops.py):
one PASS/FAIL/INFO line per check, relative L2 errors, poisoned memory."""

import os

import torch

failures = 0


# Put before every name report() prints (check-ops.py's repeated calls).
prefix = ""


def seed_inputs(argv):
    """Seeds torch's generators: with the value after --seed in argv (a
    failing draw again), else a fresh random seed. Prints the seed, torch's
    version and the GPU, the header every check script's log starts with."""
    if "--seed" in argv:
        seed = int(argv[argv.index("--seed") + 1])
    else:
        seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    print(f"INFO seed {seed}; torch {torch.__version__}; "
          f"{torch.cuda.get_device_name()}", flush=True)
    return seed


def report(ok, name, detail):
    """One line; ok None is information, False counts as a failure."""
    global failures
    failures += ok is False
    word = {True: "PASS", False: "FAIL", None: "INFO"}[ok]
    print(f"{word} {prefix}{name}: {detail}", flush=True)


def rel_l2(got, want):
    """Relative L2 error; a reference of None (no gradient: the loss does
    not depend on it) wants exact zeros."""
    if want is None:
        want = torch.zeros_like(got, dtype=torch.float64)
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def poison():
    """Fills free caching-allocator memory with NaN: an output the kernels
    leave unwritten then shows."""
    free = torch.cuda.mem_get_info()[0]
    block = torch.empty(int(free * 0.5) // 4, dtype=torch.float32,
                        device="cuda")
    block.fill_(float("nan"))
    del block


def time_of(fn, reps=20):
    """Milliseconds per call of fn, after 3 warm-up calls."""
    import time
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / reps * 1e3
