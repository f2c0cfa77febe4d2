"""Where tegula.ops finds its prebuilt kernels.

scripts/build-ops.sh compiles them into tegula/_bundles/TARGET/NAME before
the package is installed (NAME a sweep of bench/tuning/sweeps.sh, with
"-f16" for the f16 build); this module maps a GPU to a target and loads a
bundle once per process. Nothing here imports torch.
"""

from __future__ import annotations

import os
import threading
from typing import Dict, Tuple

from ._errors import BundleError
from ._kernel import Kernel, Library, load

# The sweeps scripts/build-ops.sh compiles (its ops_sweeps pattern must
# cover them), by op kernel.
SWEEPS = {
    "attention_fwd_lse": "attn-fwd-lse",
    "attention_bwd_dkdv": "attn-bwd-dkdv",
    # dK/dV's GROUPED build, for K/V heads shared by several query heads.
    "attention_bwd_dkdv_grouped": "attn-bwd-dkdv-grouped",
    "attention_bwd_dq": "attn-bwd-dq",
    "attention_bwd_preprocess": "attn-bwd-preprocess",
}

_libraries: Dict[Tuple[str, str], Library] = {}
_lock = threading.Lock()


def root() -> str:
    """The bundles' folder: $TEGULA_OPS_BUNDLES, else the package's own."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("TEGULA_OPS_BUNDLES") or os.path.join(here,
                                                                "_bundles")


def target_for(capability: Tuple[int, int]) -> str:
    """sm_90a's cubins run on compute capability 9.0 only; every other GPU
    of 8.0 or newer runs sm_80's (its cubin on 8.x, its PTX JIT-compiled
    by the driver elsewhere)."""
    return "sm_90a" if tuple(capability) == (9, 0) else "sm_80"


def bundle_name(kernel: str, head_dim: int, causal: bool, f16: bool) -> str:
    """The bundle folder of `kernel` at one head size, mask and dtype."""
    name = f"{SWEEPS[kernel]}-d{head_dim}"
    if causal and kernel != "attention_bwd_preprocess":
        name += "-causal"
    return name + ("-f16" if f16 else "")


def rotary_bundle(head_dim: int, rotary_dim: int, interleaved: bool,
                  f16: bool) -> str:
    """The bundle of `rotary` and `rotary_inplace` (kernels/rotary.tile) at
    one head size D, rotary size R, pairing and dtype."""
    name = f"rotary-d{head_dim}-r{rotary_dim}"
    return name + ("-interleaved" if interleaved else "") + \
        ("-f16" if f16 else "")


def norm_bundle(dtype: str) -> str:
    """kernels/rmsnorm.tile's bundle (rmsnorm_fwd and its backward) for x
    and w of `dtype`: "bf16", "f16" or "f32" (autocast's f32 residuals)."""
    return "rmsnorm" + ("" if dtype == "bf16" else f"-{dtype}")


def loss_bundle(f16: bool) -> str:
    """kernels/cross_entropy.tile's bundle (forward and backward)."""
    return "cross-entropy" + ("-f16" if f16 else "")


# The GLA builds scripts/build-ops.sh makes: (K, V) head dimensions. K = 8
# (a layer of hidden size 32, expand_k 0.5, 2 heads) is padded to 16 inside.
GLA_DIMS = ((8, 16), (64, 64), (64, 128), (128, 128), (256, 256))
# The chunk of the chunked forward (gla-fwd2, gla-chunks).
GLA_FWD_CHUNK = 64
# The chunk of the backward (-D CHUNK of every gla_bwd.tile build): it
# recomputes the chunked forward's states, gate sums and scores.
GLA_BWD_CHUNK = GLA_FWD_CHUNK
# gla.tile's and gla_bwd.tile's kernels by bundle: a build per (K, V), its
# optional-tensor flags ("-h0", "-dht") where the kernel has them, dtype.
_GLA_BUNDLES = {
    "chunk_gla_fwd": "gla-fwd",
    # The chunked forward: states at CHUNK = GLA_FWD_CHUNK (in the inputs'
    # dtype; the backward recomputes them with the same build), then each
    # chunk's scores and outputs.
    "chunk_gla_states": "gla-fwd2",
    "chunk_gla_cumsum": "gla-chunks",
    "chunk_gla_intra": "gla-chunks",
    "chunk_gla_output": "gla-chunks",
    "recurrent_gla_fwd": "gla-fwd",
    "chunk_gla_bwd_dh": "gla-bwd-dh",
    "chunk_gla_bwd_da": "gla-bwd",
    "chunk_gla_bwd_dqk_intra": "gla-bwd",
    "chunk_gla_bwd_dqkg": "gla-bwd",
    "chunk_gla_bwd_dv": "gla-bwd",
}


def gla_bundle(kernel: str, key_dim: int, value_dim: int, flags: str,
               f16: bool) -> str:
    """The bundle of a GLA kernel at head sizes K, V; flags "-h0"
    (an initial state) and "-dht" (a final state's gradient) as it takes
    them."""
    return f"{_GLA_BUNDLES[kernel]}-k{key_dim}-v{value_dim}{flags}" + \
        ("-f16" if f16 else "")


# kernels/linear_attention_chunked.tile's kernels by bundle (gate-free
# chunk_linear_attention, at GLA_DIMS and CHUNK = GLA_FWD_CHUNK): the
# states (with "-h0"), the outputs, dH (with "-h0", "-dht"), the
# per-chunk gradients, and the recurrent forward (with "-h0").
_LINEAR_BUNDLES = {
    "chunk_linear_states": "linear-states",
    "chunk_linear_output": "linear-chunks",
    "chunk_linear_bwd_dh": "linear-bwd-dh",
    "chunk_linear_bwd_dqk": "linear-bwd",
    "chunk_linear_bwd_dv": "linear-bwd",
    "recurrent_linear_fwd": "linear-recurrent",
}


def linear_bundle(kernel: str, key_dim: int, value_dim: int, flags: str,
                  f16: bool) -> str:
    """The bundle of a gate-free linear attention kernel, as gla_bundle."""
    return f"{_LINEAR_BUNDLES[kernel]}-k{key_dim}-v{value_dim}{flags}" + \
        ("-f16" if f16 else "")


# The paged decode builds: head sizes and page sizes (kernels/
# attention_paged.tile; attention_combine of attention_gqa.tile at each D).
DECODE_HEAD_DIMS = (64, 128)
PAGES = (16, 64, 256)
# attention_paged (a block per page read) is built and used for pages of at
# least this many keys; smaller pages go through attention_paged_flat.
PAGED_MIN_PAGE = 64


def decode_bundle(kernel: str, head_dim: int, page: int, f16: bool) -> str:
    """The bundle of a paged-decode kernel at head size D and page size
    PAGE (attention_combine has one build per D)."""
    if kernel == "attention_combine":
        name = f"attention-combine-d{head_dim}"
    else:
        name = f"{kernel.replace('_', '-')}-d{head_dim}-p{page}"
    return name + ("-f16" if f16 else "")


# attention_varlen's builds (kernels/attention_varlen.tile's
# attention_varlen_fwd and attention_varlen_bwd.tile's kernels), at their
# default blocks: per head size, mask (not the preprocess) and dtype; dK/dV
# also as GROUPED ("_grouped"), for K/V heads shared by query heads.
VARLEN_HEAD_DIMS = (64, 128)
VARLEN_KERNELS = ("attention_varlen_fwd", "attention_varlen_bwd_preprocess",
                  "attention_varlen_bwd_dkdv",
                  "attention_varlen_bwd_dkdv_grouped",
                  "attention_varlen_bwd_dq")


def varlen_bundle(kernel: str, head_dim: int, causal: bool, f16: bool) -> str:
    """The bundle of a varlen attention kernel (or its "_grouped" build) at
    one head size, mask and dtype."""
    name = kernel.replace("attention_", "attention-").replace("_", "-") + \
        f"-d{head_dim}"
    if causal and kernel != "attention_varlen_bwd_preprocess":
        name += "-causal"
    return name + ("-f16" if f16 else "")


# The rotary builds scripts/build-ops.sh makes: (D, R) pairs.
ROTARY_DIMS = ((64, 64), (64, 32), (128, 128), (128, 64))


def kernel(name: str, entry: str, capability: Tuple[int, int]) -> Kernel:
    """Kernel `entry` of bundle `name` for a GPU of `capability`, loaded
    once per process (a Library loads its module per CUDA context)."""
    target = target_for(capability)
    key = (target, name)
    library = _libraries.get(key)
    if library is None:
        with _lock:
            library = _libraries.get(key)
            if library is None:
                library = _libraries[key] = _load(target, name)
    return getattr(library, entry)


def _load(target: str, name: str) -> Library:
    path = os.path.join(root(), target, name)
    if not os.path.isdir(path):
        raise BundleError(
            f"tegula.ops: the prebuilt kernel '{target}/{name}' is missing "
            f"from {root()}: the package was installed without its kernels. "
            f"Build them with scripts/build-ops.sh before `pip install "
            f"./python` (the README's set-up does), or set TEGULA_OPS_BUNDLES "
            f"to a folder that scripts/build-ops.sh wrote.")
    return load(path)
