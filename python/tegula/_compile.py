"""tegula.compile(): tilec for kernels of one's own, with an on-disk cache.

    lib = tegula.compile("my_kernel.tile", defines={"BLOCK": 128})
    lib = tegula.compile(SOURCE_TEXT, defines={"D": 64, "DT": "bf16"},
                         target="sm_90a", kernel="attn")

The cache is keyed by everything that decides tilec's output: the source
bytes, the defines, the target, the kernel picked, and the identity of tilec
(and of the ptxas it would run), so that a repeated call costs a hash and a
load, never a compiler process. An entry is compiled in a temporary
directory beside it and renamed into place: a reader sees a whole entry or
none, and processes racing on one key both succeed. docs/python.md,
"Compiling your own kernels", has the details.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from ._checks import is_bool, is_int
from ._errors import BundleError, CompileError
from ._kernel import Library, load

TARGETS = ("sm_80", "sm_90a")
# Bumped when the key or an entry's layout changes: old entries then miss.
_FORMAT = 1
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# A str define value: a dtype name (bf16), or a number written out.
_TOKEN = re.compile(r"[-+]?[A-Za-z0-9_.]+\Z")
# Temporary directories older than this are a killed compile's leftovers.
_STALE_SECONDS = 24 * 3600
# CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR.
_CC_MAJOR, _CC_MINOR = 75, 76

_NOT_FOUND = (
    "tilec (the Tegula compiler) is not installed or not found: "
    "tegula.compile() runs it to compile kernels of your own. Pass "
    "tilec='/path/to/tilec', set TEGULA_TILEC to its path, or put it on "
    "PATH (a source build makes build/bin/tilec). Prebuilt kernels "
    "(tegula.ops) and bundles loaded with tegula.load() do not need it.")


class CompileWarning(UserWarning):
    """What tilec warned about while compiling (spills, no ptxas), and
    target="auto" finding no GPU. Filter it with the warnings module."""


class _Source(NamedTuple):
    data: bytes  # what the key hashes
    path: Optional[str]  # the file tilec reads; None for source text


# --- Arguments -------------------------------------------------------------

def _read_source(source: Any) -> _Source:
    """A path (os.PathLike, or a str naming an existing file) or the text.
    A str that ends in .tile but names no file is taken for a mistyped
    path, not for one-line source text."""
    if isinstance(source, os.PathLike):
        return _read_path(os.fspath(source))
    if not isinstance(source, str):
        raise TypeError(f"tegula.compile() takes a path or the source text "
                        f"(str), got {type(source).__name__}")
    if "\n" not in source:
        if os.path.exists(source):
            return _read_path(source)
        if source.strip().endswith(".tile"):
            raise FileNotFoundError(
                2, "no such kernel source (a str with no newline that ends "
                "in .tile is taken for a path)", source)
    return _Source(source.encode("utf-8"), None)


def _read_path(path: Any) -> _Source:
    path = os.fsdecode(path)
    with open(path, "rb") as f:
        data = f.read()
    # tilec would take a file named "-x.tile" for an option.
    return _Source(data, os.path.join(".", path) if path.startswith("-")
                   else path)


def _define_flags(defines: Optional[Mapping[str, Any]]) -> List[str]:
    """tilec's -D values, `NAME=V` or `NAME=V1,V2` (a sweep), sorted by
    name so that the key and the bundle do not depend on the dict's order;
    a list keeps its order (its first value is the default config)."""
    if defines is None:
        return []
    if not isinstance(defines, Mapping):
        raise TypeError(f"defines must be a dict of template parameter names "
                        f"to values, got {type(defines).__name__}")
    for name in defines:
        if not isinstance(name, str):
            raise TypeError(f"defines: a template parameter name is a str, "
                            f"got {type(name).__name__} {name!r}")
        if not _NAME.match(name):
            raise ValueError(f"defines: {name!r} is not a template parameter "
                             f"name (an identifier)")
    return [f"{name}={_define_value(name, defines[name])}"
            for name in sorted(defines)]


def _define_value(name: str, value: Any) -> str:
    if not isinstance(value, (list, tuple)):
        return _scalar_value(name, value)
    if not value:
        raise ValueError(f"defines['{name}'] is an empty list: a sweep "
                         f"needs at least one value")
    texts: List[str] = []
    for item in value:
        text = _scalar_value(name, item)
        if text in texts:
            raise ValueError(f"defines['{name}'] lists {text} twice")
        texts.append(text)
    return ",".join(texts)


def _scalar_value(name: str, value: Any) -> str:
    if is_bool(value):
        return "true" if value else "false"
    if is_int(value):
        return str(int(value))
    if isinstance(value, str):
        if not _TOKEN.match(value):
            raise ValueError(
                f"defines['{name}'] = {value!r}: a str value is a dtype name "
                f"such as 'bf16' (letters, digits and '_'); a sweep is a list")
        return value
    raise TypeError(
        f"defines['{name}'] is {type(value).__name__} {value!r}; a template "
        f"parameter takes an int, a bool, a dtype name (str such as 'bf16') "
        f"or a list of these (a sweep)")


def _check_kernel(kernel: Optional[str]) -> None:
    if kernel is None:
        return
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a kernel name (str), got "
                        f"{type(kernel).__name__}")
    if not _NAME.match(kernel):
        raise ValueError(f"kernel {kernel!r} is not a kernel name")


# --- Target ----------------------------------------------------------------

def resolve_target(target: str) -> str:
    """`target`, or for "auto" the one for the current CUDA device: sm_90a
    on compute capability 9.x, sm_80 on 8.x and on 10.0 and newer (whose
    driver JIT-compiles sm_80 PTX; sm_90a code runs on 9.0 only). With no
    GPU visible, sm_80, which every supported GPU runs, with a warning."""
    if not isinstance(target, str):
        raise TypeError(f"target must be a str, got {type(target).__name__}")
    if target in TARGETS:
        return target
    if target != "auto":
        raise ValueError(f"target {target!r} is not one of 'auto', "
                         f"{', '.join(repr(t) for t in TARGETS)}")
    capability = _device_capability()
    if capability is None:
        warnings.warn("tegula.compile(target='auto') sees no CUDA GPU, so it "
                      "compiles for sm_80, which runs on every GPU of compute "
                      "capability 8.0 or newer; pass target='sm_90a' for "
                      "H100-class GPUs", CompileWarning, stacklevel=3)
        return "sm_80"
    major, minor = capability
    if major < 8:
        raise CompileError(
            f"the current CUDA device has compute capability {major}.{minor}; "
            f"Tegula kernels need 8.0 or newer (targets sm_80, sm_90a)")
    return "sm_90a" if major == 9 else "sm_80"


def _device_capability() -> Optional[Tuple[int, int]]:
    """The current device's compute capability: PyTorch's current device
    when torch is already imported (never imported here), else the current
    context's device or device 0 through the driver. None without a GPU."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                major, minor = torch.cuda.get_device_capability()
                return int(major), int(minor)
        except Exception:  # a broken CUDA set-up: ask the driver
            pass
    return _driver_capability()


def _driver_capability() -> Optional[Tuple[int, int]]:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        if cuda.cuInit(0):
            return None
        device, context = ctypes.c_int(0), ctypes.c_void_p()
        if cuda.cuCtxGetCurrent(ctypes.byref(context)) or not context.value:
            count = ctypes.c_int(0)
            if cuda.cuDeviceGetCount(ctypes.byref(count)) or not count.value:
                return None
            if cuda.cuDeviceGet(ctypes.byref(device), 0):
                return None
        elif cuda.cuCtxGetDevice(ctypes.byref(device)):
            return None
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        if (cuda.cuDeviceGetAttribute(ctypes.byref(major), _CC_MAJOR, device)
                or cuda.cuDeviceGetAttribute(ctypes.byref(minor), _CC_MINOR,
                                             device)):
            return None
        return major.value, minor.value
    except (OSError, AttributeError):  # no driver, or one without a symbol
        return None


# --- tilec and its identity ------------------------------------------------

def find_tilec(tilec: Any = None) -> str:
    """The tilec to run: `tilec`, else $TEGULA_TILEC, else tilec on PATH.
    A name without a directory is looked up on PATH."""
    if tilec is not None:
        return _executable(os.fsdecode(os.fspath(tilec)), "tilec=")
    env = os.environ.get("TEGULA_TILEC")
    if env:
        return _executable(env, "TEGULA_TILEC")
    found = shutil.which("tilec")
    if found is None:
        raise CompileError(_NOT_FOUND)
    return os.path.abspath(found)


def _executable(given: str, origin: str) -> str:
    path = given if os.sep in given else shutil.which(given)
    if path is None or not os.path.isfile(path) or \
            not os.access(path, os.X_OK):
        raise CompileError(f"{origin} names {given!r}, which is not an "
                           f"executable file. {_NOT_FOUND}")
    return os.path.abspath(path)


_identity_lock = threading.Lock()
_identities: Dict[Tuple[Any, ...], str] = {}


def _tilec_identity(path: str) -> str:
    """The sha256 of the tilec file (tilec has no --version). Hashed once
    per process and file state: a rebuilt tilec changes size or mtime."""
    st = os.stat(path)
    stamp = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size,
             st.st_mtime_ns)
    with _identity_lock:
        known = _identities.get(stamp)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    with _identity_lock:
        _identities[stamp] = digest.hexdigest()
    return digest.hexdigest()


def _ptxas_identity() -> Optional[List[Any]]:
    """The ptxas tilec will find on PATH (it assembles the cubin), by path,
    size and mtime; None without one (the bundle then has no cubin)."""
    found = shutil.which("ptxas")
    if found is None:
        return None
    st = os.stat(found)
    return [os.path.realpath(found), st.st_size, st.st_mtime_ns]


def cache_key(source: bytes, flags: List[str], target: str,
              kernel: Optional[str], tilec: str) -> str:
    """The sha256 naming a cache entry."""
    fields = {"format": _FORMAT,
              "source": hashlib.sha256(source).hexdigest(),
              "defines": flags, "target": target, "kernel": kernel,
              "tilec": _tilec_identity(tilec), "ptxas": _ptxas_identity()}
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- The cache -------------------------------------------------------------

def cache_root(cache_dir: Any = None) -> str:
    """Where compiled entries live: `cache_dir`, else $TEGULA_CACHE_DIR,
    else $XDG_CACHE_HOME/tegula or ~/.cache/tegula; then `compile/`."""
    if cache_dir is not None:
        base = os.fsdecode(os.fspath(cache_dir))
    elif os.environ.get("TEGULA_CACHE_DIR"):
        base = os.environ["TEGULA_CACHE_DIR"]
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        home = xdg if os.path.isabs(xdg) else \
            os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "tegula")
    return os.path.join(os.path.abspath(base), "compile")


def _scratch(root: str, what: str) -> str:
    """A new directory in `root` (which readers skip: entries are named by
    64 hex digits), made with mkdir so that it gets the umask's mode."""
    path = os.path.join(root, f".tmp-{what}-{os.getpid()}-"
                              f"{secrets.token_hex(4)}")
    os.mkdir(path)
    return path


def _sweep_stale(root: str) -> None:
    """Removes the temporary directories of compiles killed long ago."""
    now = time.time()
    for name in os.listdir(root):
        path = os.path.join(root, name)
        try:
            if name.startswith(".tmp-") and \
                    now - os.stat(path).st_mtime > _STALE_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def _discard(root: str, entry: str) -> None:
    """Moves a damaged entry out of the way (another process may still
    read it) and deletes it."""
    aside = os.path.join(root, f".tmp-damaged-{os.getpid()}-"
                               f"{secrets.token_hex(4)}")
    try:
        os.rename(entry, aside)
    except OSError:  # another process discarded or replaced it first
        return
    shutil.rmtree(aside, ignore_errors=True)


def _write_source(root: str, data: bytes) -> str:
    """Source text as a file for tilec, at `src/<sha256[:16]>.tile`: kept,
    so that the paths in diagnostics still open after the call."""
    directory = os.path.join(root, "src")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory,
                        hashlib.sha256(data).hexdigest()[:16] + ".tile")
    if os.path.isfile(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return path
    temporary = f"{path}.{os.getpid()}-{secrets.token_hex(4)}"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, path)
    return path


def _publish(scratch: str, entry: str) -> None:
    """Renames a finished compile into place; losing the race to another
    process that compiled the same key is fine: its entry is the same."""
    try:
        os.rename(scratch, entry)
    except OSError as e:
        if not os.path.isdir(entry):
            raise CompileError(f"cannot store the compiled bundle at "
                               f"{entry}: {e}") from e


# --- Running tilec ---------------------------------------------------------

def _describe(source: _Source, path: str, target: str,
              flags: List[str], kernel: Optional[str]) -> str:
    what = path
    if source.path is None:
        what = (f"the source text (written to {path}, which the diagnostics "
                f"name)")
    options = "".join(f" -D {flag}" for flag in flags)
    options += f" -k {kernel}" if kernel else ""
    return f"{what} for {target}{options}"


def _run(command: List[str], description: str) -> Tuple[str, str]:
    """Runs tilec; its stdout and stderr, or a CompileError."""
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                encoding="utf-8", errors="replace")
    except OSError as e:
        raise CompileError(f"cannot run {command[0]}: {e}") from e
    if result.returncode == 0:
        return result.stdout, result.stderr
    diagnostics = (result.stderr or result.stdout).rstrip()
    if result.returncode < 0:
        try:
            how = f"crashed ({signal.Signals(-result.returncode).name})"
        except ValueError:
            how = f"was killed by signal {-result.returncode}"
    else:
        how = f"failed (exit status {result.returncode})"
    raise CompileError(f"tilec {how} compiling {description}:\n{diagnostics}",
                       diagnostics, result.returncode)


def _build(tilec: str, source: _Source, path: str, flags: List[str],
           target: str, kernel: Optional[str], root: str, entry: str) -> None:
    """Compiles into a scratch directory, then renames it to `entry`."""
    description = _describe(source, path, target, flags, kernel)
    _sweep_stale(root)
    scratch = _scratch(root, os.path.basename(entry)[:16])
    try:
        command = [tilec, path, "--target", target, "-o", scratch]
        for flag in flags:
            command += ["-D", flag]
        command += ["-k", kernel] if kernel else []
        stdout, stderr = _run(command, description)
        if not any(name.endswith(".json") for name in os.listdir(scratch)):
            raise CompileError(f"tilec compiled no kernel from {description}"
                               f": the source defines none", stderr, 0)
        with open(os.path.join(scratch, "tilec.log"), "w",
                  encoding="utf-8") as log:
            log.write(" ".join(command) + "\n" + stdout + stderr)
        if stderr.strip():
            warnings.warn(stderr.rstrip(), CompileWarning, stacklevel=3)
        _publish(scratch, entry)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compile(source: Any, defines: Optional[Mapping[str, Any]] = None,
            target: str = "auto", kernel: Optional[str] = None, *,
            tilec: Any = None, cache_dir: Any = None) -> Library:
    """Compiles a .tile file or source text with tilec and loads the bundle.

    `defines` sets template parameters ({"BLOCK": 128, "CAUSAL": True,
    "DT": "bf16"}; a list sweeps them into tuning configs); `target` is
    "sm_80", "sm_90a" or "auto" (the current GPU); `kernel` compiles one
    kernel of the file. The result is cached (see docs/python.md): a call
    with the same inputs runs no tilec. Raises CompileError, and TypeError
    or ValueError for malformed arguments."""
    data = _read_source(source)
    flags = _define_flags(defines)
    _check_kernel(kernel)
    target = resolve_target(target)
    tilec_path = find_tilec(tilec)
    root = cache_root(cache_dir)
    entry = os.path.join(root, cache_key(data.data, flags, target, kernel,
                                         tilec_path))
    if os.path.isdir(entry):
        try:
            return load(entry)
        except BundleError:  # damaged by hand: compile it again
            _discard(root, entry)
    os.makedirs(root, exist_ok=True)
    path = data.path if data.path is not None else \
        _write_source(root, data.data)
    _build(tilec_path, data, path, flags, target, kernel, root, entry)
    return load(entry)
