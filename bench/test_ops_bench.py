"""Checks bench/ops_bench.py: its bookkeeping and tables without a GPU
(the train section from JSON files, a shape's checks and ratios with
stand-ins for torch and bench/run.py), and, on a CUDA machine with torch
and tegula.ops, its host section end to end.

    python3 -m pytest -q bench/test_ops_bench.py
"""
import contextlib
import json
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_bench as ob  # noqa: E402


def train_json(path, impl, tokens_per_s, losses, **extra):
    run = dict(impl=impl, losses=losses, tokens_per_s=tokens_per_s,
               device="GPU", config={"layers": 1}, **extra)
    path.write_text(json.dumps(run))
    return str(path)


def test_train_section(tmp_path):
    llama = [train_json(tmp_path / "a.json", "sdpa-cudnn", 100.0, [3.0, 2.0],
                        tegula_ops="norm"),
             train_json(tmp_path / "b.json", "tegula", 125.0, [3.0, 2.5],
                        tegula_ops="norm,rotary,loss")]
    gla = [train_json(tmp_path / "c.json", "fla", 80.0, [4.0, 1.5]),
           train_json(tmp_path / "d.json", "tegula", 40.0, [4.0, 1.25])]
    out = tmp_path / "out"
    rc = ob.main(["--out", str(out), "--only", "train", "--no-plot",
                  "--llama", *llama, "--gla", *gla])
    assert rc == 0
    result = json.loads((out / "ops-results.json").read_text())
    rows = {(r["work"], r["impl"]): r for r in result["rows"]}
    assert rows[("train_llama", "tegula (attention + norm,rotary,loss)")][
        "final_loss"] == 2.5
    assert rows[("train_gla", "fla")]["tokens_per_s"] == 80.0
    md = (out / "ops-results.md").read_text()
    assert "| tegula (attention + norm,rotary,loss) | 125 | 1.25 | 2.5000 |" \
        in md
    assert "| tegula | 40 | 0.50 | 1.2500 |" in md
    assert "Checks: 0 of 0 passed" in md


def test_train_missing_file_is_recorded(tmp_path):
    out = tmp_path / "out"
    rc = ob.main(["--out", str(out), "--only", "train", "--no-plot",
                  "--gla", str(tmp_path / "missing.json")])
    assert rc == 1
    result = json.loads((out / "ops-results.json").read_text())
    assert "FileNotFoundError" in result["errors"][0]["error"]
    assert "### Errors" in (out / "ops-results.md").read_text()


class Value:
    """A stand-in tensor: one number."""

    def __init__(self, v):
        self.v, self.dtype = v, "torch.bfloat16"

    def detach(self):
        return self


def test_bench_shape_checks_and_ratios(tmp_path, monkeypatch):
    """bench_shape with stand-ins: a peer that raises gives an INFO row, a
    peer that disagrees fails its check and tegula's, the ratios are the
    fastest peer's ms over each row's."""
    times = {"tegula": 2.0, "close": 1.0, "far": 4.0}

    def checked(name, out, ref, tol, log):
        err = abs(out.v - ref.v) / abs(ref.v)
        log.append({"check": name, "rel_l2": err, "tol": tol,
                    "pass": err < tol})
        return err < tol

    fake_torch = types.SimpleNamespace(
        enable_grad=contextlib.nullcontext, no_grad=contextlib.nullcontext,
        autograd=types.SimpleNamespace(
            grad=lambda out, wrt, g: [Value(2 * out.v) for _ in wrt]),
        cuda=types.SimpleNamespace(synchronize=lambda: None,
                                   is_available=lambda: False))
    monkeypatch.setattr(ob, "torch", fake_torch)
    monkeypatch.setattr(ob, "bench_run", types.SimpleNamespace(
        checked=checked,
        time_rotated=lambda fns: {n: (f(), times[n])[1]
                                  for n, f in fns.items()}))

    def broken(x):
        raise RuntimeError("no kernel for this shape")
    res = ob.Results(str(tmp_path), ["test"])
    x = Value(1.0)
    ob.bench_shape(res, "attention", {"N": 8, "causal": True},
                   {"tegula": lambda a: Value(a.v),
                    "close": lambda a: Value(a.v * 1.001),
                    "far": lambda a: Value(a.v * 1.5), "broken": broken},
                   (x,), wrt=(x,), grad_names=("q",))
    rows = {r["impl"]: r for r in res.rows}
    assert "no kernel" in rows["broken"]["info"]
    assert rows["close"]["check"] == "pass"
    assert rows["far"]["check"] == rows["tegula"]["check"] == "FAIL"
    assert rows["tegula"]["ms_fwd_bwd"] == 2.0
    assert len(res.checks) == 4  # out and dq of each working peer
    md = ob.render(res.result())
    assert "| N=8 causal | tegula | 2.000 | 2.000 | 0.50 | 0.50 | **FAIL**" \
        in md
    assert "| N=8 causal | close | 1.000 | 1.000 | 1.00 | 1.00 | pass" in md


def test_host_section_on_gpu(tmp_path):
    """The host section end to end (tiny problems, few calls): every check
    passes and every timed row has its microseconds."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    pytest.importorskip("triton")
    out = tmp_path / "out"
    rc = ob.main(["--out", str(out), "--only", "host", "--calls", "20",
                  "--no-plot"])
    result = json.loads((out / "ops-results.json").read_text())
    assert rc == 0, [c for c in result["checks"] if not c["pass"]]
    timed = [r for r in result["rows"] if "us_per_call" in r]
    assert {r["impl"] for r in timed} >= {"tegula.ops", "triton"}
    assert all(r["us_per_call"] > 0 for r in timed)


def test_host_rounds_rotate(monkeypatch):
    """host_us_rotated times every implementation once a round, the order
    rotated each round, after one warm-up each, and keeps the median of
    each one's rounds."""
    monkeypatch.setattr(ob, "torch", types.SimpleNamespace(
        cuda=types.SimpleNamespace(synchronize=lambda: None)), raising=False)
    order = []
    clock = [0.0]
    cost = {"a": 1e-6, "b": 3e-6, "c": 2e-6}

    def fn(name):
        def call():
            order.append(name)
            clock[0] += cost[name]
        return call
    monkeypatch.setattr(ob.time, "perf_counter", lambda: clock[0])
    us = ob.host_us_rotated({n: fn(n) for n in "abc"}, calls=2, rounds=3)
    assert us == pytest.approx({"a": 1.0, "b": 3.0, "c": 2.0})
    # Warm-up (2 calls each), then rounds a b c / b c a / c a b.
    timed = order[6:][::2]
    assert timed == list("abc" "bca" "cab")
