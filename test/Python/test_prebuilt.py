"""tegula.ops' prebuilt kernels without a GPU (ops.test): the catalog in
tegula/_prebuilt.py against what scripts/build-ops.sh wrote to
$TEGULA_OPS_BUNDLES."""

import glob
import hashlib
import itertools
import json
import os
import subprocess
import sys

import pytest

import tegula
from tegula import _prebuilt

ROOT = os.environ["TEGULA_OPS_BUNDLES"]
# What each kernel's first tensor parameter is, by entry.
FIRST = {"attention_fwd_lse": "q", "attention_bwd_dkdv": "q",
         "attention_bwd_dkdv_grouped": "q", "attention_bwd_dq": "q",
         "attention_bwd_preprocess": "o"}


def every_bundle():
    return itertools.product(_prebuilt.SWEEPS, (64, 128), (False, True),
                             (False, True))


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_every_op_kernel_is_built(target):
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for entry, d, causal, f16 in every_bundle():
        name = _prebuilt.bundle_name(entry, d, causal, f16)
        kernel = _prebuilt.kernel(name, entry.replace("_grouped", ""),
                                  capability)
        dtype = "f16" if f16 else "bf16"
        # Queries (q; o for the preprocess) have M rows, keys N; both are
        # views (tegula.ops passes its callers' strides), lse is not.
        want = f"{FIRST[entry]}: {dtype}[Z, H, M, {d}] strided"
        assert want in kernel.signature, (name, kernel.signature)
        if entry.startswith("attention_bwd_d") or entry.endswith("lse"):
            assert f"k: {dtype}[Z, HKV, N, {d}] strided" in \
                kernel.signature, name
            assert "lse: " in kernel.signature and \
                "f32[Z, H, M] strided" not in kernel.signature, name
        grouped = entry.endswith("_grouped")
        with open(os.path.join(ROOT, target, name,
                               f"{entry.replace('_grouped', '')}.json")) as f:
            template = json.load(f)["template"]
        assert template.get("GROUPED", False) is grouped, name
        assert os.path.isdir(os.path.join(ROOT, target, name))


def test_preprocess_has_no_causal_build():
    assert (_prebuilt.bundle_name("attention_bwd_preprocess", 64, True, False)
            == _prebuilt.bundle_name("attention_bwd_preprocess", 64, False,
                                     False) == "attn-bwd-preprocess-d64")


def every_rotary():
    for (d, r), interleaved, f16 in itertools.product(
            _prebuilt.ROTARY_DIMS, (False, True), (False, True)):
        yield d, r, interleaved, f16


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_every_rotary_is_built(target):
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for d, r, interleaved, f16 in every_rotary():
        name = _prebuilt.rotary_bundle(d, r, interleaved, f16)
        dtype = "f16" if f16 else "bf16"
        out = _prebuilt.kernel(name, "rotary", capability)
        assert out.signature.startswith(
            f"rotary(x: {dtype}[B, T, H, {d}], cos: f32[T, {r // 2}], "
            f"sin: f32[T, {r // 2}], out: mut {dtype}[B, T, H, {d}]"), name
        inplace = _prebuilt.kernel(name, "rotary_inplace", capability)
        assert inplace.signature.startswith(
            f"rotary_inplace(x: mut {dtype}[B, T, H, {d}]"), name
        with open(os.path.join(ROOT, target, name, "rotary.json")) as f:
            template = json.load(f)["template"]
        assert template["INTERLEAVED"] is interleaved, name


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_norm_and_loss_kernels_are_built(target):
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for dtype in ("bf16", "f16", "f32"):
        norm = _prebuilt.norm_bundle(dtype)
        assert _prebuilt.kernel(norm, "rmsnorm_fwd", capability).signature \
            .startswith(f"rmsnorm_fwd(x: {dtype}[R, C], w: {dtype}[C], "
                        f"y: mut {dtype}[R, C], rstd: mut f32[R]")
        assert "dw_part: mut f32[G, C]" in _prebuilt.kernel(
            norm, "rmsnorm_bwd_dx", capability).signature
        assert _prebuilt.kernel(norm, "rmsnorm_bwd_dw", capability) \
            .signature.startswith("rmsnorm_bwd_dw(dw_part: f32[G, C], "
                                  f"dw: mut {dtype}[C]")
    for f16 in (False, True):
        dtype = "f16" if f16 else "bf16"
        loss = _prebuilt.loss_bundle(f16)
        assert _prebuilt.kernel(loss, "cross_entropy", capability) \
            .signature.startswith(f"cross_entropy(logits: {dtype}[R, V], "
                                  "target: i64[R]")
        assert _prebuilt.kernel(loss, "cross_entropy_bwd", capability) \
            .signature.startswith(f"cross_entropy_bwd(logits: {dtype}[R, V], "
                                  "target: i64[R], lse: f32[R], dloss: f32[R], "
                                  f"dlogits: mut {dtype}[R, V]")


# GLA's kernels by bundle, with the optional-tensor flags each is built
# with (tegula/ops/_gla.py picks them by the call's arguments).
GLA_FLAGS = {"chunk_gla_fwd": ("", "-h0"), "recurrent_gla_fwd": ("", "-h0"),
             "chunk_gla_states": ("", "-h0"), "chunk_gla_cumsum": ("",),
             "chunk_gla_intra": ("",),
             "chunk_gla_output": ("",),
             "chunk_gla_bwd_dh": ("", "-h0", "-dht", "-h0-dht"),
             "chunk_gla_bwd_da": ("",), "chunk_gla_bwd_dqk_intra": ("",),
             "chunk_gla_bwd_dqkg": ("",), "chunk_gla_bwd_dv": ("",)}


def every_gla():
    for kernel, flags in GLA_FLAGS.items():
        for (k, v), flag, f16 in itertools.product(_prebuilt.GLA_DIMS, flags,
                                                   (False, True)):
            yield kernel, k, v, flag, f16


# The gate-free linear attention kernels likewise (tegula/ops/
# _linear_attention.py).
LINEAR_FLAGS = {"chunk_linear_states": ("", "-h0"),
                "chunk_linear_output": ("",),
                "chunk_linear_bwd_dh": ("", "-h0", "-dht", "-h0-dht"),
                "chunk_linear_bwd_dqk": ("",), "chunk_linear_bwd_dv": ("",),
                "recurrent_linear_fwd": ("", "-h0")}


def every_linear():
    for kernel, flags in LINEAR_FLAGS.items():
        for (k, v), flag, f16 in itertools.product(_prebuilt.GLA_DIMS, flags,
                                                   (False, True)):
            yield kernel, k, v, flag, f16


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_every_linear_kernel_is_built(target):
    """Each linear attention kernel at every shipped (K, V), flag and
    dtype, with no gate tensor and no spill."""
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for kernel, k, v, flag, f16 in every_linear():
        name = _prebuilt.linear_bundle(kernel, k, v, flag, f16)
        built = _prebuilt.kernel(name, kernel, capability)
        dtype = "f16" if f16 else "bf16"
        assert f": {dtype}[B, T, H, {k}]" in built.signature, name
        assert "g:" not in built.signature, name
        with open(os.path.join(ROOT, target, name, kernel + ".json")) as f:
            meta = json.load(f)
        template = meta["template"]
        assert (template["K"], template["V"]) == (k, v), name
        # The chunked kernels' chunk (the recurrent form has none).
        assert template.get("CHUNK", _prebuilt.GLA_FWD_CHUNK) == \
            _prebuilt.GLA_FWD_CHUNK, name
        assert meta["spill_bytes"] == 0, name


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_every_gla_kernel_is_built(target):
    """Each GLA kernel at every shipped (K, V), flag and dtype: K and V
    fixed, CHUNK the backward's, the optional tensors as flagged."""
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for kernel, k, v, flag, f16 in every_gla():
        name = _prebuilt.gla_bundle(kernel, k, v, flag, f16)
        entry = kernel
        built = _prebuilt.kernel(name, entry, capability)
        dtype = "f16" if f16 else "bf16"
        # chunk_gla_cumsum reads only the f32 gates, chunk_gla_bwd_da only
        # v and do.
        if entry == "chunk_gla_cumsum":
            first = f"g: f32[B, T, H, {k}]"
        elif entry == "chunk_gla_bwd_da":
            first = f"v: {dtype}[B, T, H, {v}]"
        else:
            first = f": {dtype}[B, T, H, {k}]"
        assert first in built.signature, name
        with open(os.path.join(ROOT, target, name, entry + ".json")) as f:
            meta = json.load(f)
        template = meta["template"]
        assert (template.get("K", k), template.get("V", v)) == (k, v), name
        two_launch = kernel in ("chunk_gla_states", "chunk_gla_cumsum",
                                "chunk_gla_intra", "chunk_gla_output")
        if "CHUNK" in template and kernel != "chunk_gla_fwd":
            assert template["CHUNK"] == (_prebuilt.GLA_FWD_CHUNK if two_launch
                                         else _prebuilt.GLA_BWD_CHUNK), name
        # The states and their gradients in the inputs' dtype, as every
        # kernel that reads or writes them is built.
        if kernel in ("chunk_gla_states", "chunk_gla_output",
                      "chunk_gla_bwd_dh", "chunk_gla_bwd_dqkg",
                      "chunk_gla_bwd_dv"):
            assert template["HT"] == dtype, name
        # The states and dh read chunk_gla_cumsum's sums, not the gates.
        if kernel in ("chunk_gla_states", "chunk_gla_bwd_dh"):
            assert template["GC"] is True, name
        if "USE_H0" in template:
            assert template["USE_H0"] == ("-h0" in flag), name
        if "USE_DHT" in template:
            assert template["USE_DHT"] == ("-dht" in flag), name
        assert meta["spill_bytes"] == 0, name


DECODE = ("attention_paged", "attention_paged_flat", "attention_paged_split",
          "attention_combine")


def every_decode():
    """attention_paged is built for the pages the op reads by page (64 and
    more); pages of 16 go through attention_paged_flat."""
    return ((k, d, p, f16) for k, d, p, f16 in itertools.product(
        DECODE, _prebuilt.DECODE_HEAD_DIMS, _prebuilt.PAGES, (False, True))
        if k != "attention_paged" or p >= _prebuilt.PAGED_MIN_PAGE)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_every_decode_kernel_is_built(target):
    """attention_decode's kernels at every shipped D, PAGE and dtype, with
    those template values, spill-free."""
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for kernel, d, page, f16 in every_decode():
        name = _prebuilt.decode_bundle(kernel, d, page, f16)
        built = _prebuilt.kernel(name, kernel, capability)
        dtype = "f16" if f16 else "bf16"
        assert (f"o: mut {dtype}[Z, H, M, {d}]" if kernel == "attention_combine"
                else f"q: {dtype}[B, H, {d}]") in built.signature, name
        with open(os.path.join(ROOT, target, name, kernel + ".json")) as f:
            meta = json.load(f)
        assert meta["template"]["D"] == d, name
        if kernel != "attention_combine":
            assert meta["template"]["PAGE"] == page, name
        assert meta["spill_bytes"] == 0, name


# The varlen kernels' parameters in order, as the op passes them and
# test_varlen_op.py's emulated kernels take them.
VARLEN_PARAMS = {
    "attention_varlen_fwd": "q k v o lse cu_seqlens_q cu_seqlens_k "
                            "max_seqlen_q scale",
    "attention_varlen_bwd_preprocess": "o do delta",
    "attention_varlen_bwd_dkdv": "q k v do lse delta dk dv cu_seqlens_q "
                                 "cu_seqlens_k max_seqlen_k scale",
    "attention_varlen_bwd_dq": "q k v do lse delta dq cu_seqlens_q "
                               "cu_seqlens_k max_seqlen_q scale",
}


def every_varlen():
    for kernel, d, causal, f16 in itertools.product(
            _prebuilt.VARLEN_KERNELS, _prebuilt.VARLEN_HEAD_DIMS,
            (False, True), (False, True)):
        if not (causal and kernel == "attention_varlen_bwd_preprocess"):
            yield kernel, d, causal, f16


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_every_varlen_kernel_is_built(target):
    """attention_varlen's kernels at every shipped D, mask and dtype (dK/dV
    also GROUPED), with those template values, spill-free."""
    capability = (9, 0) if target == "sm_90a" else (8, 0)
    for kernel, d, causal, f16 in every_varlen():
        name = _prebuilt.varlen_bundle(kernel, d, causal, f16)
        entry = kernel.replace("_grouped", "")
        built = _prebuilt.kernel(name, entry, capability)
        dtype = "f16" if f16 else "bf16"
        preprocess = entry == "attention_varlen_bwd_preprocess"
        assert [p.name for p in built.params] == \
            VARLEN_PARAMS[entry].split(), name
        assert (f"{'o' if preprocess else 'q'}: {dtype}[TQ, H, {d}]"
                in built.signature), name
        if not preprocess:
            assert f"k: {dtype}[TK, HKV, {d}]" in built.signature, name
            assert "cu_seqlens_k: i32[S]" in built.signature, name
        with open(os.path.join(ROOT, target, name, entry + ".json")) as f:
            meta = json.load(f)
        assert meta["template"]["D"] == d, name
        if not preprocess:
            assert meta["template"]["CAUSAL"] is causal, name
        if entry == "attention_varlen_bwd_dkdv":
            assert meta["template"].get("GROUPED", False) is kernel.endswith(
                "_grouped"), name
        assert meta["spill_bytes"] == 0, name


def test_varlen_preprocess_has_no_causal_build():
    assert (_prebuilt.varlen_bundle("attention_varlen_bwd_preprocess", 128,
                                    True, True)
            == "attention-varlen-bwd-preprocess-d128-f16")


def test_no_stray_bundles():
    names = {_prebuilt.bundle_name(*b) for b in every_bundle()}
    names |= {_prebuilt.decode_bundle(*c) for c in every_decode()}
    names |= {_prebuilt.varlen_bundle(*c) for c in every_varlen()}
    names |= {_prebuilt.gla_bundle(*g) for g in every_gla()}
    names |= {_prebuilt.linear_bundle(*g) for g in every_linear()}
    names |= {_prebuilt.rotary_bundle(*r) for r in every_rotary()}
    names |= {_prebuilt.loss_bundle(f16) for f16 in (False, True)}
    names |= {_prebuilt.norm_bundle(d) for d in ("bf16", "f16", "f32")}
    for target in ("sm_80", "sm_90a"):
        assert set(os.listdir(os.path.join(ROOT, target))) == names


def bundle(path):
    (found,) = [f for f in glob.glob(os.path.join(path, "*.json"))
                if not f.endswith(".tuning.json")]
    with open(found) as f:
        return json.load(f)


# The builds whose code for views that are not unit-stride (the general
# code and div16: 2-byte pushes through registers) spills on sm_80; the
# unit-stride variants, which every layout tegula.ops documents runs,
# never do.
SM80_STRIDED_SPILLS = {"attn-fwd-lse-d128-causal",
                       "attn-fwd-lse-d128-causal-f16"}


def test_sm80_ships_config_zero_only():
    """sm_80 has no tuning table, so an untuned launch would run config 0:
    that config alone is built there, and it does not spill (but in the
    code for other views of SM80_STRIDED_SPILLS)."""
    for name in os.listdir(os.path.join(ROOT, "sm_80")):
        if not name.startswith("attn-"):
            continue
        sm80 = bundle(os.path.join(ROOT, "sm_80", name))
        assert "configs" not in sm80, name
        for code in [sm80] + sm80.get("variants", []):
            unit = code.get("name", "").endswith("unit")
            spills = code["spill_bytes"]
            assert spills == 0 or (not unit and
                                   name in SM80_STRIDED_SPILLS), (name, code)
        assert any(v["name"].endswith("unit")
                   for v in sm80.get("variants", [])), name
        sm90 = bundle(os.path.join(ROOT, "sm_90a", name))
        if name.startswith("attn-bwd-preprocess"):
            assert sm90["template"] == sm80["template"], name
            continue
        assert len(sm90["configs"]) > 1, name
        first = dict(sm90["template"], **sm90["configs"][0]["defines"])
        assert sm80["template"] == first, name


def test_tuning_tables_are_current():
    """Each sm_90a sweep carries the committed H100 table (bf16), or its
    winners (f16: bench/tuning/derive_dtype.py), and every PTX hash in it
    matches the PTX built here: the tuned winner is what the runtime
    launches, not a stale table's guess."""
    tables = glob.glob(os.path.join(ROOT, "sm_90a", "*", "*.tuning.json"))
    sweeps = [n for n in os.listdir(os.path.join(ROOT, "sm_90a"))
              if n.startswith("attn-") and "preprocess" not in n]
    assert len(tables) == len(sweeps) == 32
    for table_path in tables:
        path = os.path.dirname(table_path)
        built = bundle(path)["configs"]
        with open(table_path) as f:
            table = json.load(f)
        assert table["entries"], table_path
        for entry in table["entries"]:
            for config in built:
                with open(os.path.join(path, config["ptx"]), "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                assert entry["ptx_sha256"][config["name"]] == digest, (
                    table_path, config["name"])


def test_f16_sweeps_take_the_bf16_winners():
    """An f16 sweep's table holds the bf16 table's entries (device, bucket,
    winner), says they were derived, and keeps no bf16 timings."""
    for table_path in glob.glob(os.path.join(ROOT, "sm_90a", "*-f16",
                                             "*.tuning.json")):
        with open(table_path) as f:
            f16 = json.load(f)["entries"]
        bf16_path = table_path.replace("-f16" + os.sep, os.sep)
        with open(bf16_path) as f:
            bf16 = json.load(f)["entries"]
        assert [(e["device"], e["bucket"], e["winner"]) for e in f16] == \
            [(e["device"], e["bucket"], e["winner"]) for e in bf16]
        for entry in f16:
            assert entry["derived_from"].startswith("the bf16 build's")
            assert "timings_us" not in entry


@pytest.mark.parametrize("capability,target", [
    ((9, 0), "sm_90a"), ((8, 0), "sm_80"), ((8, 6), "sm_80"),
    ((8, 9), "sm_80"), ((10, 0), "sm_80"), ((12, 0), "sm_80")])
def test_target_for(capability, target):
    assert _prebuilt.target_for(capability) == target


def test_missing_bundles_say_how_to_build_them(tmp_path, monkeypatch):
    monkeypatch.setenv("TEGULA_OPS_BUNDLES", str(tmp_path))
    monkeypatch.setattr(_prebuilt, "_libraries", {})
    with pytest.raises(tegula.BundleError) as error:
        _prebuilt.kernel("attn-fwd-lse-d64", "attention_fwd_lse", (9, 0))
    message = str(error.value)
    assert "sm_90a/attn-fwd-lse-d64" in message
    assert "scripts/build-ops.sh" in message
    assert str(tmp_path) in message


def test_ops_without_torch_say_so():
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n import tegula.ops\nexcept ImportError as e:\n print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, env=os.environ).stdout
    assert "tegula.ops needs PyTorch" in out
