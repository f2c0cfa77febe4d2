"""tegula.ops.attention_decode: one new query per sequence against a paged
KV cache (forward only), as flash-attn's flash_attn_with_kvcache with a
block table.

One custom op, tegula::attention_decode, with a fake implementation (so
torch.compile and CUDA graphs take it). It picks one of three kernels of
kernels/attention_paged.tile by shape, from sizes known without reading
the GPU (the lengths live there, and a graph replays without the host):
- few (batch, K/V head) programs against the multiprocessors: split-KV,
  attention_paged_split over SPLITS chunks of each sequence, then
  attention_combine (kernels/attention_gqa.tile) merges the chunks;
- else pages of 64 keys or more: attention_paged, a block per page read;
- else (pages of 16): attention_paged_flat, blocks of 64 keys gathered
  across pages.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from .._errors import LaunchError
from .. import _prebuilt
from . import _common

DTYPES = (torch.bfloat16, torch.float16)
# Split-KV below this many (batch, K/V head) programs a multiprocessor,
# into up to MAX_SPLITS chunks (attention_combine's SB).
_SPLIT_BELOW = 1
MAX_SPLITS = 16


def _kernel(entry: str, q: Tensor, page: int):
    name = _prebuilt.decode_bundle(entry, q.shape[-1], page,
                                   q.dtype == torch.float16)
    return _common.kernel(name, entry, q)


def splits_for(q: Tensor, k_cache: Tensor, block_table: Tensor) -> int:
    """The split-KV chunks for a call: 1 (no split) when the programs fill
    the GPU or the longest possible sequence is short."""
    b, hkv = q.shape[0], k_cache.shape[2]
    longest = block_table.shape[1] * k_cache.shape[1]
    sms = _common.multiprocessors(q)
    if b * hkv >= _SPLIT_BELOW * sms or longest < 1024:
        return 1
    return max(2, min(MAX_SPLITS, 4 * sms // (b * hkv)))


# The kernels' repeated calls (_common.Repeats), by the inputs, scale and
# splits: the outputs and partials (dense) follow from them.
_paged = _common.Repeats()
_flat = _common.Repeats()
_split = _common.Repeats()
_combine = _common.Repeats()


def _decode_impl(q: Tensor, k_cache: Tensor, v_cache: Tensor,
                 block_table: Tensor, seq_lens: Tensor, scale: float,
                 splits: int) -> Tensor:
    key = _common.views_key((q, k_cache, v_cache, block_table, seq_lens),
                            scale, splits)
    b, h, d = q.shape
    pages, page, hkv, _ = k_cache.shape
    o = torch.empty_like(q)
    if splits == 1 and page >= _prebuilt.PAGED_MIN_PAGE:
        _paged.launch(key, lambda: _kernel("attention_paged", q, page),
                      (q, k_cache, v_cache, block_table, seq_lens, o),
                      scale=scale)
        return o
    # The caches seen flat, [NUM_PAGES * PAGE, HKV, D]: a view, no copy.
    k_flat = k_cache.view(pages * page, hkv, d)
    v_flat = v_cache.view(pages * page, hkv, d)
    if splits == 1:
        _flat.launch(key, lambda: _kernel("attention_paged_flat", q, page),
                     (q, k_flat, v_flat, block_table, seq_lens, o),
                     scale=scale)
        return o
    o_part = torch.empty(b, h, 1, splits, d, dtype=torch.float32,
                         device=q.device)
    lse_part = torch.empty(b, h, 1, splits, dtype=torch.float32,
                           device=q.device)
    _split.launch(key, lambda: _kernel("attention_paged_split", q, page),
                  (q, k_flat, v_flat, block_table, seq_lens, o_part,
                   lse_part), scale=scale)
    _combine.launch(key, lambda: _kernel("attention_combine", q, page),
                    (o_part, lse_part, o.view(b, h, 1, d)))
    return o


_decode = torch.library.custom_op("tegula::attention_decode", _decode_impl,
                                  mutates_args=())


@_decode.register_fake
def _decode_fake(q: Tensor, k_cache: Tensor, v_cache: Tensor,
                 block_table: Tensor, seq_lens: Tensor, scale: float,
                 splits: int) -> Tensor:
    return torch.empty_like(q)


def _check(q: Tensor, k_cache: Tensor, v_cache: Tensor, block_table: Tensor,
           seq_lens: Tensor) -> None:
    """What the kernels cannot take, as LaunchError naming the argument."""
    op = "attention_decode"
    for name, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache),
                    ("block_table", block_table), ("seq_lens", seq_lens)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.device.type != "cuda" or t.device != q.device:
            raise LaunchError(f"{op}: argument '{name}' is on {t.device}: "
                              f"expected a CUDA tensor on q's device", name)
    if q.dim() != 3 or q.dtype not in DTYPES:
        raise LaunchError(f"{op}: argument 'q' is {q.dtype} of shape "
                          f"{list(q.shape)}: expected bf16 or f16 [B, H, D]",
                          "q")
    b, h, d = q.shape
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        if (t.dim() != 4 or t.shape[-1] != d or t.dtype != q.dtype
                or t.shape != k_cache.shape):
            raise LaunchError(
                f"{op}: argument '{name}' is {t.dtype} of shape "
                f"{list(t.shape)}: expected q's dtype and [NUM_PAGES, PAGE, "
                f"HKV, D] with q's D = {d}, k_cache and v_cache alike", name)
    page, hkv = k_cache.shape[1], k_cache.shape[2]
    if hkv < 1 or h % hkv or h // hkv > 16:
        raise LaunchError(f"{op}: q has {h} heads and the caches {hkv}: HKV "
                          f"must divide H with at most 16 query heads a K/V "
                          f"head", "k_cache")
    if (block_table.dim() != 2 or block_table.shape[0] != b
            or block_table.dtype != torch.int32):
        raise LaunchError(f"{op}: argument 'block_table' is "
                          f"{block_table.dtype} of shape "
                          f"{list(block_table.shape)}: expected int32 "
                          f"[B, MAX_PAGES] with q's B = {b}", "block_table")
    if list(seq_lens.shape) != [b] or seq_lens.dtype != torch.int32:
        raise LaunchError(f"{op}: argument 'seq_lens' is {seq_lens.dtype} of "
                          f"shape {list(seq_lens.shape)}: expected int32 "
                          f"[B] with q's B = {b}", "seq_lens")
    if d not in _prebuilt.DECODE_HEAD_DIMS or page not in _prebuilt.PAGES:
        raise LaunchError(
            f"{op}: head dimension D = {d} and page size PAGE = {page} "
            f"(k_cache's second extent): tegula.ops ships D in "
            f"{list(_prebuilt.DECODE_HEAD_DIMS)} and PAGE in "
            f"{list(_prebuilt.PAGES)}", "k_cache")


def attention_decode(q: Tensor, k_cache: Tensor, v_cache: Tensor,
                     block_table: Tensor, seq_lens: Tensor,
                     scale: Optional[float] = None,
                     splits: Optional[int] = None) -> Tensor:
    """softmax(scale * q k^T) v of one query a sequence over its keys in a
    paged cache: q [B, H, D] (or [B, 1, H, D], flash-attn's decode
    layout); k_cache, v_cache [NUM_PAGES, PAGE, HKV, D]; sequence b's key
    j is at page block_table[b, j // PAGE], row j % PAGE; seq_lens [B]
    int32 keys a sequence (0 gives zeros). Grouped heads: query head h
    reads K/V head h // (H // HKV). Returns o shaped as q. Forward only.

    scale: None means D ** -0.5. splits: None picks split-KV by shape
    (attention_decode.splits_for); an int from 1 to 16 forces it. bf16 or
    f16; D = 64 or 128; PAGE = 16, 64 or 256."""
    layout4 = isinstance(q, Tensor) and q.dim() == 4 and q.shape[1] == 1
    if layout4:
        q = q[:, 0]
    _check(q, k_cache, v_cache, block_table, seq_lens)
    if splits is None:
        splits = splits_for(q, k_cache, block_table)
    if not 1 <= int(splits) <= MAX_SPLITS:
        raise LaunchError(f"attention_decode: splits = {splits}: expected 1 "
                          f"to {MAX_SPLITS}", "splits")
    if scale is None:
        scale = q.shape[-1] ** -0.5
    args = (q.contiguous(), k_cache.contiguous(), v_cache.contiguous(),
            block_table.contiguous(), seq_lens.contiguous())
    # Forward only: without a trace and with nothing to differentiate, the
    # implementation itself (no dispatcher), as the other ops' eager path.
    run = _decode_impl if _common.no_autograd(*args) else \
        torch.ops.tegula.attention_decode
    o = run(*args, float(scale), int(splits))
    return o[:, None] if layout4 else o
