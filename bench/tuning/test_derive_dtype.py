"""Checks bench/tuning/derive_dtype.py on made-up bundles (lit's
Python/bench.test): an f16 build gets the bf16 entries that are current
for the bf16 build, with its own PTX hashes, marked derived_from and
without the bf16 timings; stale entries are left out; with none current
it writes no table."""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import derive_dtype  # noqa: E402


def bundle(path, ptx_texts):
    """A two-config bundle KERNEL 'k' in path; returns its PTX hashes."""
    os.makedirs(path)
    configs = []
    for i, text in enumerate(ptx_texts):
        name = f"B={i}"
        with open(os.path.join(path, f"k.c{i}.ptx"), "w") as f:
            f.write(text)
        configs.append({"name": name, "ptx": f"k.c{i}.ptx"})
    with open(os.path.join(path, "k.json"), "w") as f:
        json.dump({"kernel": "k", "configs": configs}, f)
    return {f"B={i}": hashlib.sha256(t.encode()).hexdigest()
            for i, t in enumerate(ptx_texts)}


def entry(bucket, winner, hashes):
    return {"device": "GPU", "cc": "sm_90", "bucket": {"N": bucket},
            "winner": winner, "ptx_sha256": hashes,
            "timings_us": {"B=0": 1.0, "B=1": 2.0}}


def test_current_entries_only(tmp_path):
    bf16 = bundle(str(tmp_path / "bf16"), ["bf16 a", "bf16 b"])
    f16 = bundle(str(tmp_path / "f16"), ["f16 a", "f16 b"])
    stale = dict(bf16, **{"B=1": "0" * 64})
    table = tmp_path / "k.tuning.json"
    table.write_text(json.dumps({"kernel": "k", "entries": [
        entry(1024, "B=1", bf16), entry(4096, "B=0", stale),
        entry(65536, "B=0", {"B=0": bf16["B=0"]})]}))
    derive_dtype.derive(str(table), str(tmp_path / "bf16"),
                        str(tmp_path / "f16"))
    got = json.loads((tmp_path / "f16" / "k.tuning.json").read_text())
    assert [(e["bucket"], e["winner"]) for e in got["entries"]] == \
        [({"N": 1024}, "B=1")]
    only = got["entries"][0]
    assert only["ptx_sha256"] == f16
    assert "timings_us" not in only
    assert only["derived_from"].startswith("the bf16 build's entry")
    named = json.loads((tmp_path / "f16" / "k.json").read_text())
    assert named["tuning"] == "k.tuning.json"


def test_no_current_entry_writes_no_table(tmp_path, capsys):
    bf16 = bundle(str(tmp_path / "bf16"), ["bf16 a", "bf16 b"])
    bundle(str(tmp_path / "f16"), ["f16 a", "f16 b"])
    table = tmp_path / "k.tuning.json"
    table.write_text(json.dumps({"kernel": "k", "entries": [
        entry(1024, "B=1", dict(bf16, **{"B=0": "1" * 64}))]}))
    derive_dtype.derive(str(table), str(tmp_path / "bf16"),
                        str(tmp_path / "f16"))
    assert not (tmp_path / "f16" / "k.tuning.json").exists()
    assert "tuning" not in json.loads(
        (tmp_path / "f16" / "k.json").read_text())
    assert "no entry is current" in capsys.readouterr().err
