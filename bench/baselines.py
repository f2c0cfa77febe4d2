"""Peers for the benchmarks: Triton kernels, eager PyTorch, float64 references.

Triton peers: flash-attention-2 forward, paged-KV decode attention, rotary
embedding, chunked causal linear attention, the tutorial's LayerNorm. Eager
peers: rotary, chunked linear attention, LayerNorm
(torch.nn.functional.layer_norm), paged decode (gather, then SDPA) and
varlen attention (one SDPA call per sequence) written with plain torch ops.
References compute the plain definitions in float64.

With TRITON_INTERPRET=1 (Triton's CPU interpreter) every kernel runs a
single fixed config, so nothing is autotuned there.
"""
import math
import os

import torch
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
_LOG2E = 1.4426950408889634
# Triton 3.6's interpreter multiplies bf16 tl.dot operands as their raw
# uint16 bits, so it gets them as f32 (which holds every bf16/f16 value).
_DOT_IN_F32 = tl.constexpr(_INTERPRET)


def _configs(interpret, tuned):
    """Autotune configs: the one `interpret` under the interpreter, else the
    `tuned` list; each a (meta, num_warps, num_stages) tuple."""
    chosen = [interpret] if _INTERPRET else tuned
    return [triton.Config(meta, num_warps=w, num_stages=s)
            for meta, w, s in chosen]


@triton.jit
def _dot(a, b, acc=None):
    if _DOT_IN_F32:
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
    return tl.dot(a, b, acc)


# ---------------------------------------------------------------------------
# Flash attention 2, forward.

# BLOCK_N <= BLOCK_M throughout, so the causal diagonal splits into whole
# BLOCK_N steps. BLOCK_N=128 only with 2 stages: at D=128 three stages of K
# and V (192 KiB) plus Q would not fit H100's 227 KiB of shared memory.
_ATTN_CONFIGS = _configs(
    ({"BLOCK_M": 64, "BLOCK_N": 32}, 4, 1),
    [({"BLOCK_M": bm, "BLOCK_N": bn}, w, s) for bm, bn, w, s in (
        (128, 128, 8, 2),
        (128, 64, 8, 3),
        (128, 64, 8, 4),
        (128, 64, 4, 3),
        (128, 32, 4, 4),
        (128, 32, 8, 3),
        (64, 64, 4, 3),
        (64, 32, 4, 4),
    )])


@triton.jit
def _attn_steps(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, offs_d, N, lo, hi,
                qk_scale, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                MASK: tl.constexpr):
    # MASK 0: every key in [lo, hi) is valid for every query (no masking).
    # MASK 1: keys >= N are masked. MASK 2: also keys after the query.
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_off = offs_n[:, None] * HEAD_DIM + offs_d[None, :]
        if MASK == 0:
            k = tl.load(k_ptr + kv_off)
            v = tl.load(v_ptr + kv_off)
        else:
            # Zero-filled rows keep qk and p @ v finite before masking.
            in_n = (offs_n < N)[:, None]
            k = tl.load(k_ptr + kv_off, mask=in_n, other=0.0)
            v = tl.load(v_ptr + kv_off, mask=in_n, other=0.0)
        qk = _dot(q, tl.trans(k)) * qk_scale
        if MASK == 1:
            qk = tl.where((offs_n < N)[None, :], qk, float("-inf"))
        if MASK == 2:
            keep = (offs_n[None, :] <= offs_m[:, None]) & (offs_n < N)[None, :]
            qk = tl.where(keep, qk, float("-inf"))
        # The first step always leaves each row a finite maximum (key 0, or
        # the query's own key on the diagonal), so later all-masked rows give
        # exp2(-inf) = 0, never NaN.
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = _dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.autotune(configs=_ATTN_CONFIGS, key=["N", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_fwd(Q, K, V, O, N, qk_scale, HEAD_DIM: tl.constexpr,
              CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    start_m = tl.program_id(0) * BLOCK_M
    base = tl.program_id(1).to(tl.int64) * N * HEAD_DIM
    q_ptr, k_ptr, v_ptr, o_ptr = Q + base, K + base, V + base, O + base
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_off = offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    in_m = (offs_m < N)[:, None]
    q = tl.load(q_ptr + row_off, mask=in_m, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:
        # Keys before start_m lie below the diagonal for every query here.
        acc, l_i, m_i = _attn_steps(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m,
                                    offs_d, N, 0, start_m, qk_scale,
                                    HEAD_DIM, BLOCK_N, 0)
        acc, l_i, m_i = _attn_steps(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m,
                                    offs_d, N, start_m,
                                    tl.minimum(start_m + BLOCK_M, N),
                                    qk_scale, HEAD_DIM, BLOCK_N, 2)
    else:
        n_full = (N // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _attn_steps(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m,
                                    offs_d, N, 0, n_full, qk_scale,
                                    HEAD_DIM, BLOCK_N, 0)
        # The ragged last block, if N is not a multiple of BLOCK_N.
        acc, l_i, m_i = _attn_steps(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m,
                                    offs_d, N, n_full, N, qk_scale,
                                    HEAD_DIM, BLOCK_N, 1)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + row_off, acc.to(O.dtype.element_ty), mask=in_m)


def triton_attention(q, k, v, causal: bool, scale: float):
    """Flash attention forward on [Z, H, N, D] bf16/f16, D in {64, 128}."""
    Z, H, N, D = q.shape
    assert k.shape == q.shape and v.shape == q.shape and D in (64, 128)
    assert q.dtype in (torch.bfloat16, torch.float16)
    assert q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
    o = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_M"]), Z * H)  # noqa: E731
    _attn_fwd[grid](q, k, v, o, N, scale * _LOG2E, HEAD_DIM=D,
                    CAUSAL=bool(causal))
    return o


# ---------------------------------------------------------------------------
# Rotary embedding.

@triton.jit
def _rotary_fwd(X, COS, SIN, OUT, n_rows, T, H, cs_stride, D: tl.constexpr,
                HALF: tl.constexpr, INTERLEAVED: tl.constexpr,
                COPY_TAIL: tl.constexpr, BLOCK_ROWS: tl.constexpr,
                BLOCK_H: tl.constexpr, BLOCK_TAIL: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    in_rows = rows < n_rows
    t = (rows // H) % T
    row_off = rows.to(tl.int64) * D
    offs_h = tl.arange(0, BLOCK_H)
    in_h = in_rows[:, None] & (offs_h < HALF)[None, :]
    cs_off = t[:, None] * cs_stride + offs_h[None, :]
    c = tl.load(COS + cs_off, mask=in_h, other=0.0)
    s = tl.load(SIN + cs_off, mask=in_h, other=0.0)
    if INTERLEAVED:
        # Load the rotated features as one contiguous [rows, 2*pairs] tile,
        # as wide as a plain row copy, and pull the pairs apart in registers.
        offs_p = tl.arange(0, 2 * BLOCK_H)
        off = row_off[:, None] + offs_p[None, :]
        in_p = in_rows[:, None] & (offs_p < 2 * HALF)[None, :]
        xx = tl.load(X + off, mask=in_p, other=0.0).to(tl.float32)
        x1, x2 = tl.split(tl.reshape(xx, [BLOCK_ROWS, BLOCK_H, 2]))
        out = tl.join(x1 * c - x2 * s, x2 * c + x1 * s)
        out = tl.reshape(out, [BLOCK_ROWS, 2 * BLOCK_H])
        tl.store(OUT + off, out.to(OUT.dtype.element_ty), mask=in_p)
    else:
        off = row_off[:, None] + offs_h[None, :]
        x1 = tl.load(X + off, mask=in_h, other=0.0).to(tl.float32)
        x2 = tl.load(X + off + HALF, mask=in_h, other=0.0).to(tl.float32)
        tl.store(OUT + off, (x1 * c - x2 * s).to(OUT.dtype.element_ty),
                 mask=in_h)
        tl.store(OUT + off + HALF, (x2 * c + x1 * s).to(OUT.dtype.element_ty),
                 mask=in_h)
    if COPY_TAIL:
        offs_t = 2 * HALF + tl.arange(0, BLOCK_TAIL)
        off = row_off[:, None] + offs_t[None, :]
        in_t = in_rows[:, None] & (offs_t < D)[None, :]
        tl.store(OUT + off, tl.load(X + off, mask=in_t), mask=in_t)


def triton_rotary(x, cos, sin, interleaved: bool = False, out=None):
    """Rotary embedding of x [B, T, H, D] with cos/sin [T, R/2] float32.

    Rotates the first R features as pairs (i, i + R/2), or (2i, 2i+1) when
    interleaved; copies features R..D-1 unchanged. out may be x (in place).
    """
    B, T, H, D = x.shape
    half = cos.shape[-1]
    assert x.is_contiguous() and 2 * half <= D
    assert cos.shape == sin.shape and cos.shape[0] >= T
    assert cos.dtype == torch.float32 and sin.dtype == torch.float32
    assert cos.stride(-1) == 1 and sin.stride() == cos.stride()
    if out is None:
        out = torch.empty_like(x)
    assert out.shape == x.shape and out.dtype == x.dtype
    assert out.is_contiguous()
    n_rows = B * T * H
    # About 4K elements of x per program: enough bytes in flight per SM.
    block_rows = max(1, 4096 // triton.next_power_of_2(D))
    _rotary_fwd[(triton.cdiv(n_rows, block_rows),)](
        x, cos, sin, out, n_rows, T, H, cos.stride(0), D=D, HALF=half,
        INTERLEAVED=bool(interleaved),
        # In place, the unrotated tail is already where it belongs.
        COPY_TAIL=2 * half < D and out.data_ptr() != x.data_ptr(),
        BLOCK_ROWS=block_rows, BLOCK_H=triton.next_power_of_2(half),
        BLOCK_TAIL=triton.next_power_of_2(max(D - 2 * half, 1)),
        num_warps=4)
    return out


def eager_rotary(x, cos, sin, interleaved=False):
    """Rotary embedding as a model would write it in PyTorch."""
    rot_dim = 2 * cos.shape[-1]
    T = x.shape[1]
    c = cos[:T, None, :]
    s = sin[:T, None, :]
    x_rot, x_pass = x[..., :rot_dim].float(), x[..., rot_dim:]
    if interleaved:
        x1, x2 = x_rot[..., 0::2], x_rot[..., 1::2]
    else:
        x1, x2 = x_rot.chunk(2, dim=-1)
    o1 = x1 * c - x2 * s
    o2 = x2 * c + x1 * s
    if interleaved:
        rot = torch.stack((o1, o2), dim=-1).flatten(-2)
    else:
        rot = torch.cat((o1, o2), dim=-1)
    return torch.cat((rot.to(x.dtype), x_pass), dim=-1)


# ---------------------------------------------------------------------------
# Chunked causal linear attention, forward.

_LINATTN_CONFIGS = _configs(
    ({"BLOCK_V": 64}, 4, 1),
    [({"BLOCK_V": bv}, w, s) for bv, w, s in (
        (32, 4, 2),
        (32, 4, 3),
        (64, 4, 2),
        (64, 4, 3),
        (64, 8, 2),
        (128, 8, 2),
    )])


@triton.autotune(configs=_LINATTN_CONFIGS, key=["T", "D", "DV"])
@triton.jit
def _linear_attn_fwd(Q, K, V, O, T, H, scale, D: tl.constexpr,
                     DV: tl.constexpr, BLOCK_D: tl.constexpr,
                     BLOCK_T: tl.constexpr, BLOCK_V: tl.constexpr):
    bh = tl.program_id(0)
    # Token (b, t, h) of a [B, T, H, *] tensor starts at ((b*T + t)*H + h)*dim.
    head = ((bh // H).to(tl.int64) * T * H + bh % H)
    q_ptr, k_ptr = Q + head * D, K + head * D
    v_ptr, o_ptr = V + head * DV, O + head * DV
    offs_t = tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    offs_v = tl.program_id(1) * BLOCK_V + tl.arange(0, BLOCK_V)
    in_d = (offs_d < D)[None, :]
    in_v = (offs_v < DV)[None, :]
    causal = offs_t[:, None] >= offs_t[None, :]
    # S = sum over earlier chunks of k^T v, for this block of the value dim.
    state = tl.zeros([BLOCK_D, BLOCK_V], tl.float32)
    for t0 in range(0, T, BLOCK_T):
        tt = t0 + offs_t
        in_t = (tt < T)[:, None]
        qk_off = tt[:, None] * (H * D) + offs_d[None, :]
        vo_off = tt[:, None] * (H * DV) + offs_v[None, :]
        # Rows past T load as zeros, so they add nothing to the state.
        q = tl.load(q_ptr + qk_off, mask=in_t & in_d, other=0.0)
        k = tl.load(k_ptr + qk_off, mask=in_t & in_d, other=0.0)
        v = tl.load(v_ptr + vo_off, mask=in_t & in_v, other=0.0)
        a = tl.where(causal, _dot(q, tl.trans(k)), 0.0)
        o = _dot(a.to(v.dtype), v)
        o = _dot(q, state.to(q.dtype), o)
        state = _dot(tl.trans(k), v, state)
        tl.store(o_ptr + vo_off, (o * scale).to(O.dtype.element_ty),
                 mask=in_t & in_v)


def triton_linear_attention(q, k, v, scale: float):
    """o_t = scale * sum_{s<=t} (q_t . k_s) v_s on [B, T, H, D] bf16/f16."""
    B, T, H, D = q.shape
    DV = v.shape[-1]
    assert k.shape == q.shape and v.shape[:3] == q.shape[:3]
    assert q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
    o = torch.empty_like(v)
    grid = lambda meta: (B * H, triton.cdiv(DV, meta["BLOCK_V"]))  # noqa: E731
    _linear_attn_fwd[grid](q, k, v, o, T, H, scale, D=D, DV=DV,
                           BLOCK_D=max(16, triton.next_power_of_2(D)),
                           BLOCK_T=64)
    return o


def eager_linear_attention(q, k, v, scale, chunk=64):
    """Chunked causal linear attention with torch matmuls.

    Matmuls run in the input dtype; the carried state and the sums are f32.
    """
    q, k, v = (x.transpose(1, 2) for x in (q, k, v))  # [B, H, T, *]
    B, H, T, D = q.shape
    state = q.new_zeros(B, H, D, v.shape[-1], dtype=torch.float32)
    mask = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    outs = []
    for t0 in range(0, T, chunk):
        qc, kc, vc = (x[:, :, t0:t0 + chunk] for x in (q, k, v))
        n = qc.shape[2]
        attn = (qc @ kc.transpose(-1, -2)).masked_fill(~mask[:n, :n], 0)
        intra = (attn @ vc).float()
        inter = (qc @ state.to(q.dtype)).float()
        outs.append(((intra + inter) * scale).to(v.dtype))
        state += (kc.transpose(-1, -2) @ vc).float()
    return torch.cat(outs, dim=2).transpose(1, 2)


# ---------------------------------------------------------------------------
# Paged-KV decode: one query per sequence against a K/V cache in pages.

_PAGED_CONFIGS = _configs(
    ({"BLOCK_N": 32}, 4, 1),
    [({"BLOCK_N": bn}, w, s) for bn, w, s in (
        (32, 4, 2),
        (64, 4, 2),
        (64, 4, 3),
        (128, 4, 2),
        (128, 8, 2),
    )])


@triton.autotune(configs=_PAGED_CONFIGS, key=["PAGE", "D", "GROUP"])
@triton.jit
def _paged_decode(Q, KC, VC, BT, SL, O, H, HKV, MAX_PAGES, qk_scale,
                  D: tl.constexpr, PAGE: tl.constexpr, GROUP: tl.constexpr,
                  BLOCK_N: tl.constexpr):
    # One program per (K/V head, sequence); its rows are the H / HKV query
    # heads that read that K/V head, padded to GROUP (>= 16 for tl.dot).
    hk = tl.program_id(0)
    b = tl.program_id(1)
    g = H // HKV
    offs_g = tl.arange(0, GROUP)
    offs_d = tl.arange(0, D)
    in_g = (offs_g < g)[:, None]
    q_off = (b * H + hk * g + offs_g).to(tl.int64)[:, None] * D + \
        offs_d[None, :]
    q = tl.load(Q + q_off, mask=in_g, other=0.0)
    seq_len = tl.load(SL + b)
    m_i = tl.full([GROUP], float("-inf"), tl.float32)
    l_i = tl.zeros([GROUP], tl.float32)
    acc = tl.zeros([GROUP, D], tl.float32)
    offs_n = tl.arange(0, BLOCK_N)
    for n0 in range(0, seq_len, BLOCK_N):
        # Key j is row j % PAGE of page block_table[b, j // PAGE]: a gather
        # of whole rows, so BLOCK_N does not depend on PAGE.
        j = n0 + offs_n
        in_n = j < seq_len
        page = tl.load(BT + b * MAX_PAGES + j // PAGE, mask=in_n, other=0)
        slot = page.to(tl.int64) * PAGE + j % PAGE
        kv_off = (slot * HKV + hk)[:, None] * D + offs_d[None, :]
        # Slots past the sequence may hold anything (NaN): never loaded.
        k = tl.load(KC + kv_off, mask=in_n[:, None], other=0.0)
        v = tl.load(VC + kv_off, mask=in_n[:, None], other=0.0)
        qk = _dot(q, tl.trans(k)) * qk_scale
        qk = tl.where(in_n[None, :], qk, float("-inf"))
        # Block 0 holds key 0, so every row's maximum is finite from then on.
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = _dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    # An empty sequence (seq_len 0) stores 0.
    acc = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(O + q_off, acc.to(O.dtype.element_ty), mask=in_g)


def triton_paged_decode(q, k_cache, v_cache, block_table, seq_lens,
                        scale: float):
    """Decode attention of q [B, H, D] against k_cache/v_cache [NUM_PAGES,
    PAGE, HKV, D]; key j of sequence b is row j % PAGE of page
    block_table[b, j // PAGE] (int32 [B, MAX_PAGES]), for j < seq_lens[b]
    (int32 [B]). H a multiple of HKV; D a power of two >= 16."""
    B, H, D = q.shape
    _, page, HKV, D2 = k_cache.shape
    assert D == D2 and v_cache.shape == k_cache.shape and H % HKV == 0
    assert block_table.dtype == torch.int32 and seq_lens.dtype == torch.int32
    assert block_table.shape[0] == B and seq_lens.shape == (B,)
    for t in (q, k_cache, v_cache, block_table, seq_lens):
        assert t.is_contiguous()
    o = torch.empty_like(q)
    group = max(16, triton.next_power_of_2(H // HKV))
    _paged_decode[(HKV, B)](q, k_cache, v_cache, block_table, seq_lens, o, H,
                            HKV, block_table.shape[1], scale * _LOG2E, D=D,
                            PAGE=page, GROUP=group)
    return o


def gather_sdpa_paged(q, k_cache, v_cache, block_table, seq_lens, scale,
                      max_len=None):
    """Paged decode as plain PyTorch: gather each sequence's pages into a
    padded [B, HKV, S, D] K and V, repeat them to H heads, and run SDPA with
    the padding masked. `max_len` (a Python int >= every seq_len) bounds S
    without reading seq_lens back to the host."""
    B, H, D = q.shape
    _, page, hkv, _ = k_cache.shape
    pages = block_table.shape[1] if max_len is None else \
        -(-max_len // page)
    idx = block_table[:, :pages].long()
    k = k_cache[idx].reshape(B, pages * page, hkv, D).transpose(1, 2)
    v = v_cache[idx].reshape(B, pages * page, hkv, D).transpose(1, 2)
    keep = torch.arange(pages * page, device=q.device)[None, :] < \
        seq_lens[:, None]
    # Cache rows past a sequence hold anything (NaN in the checks): zero
    # them, since a masked score still multiplies its V row by 0.
    k = torch.where(keep[:, None, :, None], k, 0)
    v = torch.where(keep[:, None, :, None], v, 0)
    k = k.repeat_interleave(H // hkv, 1)
    v = v.repeat_interleave(H // hkv, 1)
    o = torch.nn.functional.scaled_dot_product_attention(
        q[:, :, None, :], k, v, attn_mask=keep[:, None, None, :], scale=scale)
    # A sequence with no key gives NaN rows in SDPA; 0 as the others do.
    return o[:, :, 0, :].nan_to_num(0.0)


def sdpa_varlen(q, k, v, bounds, causal, scale):
    """Varlen attention as one SDPA call per sequence: q [T, H, D], k and v
    [T, HKV, D] (HKV dividing H), `bounds` the cu_seqlens as Python ints.
    Rows in no sequence are left 0."""
    o = torch.zeros_like(q)
    rep = q.shape[1] // k.shape[1]
    for s0, s1 in zip(bounds[:-1], bounds[1:]):
        if s1 == s0:
            continue
        qs, ks, vs = (x[s0:s1].transpose(0, 1)[None] for x in (q, k, v))
        if rep > 1:
            ks = ks.repeat_interleave(rep, 1)
            vs = vs.repeat_interleave(rep, 1)
        out = torch.nn.functional.scaled_dot_product_attention(
            qs, ks, vs, is_causal=causal, scale=scale)
        o[s0:s1] = out[0].transpose(0, 1)
    return o


# ---------------------------------------------------------------------------
# float64 references: the definitions, computed directly.

# ---------------------------------------------------------------------------
# GEMM: the Triton tutorial's matmul (grouped program order, autotuned).

_MATMUL_CONFIGS = _configs(
    ({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 1}, 4, 1),
    [({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, w, s)
     for bm, bn, bk, w, s in (
         (128, 256, 64, 8, 3),
         (64, 256, 32, 4, 4),
         (128, 128, 32, 4, 4),
         (128, 64, 32, 4, 4),
         (64, 128, 32, 4, 4),
         (128, 128, 64, 8, 3),
         (256, 128, 64, 8, 3),
         (128, 256, 32, 8, 4),
     )])


@triton.autotune(configs=_MATMUL_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul(A, B, C, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
            BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(A + offs_m[:, None] * K + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * N + offs_n[None, :],
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = _dot(a, b, acc)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(C + offs_m[:, None] * N + offs_n[None, :],
             acc.to(C.dtype.element_ty), mask=mask)


def triton_matmul(a, b):
    """a [M, K] @ b [K, N], contiguous bf16/f16, f32 accumulation."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and a.is_contiguous() and b.is_contiguous()
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) *  # noqa: E731
                         triton.cdiv(N, meta["BLOCK_N"]),)
    _matmul[grid](a, b, c, M, N, K)
    return c


# ---------------------------------------------------------------------------
# GEMM with a bias and exact-GELU epilogue: the tutorial kernel above with
# the epilogue fused (tl.math.erf, as a Triton user writes exact GELU).

@triton.autotune(configs=_MATMUL_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_bias_gelu(A, B, BIAS, C, M, N, K, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(A + offs_m[:, None] * K + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * N + offs_n[None, :],
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = _dot(a, b, acc)
    bias = tl.load(BIAS + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    x = acc + bias[None, :]
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(C + offs_m[:, None] * N + offs_n[None, :],
             y.to(C.dtype.element_ty), mask=mask)


def triton_matmul_bias_gelu(a, b, bias):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and a.is_contiguous() and b.is_contiguous()
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) *  # noqa: E731
                         triton.cdiv(N, meta["BLOCK_N"]),)
    _matmul_bias_gelu[grid](a, b, bias, c, M, N, K)
    return c


def eager_matmul_bias_gelu(a, b, bias):
    return torch.nn.functional.gelu(a @ b + bias)


def ref_matmul_bias_gelu(a, b, bias):
    x = a.double() @ b.double() + bias.double()
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


# ---------------------------------------------------------------------------
# Fused cross-entropy: one program per row, an online logsumexp over the
# vocabulary in BLOCK chunks, the target's logit loaded alone.

@triton.jit
def _cross_entropy(X, T, LOSS, LSE, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    l = tl.zeros((BLOCK,), tl.float32)
    for v0 in range(0, V, BLOCK):
        cols = v0 + tl.arange(0, BLOCK)
        x = tl.load(X + row * V + cols, mask=cols < V,
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_use = tl.where(m_new > float("-inf"), m_new, 0.0)
        l = l * tl.exp(m - m_use) + tl.exp(x - m_use)
        m = m_new
    top = tl.max(m, axis=0)
    lse = top + tl.log(tl.sum(l * tl.exp(m - top), axis=0))
    t = tl.load(T + row)
    picked = tl.load(X + row * V + t, mask=t >= 0, other=0.0).to(tl.float32)
    tl.store(LSE + row, lse)
    tl.store(LOSS + row, tl.where(t >= 0, lse - picked, 0.0))


def triton_cross_entropy(x, target):
    """(loss [R], lse [R]) in f32 for logits x [R, V]; target -100 ignored."""
    R, V = x.shape
    assert x.is_contiguous()
    loss = torch.empty(R, device=x.device, dtype=torch.float32)
    lse = torch.empty(R, device=x.device, dtype=torch.float32)
    _cross_entropy[(R,)](x, target, loss, lse, V, BLOCK=4096, num_warps=8)
    return loss, lse


def eager_cross_entropy(x, target):
    return torch.nn.functional.cross_entropy(x.float(), target.long(),
                                             reduction="none",
                                             ignore_index=-100)


def ref_cross_entropy(x, target):
    x = x.double()
    lse = torch.logsumexp(x, dim=1)
    t = target.long()
    picked = x.gather(1, t.clamp(min=0)[:, None])[:, 0]
    return torch.where(t >= 0, lse - picked, torch.zeros_like(lse)), lse


# ---------------------------------------------------------------------------
# RMSNorm: one program per row, the whole row in one block when it fits.

@triton.jit
def _rmsnorm(X, W, Y, C, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    squares = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, C, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(X + row * C + cols, mask=cols < C, other=0.0).to(tl.float32)
        squares += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / C + eps)
    for c0 in range(0, C, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(X + row * C + cols, mask=cols < C, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=cols < C, other=0.0).to(tl.float32)
        tl.store(Y + row * C + cols, (x * rstd * w).to(Y.dtype.element_ty),
                 mask=cols < C)


def triton_rmsnorm(x, w, eps):
    R, C = x.shape
    assert x.is_contiguous() and w.is_contiguous()
    y = torch.empty_like(x)
    block = min(triton.next_power_of_2(C), 8192)
    _rmsnorm[(R,)](x, w, y, C, eps, BLOCK=block,
                   num_warps=8 if block >= 4096 else 4)
    return y


def eager_rmsnorm(x, w, eps):
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (xf * rstd * w.float()).to(x.dtype)


# ---------------------------------------------------------------------------
# LayerNorm: the Triton tutorial's kernels (triton-lang/triton,
# python/tutorials/05-layer-norm.py, MIT licence), the same algorithm and
# launch choices: the forward one program per row in BLOCK_SIZE chunks; the
# backward dx per row with dw/db partial sums added under a spin lock into
# GROUP_SIZE_M buffers in x's dtype, then summed by _ln_bwd_dwdb.

@triton.jit
def _ln_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps,
                  BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def _ln_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                     GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    group = row % GROUP_SIZE_M
    Lock += group
    Count = Lock + GROUP_SIZE_M
    DW = DW + group * N + cols
    DB = DB + group * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.)
    wdy = tl.where(mask, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    # Every thread's stores land before the lock is released.
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _ln_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                 BLOCK_SIZE_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def layer_norm_group_size(n):
    """The tutorial's GROUP_SIZE_M: how many dw/db partial rows."""
    return 256 if n <= 1024 else 128 if n <= 4096 else 96 if n <= 8192 else 64


class TritonLayerNorm(torch.autograd.Function):
    """The tutorial's LayerNorm autograd function. `compiled` keeps the
    last compiled kernel of each kind and block, for reading its PTX."""
    compiled = {}

    @staticmethod
    def forward(ctx, x, w, b, eps):
        y = torch.empty_like(x)
        x2 = x.reshape(-1, x.shape[-1])
        M, N = x2.shape
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        block = min(65536 // x.element_size(), triton.next_power_of_2(N))
        if N > block:
            raise RuntimeError("the tutorial's LayerNorm needs rows < 64KB")
        warps = min(max(block // 256, 1), 8)
        TritonLayerNorm.compiled["fwd", block] = _ln_fwd_fused[(M,)](
            x2, y, w, b, mean, rstd, x2.stride(0), N, eps, BLOCK_SIZE=block,
            num_warps=warps)
        ctx.save_for_backward(x, w, mean, rstd)
        ctx.block, ctx.warps = block, warps
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, mean, rstd = ctx.saved_tensors
        N = w.shape[0]
        x2 = x.reshape(-1, N)
        M = x2.shape[0]
        group = layer_norm_group_size(N)
        locks = torch.zeros(2 * group, dtype=torch.int32, device=w.device)
        dw_part = torch.zeros((group, N), dtype=x.dtype, device=w.device)
        db_part = torch.zeros((group, N), dtype=x.dtype, device=w.device)
        dw = torch.empty((N,), dtype=w.dtype, device=w.device)
        db = torch.empty((N,), dtype=w.dtype, device=w.device)
        dx = torch.empty_like(dy)
        TritonLayerNorm.compiled["bwd_dx", ctx.block] = _ln_bwd_dx_fused[(M,)](
            dx, dy.contiguous(), dw_part, db_part, x2, w, mean, rstd, locks,
            x2.stride(0), N, BLOCK_SIZE_N=ctx.block, GROUP_SIZE_M=group,
            num_warps=ctx.warps)
        _ln_bwd_dwdb[(triton.cdiv(N, 128),)](dw_part, db_part, dw, db,
                                             min(group, M), N,
                                             BLOCK_SIZE_M=32,
                                             BLOCK_SIZE_N=128)
        return dx, dw, db, None


def triton_layer_norm(x, w, b, eps):
    """y of the tutorial's LayerNorm; differentiable in x, w and b."""
    return TritonLayerNorm.apply(x, w, b, eps)


def eager_layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def ref_layer_norm(x, w, b, eps, dy=None):
    """float64 y, or with dy the gradients (dx, dw, db) of sum(dy y)."""
    x, w, b = (t.detach().double().requires_grad_() for t in (x, w, b))
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)
    if dy is None:
        return y.detach()
    y.backward(dy.double())
    return x.grad, w.grad, b.grad


# ---------------------------------------------------------------------------
# Launch overhead: y = a * x + y on 1024 elements, nothing else.

@triton.jit
def _axpy(X, Y, a, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < N)
    y = tl.load(Y + i, mask=i < N)
    tl.store(Y + i, a * x + y, mask=i < N)


def triton_axpy(x, y, a):
    n = x.numel()
    _axpy[(triton.cdiv(n, 1024),)](x, y, a, n, BLOCK=1024, num_warps=4)
    return y


def ref_attention(q, k, v, causal, scale):
    q, k, v = (x.double() for x in (q, k, v))
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        n = q.shape[-2]
        above = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(above, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def ref_attention_gqa(q, k, v, causal, scale):
    """q [Z, H, M, D], k and v [Z, HKV, N, D] with H a multiple of HKV (query
    head h reads K/V head h // (H // HKV)); causal aligned bottom-right:
    query i sees keys j <= i + N - M, and a query with none gives 0."""
    q, k, v = (x.double() for x in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        m, n = q.shape[-2], k.shape[-2]
        keep = torch.ones(m, n, dtype=torch.bool, device=q.device).tril(n - m)
        s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, dim=-1).nan_to_num(0.0) @ v


def ref_attention_varlen(q, k, v, bounds, causal, scale):
    """Packed sequences (q [T, H, D], k and v [T, HKV, D]) one by one;
    `bounds` the cu_seqlens as Python ints. Rows in no sequence are 0."""
    o = torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    for s0, s1 in zip(bounds[:-1], bounds[1:]):
        if s1 > s0:
            qs, ks, vs = (x[s0:s1].transpose(0, 1)[None] for x in (q, k, v))
            o[s0:s1] = ref_attention_gqa(qs, ks, vs, causal,
                                         scale)[0].transpose(0, 1)
    return o


def ref_attention_paged(q, k_cache, v_cache, block_table, seq_lens, scale):
    """Paged decode (see triton_paged_decode), one sequence at a time."""
    B, H, D = q.shape
    page, hkv = k_cache.shape[1], k_cache.shape[2]
    o = torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    for b in range(B):
        n = int(seq_lens[b])
        if n == 0:
            continue
        pages = block_table[b, :-(-n // page)].long()
        k = k_cache[pages].reshape(-1, hkv, D)[:n].transpose(0, 1)[None]
        v = v_cache[pages].reshape(-1, hkv, D)[:n].transpose(0, 1)[None]
        o[b] = ref_attention_gqa(q[b][None, :, None, :], k, v, False,
                                 scale)[0, :, 0, :]
    return o


def ref_rotary(x, cos, sin, interleaved=False):
    half = cos.shape[-1]
    T = x.shape[1]
    i = torch.arange(half, device=x.device)
    i1, i2 = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
    c = cos[:T, None, :].double()
    s = sin[:T, None, :].double()
    out = x.to(torch.float64, copy=True)
    x1, x2 = out[..., i1], out[..., i2]
    out[..., i1] = x1 * c - x2 * s
    out[..., i2] = x2 * c + x1 * s
    return out


def ref_linear_attention(q, k, v, scale):
    q, k, v = (x.double().transpose(1, 2) for x in (q, k, v))
    T = q.shape[2]
    keep = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    a = (q @ k.transpose(-1, -2)).masked_fill(~keep, 0) * scale
    return (a @ v).transpose(1, 2)


def ref_matmul(a, b):
    return a.double() @ b.double()


def ref_rmsnorm(x, w, eps):
    xd = x.double()
    return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * w.double()


def rel_l2(out, ref):
    """||out - ref|| / ||ref||, in float64."""
    ref = ref.to(device=out.device, dtype=torch.float64)
    return ((out.double() - ref).norm() / ref.norm()).item()
