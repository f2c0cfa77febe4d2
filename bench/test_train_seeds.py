"""bench/train_seeds.py's statistics on made-up loss curves (no GPU)."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_seeds  # noqa: E402


def curve(offset=0.0, wiggle=0.0, spike_at=None):
    """200 losses falling from 6 to 4, plus a constant offset, an
    alternating wiggle and one spike of 0.3."""
    x = [6 - 2 * i / 199 + offset + wiggle * (-1) ** i for i in range(200)]
    if spike_at is not None:
        x[spike_at] += 0.3
    return x


def test_identical_runs_have_no_gap():
    s = train_seeds.gaps(curve(), curve())
    assert s["max gap"] == 0 and s["mean gap"] == 0
    assert all(s[f"max gap, {w}-step mean"] == 0 for w in train_seeds.WINDOWS)


def test_offset_and_spike():
    base = curve(wiggle=0.02)
    s = train_seeds.gaps(curve(offset=0.01, wiggle=0.02, spike_at=150), base)
    assert s["max gap"] == pytest.approx(0.31)
    # The spike is spread over each window: 0.3 / w above the offset.
    for w in train_seeds.WINDOWS:
        assert s[f"max gap, {w}-step mean"] == pytest.approx(0.01 + 0.3 / w)
    assert s["mean gap"] == pytest.approx(0.01 + 0.3 / 100)
    # Steps before 100 are not counted.
    early = train_seeds.gaps(curve(spike_at=50), curve())
    assert early["max gap"] == pytest.approx(0.0, abs=1e-12)


def test_noise_correlation():
    assert train_seeds.gaps(curve(wiggle=0.02), curve(wiggle=0.02))[
        "noise correlation"] == pytest.approx(1.0)
    flipped = [2 * a - b for a, b in zip(curve(), curve(wiggle=0.02))]
    # Not exactly -1: the last 4 steps' windows are cut short, and there the
    # shared trend leaves the same fluctuation in both.
    assert train_seeds.gaps(flipped, curve(wiggle=0.02))[
        "noise correlation"] < -0.9


def test_table_from_files(tmp_path, capsys):
    for name, losses in (("fla", curve()), ("tegula", curve(offset=0.02)),
                         ("fla-again", curve())):
        with open(tmp_path / f"{name}-s7.json", "w") as f:
            json.dump({"losses": losses, "tokens_per_s": 1000.0}, f)
    assert train_seeds.main([str(tmp_path)]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| 7 |")]
    assert rows[0].startswith("| 7 | tegula | 0.0200 |")
    assert "+0.0200" in rows[0]
    assert rows[1].startswith("| 7 | fla-again | 0.0000 |")
    assert rows[2].startswith("| 7 | fla (itself) |")


def test_no_runs(tmp_path):
    assert train_seeds.main([str(tmp_path)]) == 1


def test_sign_flip_p():
    # All six differences positive: only the observed pattern is as large.
    assert train_seeds.sign_flip_p([0.01] * 6) == pytest.approx(1 / 64)
    # All negative: every pattern is at least as large.
    assert train_seeds.sign_flip_p([-0.01] * 6) == 1.0
    # One difference: half the patterns.
    assert train_seeds.sign_flip_p([0.02]) == 0.5
    # +3, -1, +1 sums to 3; the patterns with a sum of at least 3 are
    # (+3, -1, +1), (+3, +1, +1) and (+3, +1, -1): 3 of 8.
    assert train_seeds.sign_flip_p([3.0, -1.0, 1.0]) == pytest.approx(3 / 8)


def write_seed(path, seed, fla, tegula, recurrent):
    for name, losses in (("fla", fla), ("tegula", tegula),
                         ("fla-recurrent", recurrent)):
        with open(path / f"{name}-s{seed}.json", "w") as f:
            json.dump({"losses": losses, "tokens_per_s": 1.0}, f)


def test_verdict_holds_and_fails(tmp_path, capsys):
    # Tegula as close as the recurrent form, larger on half the seeds and
    # smaller on the other half: both tests hold.
    for seed in range(6):
        sign = 1 if seed % 2 else -1
        write_seed(tmp_path, seed, curve(),
                   curve(offset=0.01 * sign, spike_at=150),
                   curve(offset=-0.01 * sign, spike_at=160))
    held, lines = train_seeds.verdict(train_seeds.load(str(tmp_path)))
    assert held is True
    assert "bias: every |mean gap| <= 0.02: holds" in lines[-2]
    assert lines[-1].endswith("(needs >= 0.05): holds")
    # Tegula biased by 0.03 on one seed: the bias test fails.
    write_seed(tmp_path, 2, curve(), curve(offset=0.03), curve())
    held, lines = train_seeds.verdict(train_seeds.load(str(tmp_path)))
    assert held is False
    assert "bias: every |mean gap| <= 0.02: FAILS" in lines[-2]
    # Tegula's spikes larger than the recurrent form's on every seed: the
    # noise test fails with p = 1/64.
    for seed in range(6):
        spiky = curve(spike_at=150)
        spiky[151] += 0.5
        write_seed(tmp_path, seed, curve(), spiky, curve(spike_at=160))
    held, lines = train_seeds.verdict(train_seeds.load(str(tmp_path)))
    assert held is False
    assert lines[-1].endswith("p = 0.016 (needs >= 0.05): FAILS")
    assert train_seeds.main([str(tmp_path)]) == 0
    assert "the GLA training comparison FAILS" in capsys.readouterr().out


def test_verdict_needs_the_three_runs(tmp_path):
    with open(tmp_path / "fla-s1.json", "w") as f:
        json.dump({"losses": curve(), "tokens_per_s": 1.0}, f)
    assert train_seeds.verdict(train_seeds.load(str(tmp_path))) == (None, [])
