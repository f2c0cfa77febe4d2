"""tegula.compile() with no GPU: tilec found (argument, TEGULA_TILEC, PATH)
or clearly missing, the cache (what its key covers, hits that run no tilec,
across processes, concurrent compiles of one key, a damaged entry), tilec's
diagnostics and crashes as CompileError, malformed arguments, and
target="auto" through a stand-in driver.

Run by compile.test (lit), which sets TEGULA_TEST_TILEC (the built tilec),
TEGULA_TEST_FAKECUDA (a directory holding test/Runtime/Inputs/fakecuda
built as libcuda.so.1) and TEGULA_RT_LIBRARY. Every cache lives in the
test's tmp_path; tilec is often a wrapper script that counts its runs."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import tegula
from tegula import _compile

TILEC = os.environ["TEGULA_TEST_TILEC"]
FAKECUDA = os.environ["TEGULA_TEST_FAKECUDA"]

KERNELS = """\
// Two kernels: scale has one template parameter, copy three kinds.
kernel scale<BLOCK: int = 64>(x: tensor<f32>[N], y: mut tensor<f32>[N])
    grid [cdiv(N, BLOCK)] {
  let i = program_id(0) * BLOCK + arange(BLOCK);
  store(y[i], load(x[i]));
}

kernel copy<BLOCK: int = 64, DT: dtype = f32, NEG: bool = false>(
    x: tensor<DT>[N], y: mut tensor<DT>[N]) grid [cdiv(N, BLOCK)] {
  let i = program_id(0) * BLOCK + arange(BLOCK);
  let v = load(x[i]);
  store(y[i], NEG ? -v : v);
}
"""

# Line 3 lacks the ')' closing the parameter list.
BROKEN = """\
// A syntax error on line 3.
kernel broken(x: tensor<f32>[N], y: mut tensor<f32>[N]
    grid [N] {
}
"""


class Wrapper:
    """A tilec that appends a line to `runs` each time, then runs the real
    one (or, with `body`, does that instead)."""

    def __init__(self, directory: pathlib.Path, body: str = ""):
        self.path = directory / "tilec-wrapper"
        self.runs = directory / "runs"
        self.runs.touch()
        body = body or f'exec "{TILEC}" "$@"'
        self.path.write_text(f'#!/bin/sh\necho run >> "{self.runs}"\n'
                             f"{body}\n")
        self.path.chmod(0o755)

    def count(self) -> int:
        return len(self.runs.read_text().splitlines())


@pytest.fixture(autouse=True)
def environment(tmp_path, monkeypatch):
    """No cache, tilec or CUDA set-up from outside the test."""
    monkeypatch.setenv("TEGULA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TEGULA_TILEC", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)


@pytest.fixture
def wrapper(tmp_path):
    return Wrapper(tmp_path)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "kernels.tile"
    path.write_text(KERNELS)
    return path


def entries(root):
    """The cache's entries and any directory left behind."""
    base = pathlib.Path(root) / "compile"
    return sorted(p.name for p in base.iterdir() if p.name != "src")


def template(kernel):
    with open(kernel.json_path) as f:
        return json.load(f)["template"]


# --- Compiling ---------------------------------------------------------------

def test_compile_a_path(source, tmp_path):
    lib = tegula.compile(source, target="sm_90a", tilec=TILEC)
    assert isinstance(lib, tegula.Library)
    assert lib.scale.signature == "scale(x: f32[N], y: mut f32[N])"
    assert lib.copy.signature == "copy(x: f32[N], y: mut f32[N])"
    assert lib.scale.target == "sm_90a"
    entry = pathlib.Path(lib.path)
    assert entry.parent == tmp_path / "cache" / "compile"
    assert len(entry.name) == 64
    assert {"scale.json", "scale.ptx", "copy.json", "tilec.log"} <= \
        {p.name for p in entry.iterdir()}


def test_compile_source_text(tmp_path):
    lib = tegula.compile(KERNELS, defines={"DT": "bf16"}, target="sm_80",
                         tilec=TILEC)
    assert lib.copy.signature == "copy(x: bf16[N], y: mut bf16[N])"
    assert lib.copy.target == "sm_80"
    # The text is kept as a file, which is what diagnostics would name.
    kept = list((tmp_path / "cache" / "compile" / "src").iterdir())
    assert [p.read_text() for p in kept] == [KERNELS]
    assert kept[0].suffix == ".tile"


def test_path_pathlike_and_text_share_an_entry(source, wrapper):
    by_path = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    by_str = tegula.compile(str(source), target="sm_90a", tilec=wrapper.path)
    by_text = tegula.compile(KERNELS, target="sm_90a", tilec=wrapper.path)
    assert by_path.path == by_str.path == by_text.path
    assert wrapper.count() == 1


def test_one_kernel(source):
    lib = tegula.compile(source, target="sm_90a", kernel="copy", tilec=TILEC)
    assert list(lib.kernels) == ["copy"]
    both = tegula.compile(source, target="sm_90a", tilec=TILEC)
    assert sorted(both.kernels) == ["copy", "scale"]
    assert lib.path != both.path


def test_no_such_kernel(source):
    with pytest.raises(tegula.CompileError) as info:
        tegula.compile(source, target="sm_90a", kernel="nope", tilec=TILEC)
    assert "no kernel named 'nope'" in str(info.value)
    assert info.value.returncode == 1


def test_defines_reach_the_bundle(source):
    lib = tegula.compile(source, defines={"BLOCK": 128, "DT": "bf16",
                                          "NEG": True},
                         target="sm_90a", kernel="copy", tilec=TILEC)
    assert template(lib.copy) == {"BLOCK": 128, "DT": "bf16", "NEG": True}
    assert lib.copy.signature == "copy(x: bf16[N], y: mut bf16[N])"


def test_a_list_is_a_sweep(source):
    lib = tegula.compile(source, defines={"BLOCK": [128, 64]},
                         target="sm_90a", kernel="scale", tilec=TILEC)
    # The list's order is kept: its first value is the default config.
    assert lib.scale.configs == ("BLOCK=128", "BLOCK=64")
    assert template(lib.scale) == {"BLOCK": 128}


def test_tilec_warnings_are_compile_warnings(source, tmp_path, monkeypatch):
    # With no ptxas on PATH, tilec warns and writes no cubin.
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.warns(tegula.CompileWarning, match="no ptxas on PATH"):
        lib = tegula.compile(source, target="sm_90a", tilec=TILEC)
    assert not any(p.suffix == ".cubin" for p in pathlib.Path(lib.path)
                   .iterdir())


# --- The cache -----------------------------------------------------------

def test_a_hit_runs_no_tilec(source, wrapper, tmp_path):
    first = tegula.compile(source, defines={"BLOCK": 32}, target="sm_90a",
                           tilec=wrapper.path)
    second = tegula.compile(source, defines={"BLOCK": 32}, target="sm_90a",
                            tilec=wrapper.path)
    assert wrapper.count() == 1
    assert first.path == second.path
    assert second.scale.signature == first.scale.signature
    # Another process hits the same entry (its identity of tilec is
    # computed afresh).
    code = (f"import tegula; print(tegula.compile({str(source)!r}, "
            f"defines={{'BLOCK': 32}}, target='sm_90a', "
            f"tilec={str(wrapper.path)!r}).path)")
    out = subprocess.run([sys.executable, "-c", code], check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == first.path
    assert wrapper.count() == 1


def test_the_key_covers_defines_target_kernel_and_source(wrapper):
    def path(text=KERNELS, **kwargs):
        kwargs.setdefault("target", "sm_90a")
        return tegula.compile(text, tilec=wrapper.path, **kwargs).path

    base = path()
    variants = [path(defines={"BLOCK": 128}), path(defines={"BLOCK": 32}),
                path(defines={"BLOCK": [32, 64]}),
                path(defines={"BLOCK": [64, 32]}), path(target="sm_80"),
                path(kernel="scale"), path(KERNELS + "// another line\n")]
    assert len({base, *variants}) == 1 + len(variants)
    assert wrapper.count() == 1 + len(variants)
    assert len(entries(os.environ["TEGULA_CACHE_DIR"])) == 1 + len(variants)


def test_define_order_does_not_matter(source, wrapper):
    one = tegula.compile(source, defines={"BLOCK": 32, "DT": "f16"},
                         target="sm_90a", tilec=wrapper.path)
    two = tegula.compile(source, defines={"DT": "f16", "BLOCK": 32},
                         target="sm_90a", tilec=wrapper.path)
    assert one.path == two.path
    assert wrapper.count() == 1


def test_a_changed_tilec_misses(source, wrapper):
    first = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    with open(wrapper.path, "a") as f:
        f.write("# rebuilt\n")  # unreachable after exec: same output
    second = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert wrapper.count() == 2
    assert first.path != second.path
    assert second.scale.signature == first.scale.signature


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_ptxas_is_part_of_the_key(source, wrapper, tmp_path, monkeypatch):
    with_ptxas = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert (pathlib.Path(with_ptxas.path) / "scale.cubin").is_file()
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.warns(tegula.CompileWarning):
        without = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert without.path != with_ptxas.path
    assert wrapper.count() == 2


def test_cache_location(source, wrapper, tmp_path, monkeypatch):
    lib = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert lib.path.startswith(str(tmp_path / "cache" / "compile") + os.sep)
    given = tegula.compile(source, target="sm_90a", tilec=wrapper.path,
                           cache_dir=tmp_path / "mine")
    assert given.path.startswith(str(tmp_path / "mine" / "compile") + os.sep)
    monkeypatch.delenv("TEGULA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    xdg = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert xdg.path.startswith(str(tmp_path / "xdg" / "tegula" / "compile"))
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert home.path.startswith(
        str(tmp_path / "home" / ".cache" / "tegula" / "compile"))
    assert wrapper.count() == 4


def test_a_damaged_entry_is_compiled_again(source, wrapper):
    lib = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    path = lib.path
    del lib
    with open(os.path.join(path, "scale.json"), "w") as f:
        f.write("{")
    again = tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert again.path == path
    assert again.scale.signature == "scale(x: f32[N], y: mut f32[N])"
    assert wrapper.count() == 2
    assert entries(os.environ["TEGULA_CACHE_DIR"]) == [os.path.basename(path)]


def test_concurrent_compiles_of_one_key(source, tmp_path):
    # Each tilec waits until both have started: both processes miss, both
    # compile, and one loses the rename.
    runs = tmp_path / "runs"
    wrapper = Wrapper(tmp_path, textwrap.dedent(f"""\
        i=0
        while [ "$(wc -l < "{runs}")" -lt 2 ] && [ $i -lt 200 ]; do
          sleep 0.05; i=$((i + 1))
        done
        exec "{TILEC}" "$@"
        """))
    code = (f"import tegula; lib = tegula.compile({str(source)!r}, "
            f"target='sm_90a', tilec={str(wrapper.path)!r}); "
            f"print(lib.path, lib.scale.signature)")
    processes = [subprocess.Popen([sys.executable, "-c", code],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    results = [p.communicate(timeout=120) + (p.returncode,)
               for p in processes]
    assert [r[2] for r in results] == [0, 0], results
    assert results[0][0] == results[1][0]
    assert results[0][0].endswith("scale(x: f32[N], y: mut f32[N])\n")
    assert wrapper.count() == 2
    # One entry, and no scratch directory left behind.
    assert len(entries(os.environ["TEGULA_CACHE_DIR"])) == 1


# --- Errors ----------------------------------------------------------------

def test_a_syntax_error_in_text(wrapper):
    with pytest.raises(tegula.CompileError) as info:
        tegula.compile(BROKEN, target="sm_90a", tilec=wrapper.path)
    error = info.value
    kept = pathlib.Path(os.environ["TEGULA_CACHE_DIR"]) / "compile" / "src"
    (name,) = [p.name for p in kept.iterdir()]
    message = str(error)
    assert message.startswith("tilec failed (exit status 1) compiling the "
                              "source text (written to ")
    assert (f"{kept / name}:3:5: error: expected ',' between parameters, "
            f"found 'grid'") in message
    assert error.diagnostics in message
    assert error.returncode == 1
    assert (kept / name).read_text() == BROKEN
    # Nothing cached: the next call runs tilec again.
    assert entries(os.environ["TEGULA_CACHE_DIR"]) == []
    with pytest.raises(tegula.CompileError):
        tegula.compile(BROKEN, target="sm_90a", tilec=wrapper.path)
    assert wrapper.count() == 2


def test_a_syntax_error_in_a_file(tmp_path):
    path = tmp_path / "broken.tile"
    path.write_text(BROKEN)
    with pytest.raises(tegula.CompileError) as info:
        tegula.compile(path, defines={"X": 1}, target="sm_80", tilec=TILEC)
    message = str(info.value)
    assert message.startswith(f"tilec failed (exit status 1) compiling "
                              f"{path} for sm_80 -D X=1:\n")
    assert f"{path}:3:5: error:" in message
    assert issubclass(tegula.CompileError, tegula.Error)


def test_a_crash(source, tmp_path):
    wrapper = Wrapper(tmp_path, 'echo "half a diagnostic" >&2; kill -SEGV $$')
    with pytest.raises(tegula.CompileError) as info:
        tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert "tilec crashed (SIGSEGV)" in str(info.value)
    assert "half a diagnostic" in str(info.value)
    assert info.value.returncode == -11
    assert entries(os.environ["TEGULA_CACHE_DIR"]) == []


def test_no_kernel_in_the_source(wrapper):
    with pytest.raises(tegula.CompileError, match="the source defines none"):
        tegula.compile("// nothing here\n", target="sm_90a",
                       tilec=wrapper.path)
    assert entries(os.environ["TEGULA_CACHE_DIR"]) == []


def test_tilec_not_installed(source, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(tegula.CompileError) as info:
        tegula.compile(source, target="sm_90a")
    message = str(info.value)
    for words in ("tilec (the Tegula compiler) is not installed or not found",
                  "TEGULA_TILEC", "PATH", "tegula.ops", "do not need it"):
        assert words in message
    assert info.value.returncode is None
    assert not (tmp_path / "cache").exists()


def test_tilec_named_wrongly(source, tmp_path, monkeypatch):
    monkeypatch.setenv("TEGULA_TILEC", str(tmp_path / "nowhere"))
    with pytest.raises(tegula.CompileError,
                       match="TEGULA_TILEC names '.*nowhere', which is not an "
                             "executable file"):
        tegula.compile(source, target="sm_90a")
    with pytest.raises(tegula.CompileError, match="tilec= names 'no-such-"):
        tegula.compile(source, target="sm_90a", tilec="no-such-tilec")
    text = tmp_path / "not-executable"
    text.write_text("")
    with pytest.raises(tegula.CompileError, match="not an executable"):
        tegula.compile(source, target="sm_90a", tilec=text)


def test_where_tilec_is_found(source, wrapper, tmp_path, monkeypatch):
    # The argument, then TEGULA_TILEC, then PATH.
    monkeypatch.setenv("TEGULA_TILEC", str(tmp_path / "nowhere"))
    tegula.compile(source, target="sm_90a", tilec=wrapper.path)
    assert wrapper.count() == 1
    monkeypatch.setenv("TEGULA_TILEC", str(wrapper.path))
    tegula.compile(source, target="sm_80", tilec=None)
    assert wrapper.count() == 2
    monkeypatch.delenv("TEGULA_TILEC")
    monkeypatch.setenv("PATH", os.path.dirname(TILEC))
    assert _compile.find_tilec() == TILEC
    with pytest.warns(tegula.CompileWarning, match="no ptxas"):
        lib = tegula.compile(source, target="sm_90a", kernel="scale")
    assert list(lib.kernels) == ["scale"]
    assert wrapper.count() == 2


@pytest.mark.parametrize("defines, error, words", [
    ([("BLOCK", 64)], TypeError, "defines must be a dict"),
    ({3: 64}, TypeError, "name is a str, got int 3"),
    ({"2BLOCK": 64}, ValueError, "'2BLOCK' is not a template parameter"),
    ({"BLOCK=1": 64}, ValueError, "is not a template parameter name"),
    ({"BLOCK": 1.5}, TypeError, "defines['BLOCK'] is float 1.5"),
    ({"BLOCK": None}, TypeError, "defines['BLOCK'] is NoneType"),
    ({"BLOCK": [[64]]}, TypeError, "defines['BLOCK'] is list [64]"),
    ({"BLOCK": "64,128"}, ValueError, "a sweep is a list"),
    ({"DT": "bf16 "}, ValueError, "a str value is a dtype name"),
    ({"DT": ""}, ValueError, "a str value is a dtype name"),
    ({"BLOCK": []}, ValueError, "an empty list"),
    ({"BLOCK": [64, 64]}, ValueError, "lists 64 twice"),
])
def test_bad_defines(source, wrapper, defines, error, words):
    with pytest.raises(error) as info:
        tegula.compile(source, defines=defines, target="sm_90a",
                       tilec=wrapper.path)
    assert words in str(info.value)
    assert wrapper.count() == 0


def test_define_values(source):
    # A bool is not taken for an int; a tuple is a list.
    assert _compile._define_flags({"B": True, "A": (1, -2), "C": "f16"}) == \
        ["A=1,-2", "B=true", "C=f16"]
    lib = tegula.compile(source, defines={"NEG": False, "BLOCK": (32,)},
                         target="sm_90a", kernel="copy", tilec=TILEC)
    assert template(lib.copy)["NEG"] is False


@pytest.mark.parametrize("kwargs, error, words", [
    ({"target": "sm_75"}, ValueError, "target 'sm_75' is not one of 'auto'"),
    ({"target": 90}, TypeError, "target must be a str"),
    ({"kernel": "a b"}, ValueError, "'a b' is not a kernel name"),
    ({"kernel": 3}, TypeError, "kernel must be a kernel name"),
])
def test_bad_arguments(source, wrapper, kwargs, error, words):
    with pytest.raises(error, match=words):
        tegula.compile(source, tilec=wrapper.path, **kwargs)
    assert wrapper.count() == 0


def test_bad_sources(tmp_path):
    with pytest.raises(TypeError, match="takes a path or the source text"):
        tegula.compile(b"kernel", target="sm_90a", tilec=TILEC)
    with pytest.raises(FileNotFoundError, match="missing.tile"):
        tegula.compile("missing.tile", target="sm_90a", tilec=TILEC)
    with pytest.raises(FileNotFoundError):
        tegula.compile(tmp_path / "missing.tile", target="sm_90a",
                       tilec=TILEC)
    with pytest.raises(IsADirectoryError):
        tegula.compile(tmp_path, target="sm_90a", tilec=TILEC)


# --- target="auto" -----------------------------------------------------------

def auto_target(cc, source):
    """What target="auto" compiles for under the stand-in driver with
    compute capability `cc`, in a process that loads it; and that it did
    not fall back for want of a GPU."""
    code = textwrap.dedent(f"""\
        import warnings, tegula
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                lib = tegula.compile({str(source)!r}, kernel="scale",
                                     tilec={TILEC!r})
                print(lib.scale.target)
            except tegula.CompileError as e:
                print("CompileError:", e)
        assert not any("no CUDA GPU" in str(w.message) for w in caught)
        """)
    env = dict(os.environ, LD_LIBRARY_PATH=FAKECUDA, FAKE_CUDA_CC=str(cc))
    result = subprocess.run([sys.executable, "-c", code], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("cc, target", [
    (90, "sm_90a"), (80, "sm_80"), (86, "sm_80"), (89, "sm_80"),
    (100, "sm_80"),
])
def test_auto_target(source, cc, target):
    assert auto_target(cc, source) == target


def test_auto_target_too_old_a_gpu(source):
    assert auto_target(75, source) == (
        "CompileError: the current CUDA device has compute capability 7.5; "
        "Tegula kernels need 8.0 or newer (targets sm_80, sm_90a)")


def test_auto_target_without_a_gpu(source, monkeypatch):
    monkeypatch.setattr(_compile, "_device_capability", lambda: None)
    with pytest.warns(tegula.CompileWarning, match="sees no CUDA GPU, so it "
                                                   "compiles for sm_80"):
        lib = tegula.compile(source, tilec=TILEC)
    assert lib.scale.target == "sm_80"


def test_exports():
    assert {"compile", "CompileError", "CompileWarning"} <= \
        set(tegula.__all__)
    assert tegula.compile is _compile.compile
    assert tegula.CompileWarning is _compile.CompileWarning
    assert issubclass(tegula.CompileError, tegula.Error)
    assert issubclass(tegula.CompileWarning, UserWarning)
