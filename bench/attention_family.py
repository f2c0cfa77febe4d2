"""bench/run.py's attention_family section: kernels/attention_gqa.tile,
attention_varlen.tile and attention_paged.tile (their sm_90a builds that
scripts/gpu/stage-kernels.sh stages for the GPU checks) beside SDPA (cuDNN,
flash), the Triton kernels of bench/baselines.py, per-sequence SDPA for
varlen and gather-then-SDPA for paged decode. Every peer is checked against
float64 first, and every timed output against Tegula's.
"""
import os
import traceback

import torch

import baselines

# run.py's helpers, set by section(): timing, recording and checking.
time_cuda = record = checked = None


def family_dir(tile):
    """The attention family's bundles: the checked sm_90a configurations
    that scripts/gpu/stage-kernels.sh compiles (STAGE/kernels), as an
    absolute path, which Tegula.run's join keeps as it is."""
    return os.path.abspath(os.path.join(tile.bundles, "..", "kernels"))


def gqa_bundle(tile, kernel, causal=""):
    """attention_gqa.tile's staged bundles, one directory per kernel."""
    name = {"attention_gqa": "attn-gqa", "attention_gqa_decode":
            "attn-gqa-decode", "attention_gqa_decode_split": "attn-gqa-split",
            "attention_combine": "attn-combine"}[kernel]
    return os.path.join(family_dir(tile), f"{name}{causal}-sm_90a",
                        f"{kernel}.json")


def bench_bundle(config, kernel):
    """A swept bundle of bench/stage.sh (STAGE/bench, bench/tuning/sweeps.sh):
    GQA prefill and decode and varlen at their tuned sm_90a blocks rather
    than the checked defaults, which must also suit sm_80. Relative:
    Tegula.run joins it to the bench directory."""
    return os.path.join(config, f"{kernel}.json")


def sdpa_gqa(backend, q, k, v):
    """(label, fn(causal, scale)) for SDPA with one backend on grouped K/V:
    enable_gqa=True where this torch and backend take it, else K/V repeated
    to H heads once, outside the timed calls (the peer's best case)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    which = {"cudnn": SDPBackend.CUDNN_ATTENTION,
             "flash": SDPBackend.FLASH_ATTENTION}[backend]
    sdpa_fn = torch.nn.functional.scaled_dot_product_attention

    def gqa(causal, scale):
        with sdpa_kernel(which):
            return sdpa_fn(q, k, v, is_causal=causal, scale=scale,
                           enable_gqa=True)
    try:
        gqa(False, 1.0)
        return f"sdpa-{backend}", gqa
    except Exception as e:  # older torch, or the backend refuses GQA
        print(f"  sdpa-{backend} enable_gqa: {type(e).__name__}: "
              f"{str(e)[:120]}; repeating K/V", flush=True)
    rep = q.shape[1] // k.shape[1]
    kr, vr = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)

    def repeated(causal, scale):
        with sdpa_kernel(which):
            return sdpa_fn(q, kr, vr, is_causal=causal, scale=scale)
    return f"sdpa-{backend}-repeat-kv", repeated


def time_peer(rows, checks, work, name, fn, ours, shape, tol=1e-2, **rate):
    """Checks a peer against Tegula's output, then times it; a peer that
    cannot run this shape (no kernel for it) is reported and skipped."""
    try:
        out = fn()
    except Exception as e:
        print(f"  {name}: skipped ({type(e).__name__}: {str(e)[:160]})",
              flush=True)
        return
    checked(f"{work} {name} vs tegula {shape}", out, ours, tol, checks)
    record(rows, work, name, shape, time_cuda(fn), **rate)


def family_gqa(tile, rows, checks):
    """Separate query/key lengths and grouped K/V heads: prefill (M = N) and
    decode (M = 1 against a long cache)."""
    g = torch.Generator(device="cuda").manual_seed(7)

    def inputs(z, h, hkv, m, n, d=128):
        q = torch.randn(z, h, m, d, device="cuda", generator=g,
                        dtype=torch.bfloat16)
        k, v = (torch.randn(z, hkv, n, d, device="cuda", generator=g,
                            dtype=torch.bfloat16) for _ in range(2))
        return q, k, v

    # Tegula against float64 at ragged sizes, M != N (bottom-right causal);
    # the peers at M == N (SDPA's is_causal is aligned top-left).
    for causal in (False, True):
        c = "-causal" if causal else ""
        for kernel, m in (("attention_gqa", 77), ("attention_gqa_decode", 3)):
            q, k, v = inputs(1, 8, 2, m, 333)
            bundle = (bench_bundle(f"attn-gqa{c}", kernel)
                      if kernel == "attention_gqa" else
                      gqa_bundle(tile, kernel, c))
            outs, _ = tile.run(bundle, dict(Z=1, H=8, HKV=2, M=m, N=333),
                               dict(q=q, k=k, v=v), ["o"], dict(scale=0.088),
                               bench=False)
            checked(f"gqa tegula {kernel} M={m} N=333 causal={causal} vs "
                    "float64", outs["o"],
                    baselines.ref_attention_gqa(q, k, v, causal, 0.088), 1e-2,
                    checks)
        # Split-KV decode (3 chunks, M = 3) merged by attention_combine.
        q, k, v = inputs(1, 8, 2, 3, 333)
        parts, _ = tile.run(gqa_bundle(tile, "attention_gqa_decode_split", c),
                            dict(Z=1, H=8, HKV=2, M=3, N=333, SPLITS=3),
                            dict(q=q, k=k, v=v), ["o_part", "lse_part"],
                            dict(scale=0.088), bench=False)
        outs, _ = tile.run(gqa_bundle(tile, "attention_combine"),
                           dict(Z=1, H=8, M=3, SPLITS=3), parts, ["o"],
                           bench=False)
        checked(f"gqa tegula split+combine M=3 N=333 causal={causal} vs "
                "float64", outs["o"],
                baselines.ref_attention_gqa(q, k, v, causal, 0.088), 1e-2,
                checks)
        q, k, v = inputs(1, 8, 2, 333, 333)
        ref = baselines.ref_attention_gqa(q, k, v, causal, 0.088)
        for backend in ("cudnn", "flash"):
            try:
                name, fn = sdpa_gqa(backend, q, k, v)
                checked(f"gqa {name} N=333 causal={causal} vs float64",
                        fn(causal, 0.088), ref, 1e-2, checks)
            except Exception as e:
                print(f"  sdpa-{backend}: skipped ({e})", flush=True)

    # Prefill: Z=4, H=32, HKV=8, M=N=4096, d128.
    z, h, hkv, n, d = 4, 32, 8, 4096, 128
    q, k, v = inputs(z, h, hkv, n, n)
    rep = h // hkv
    kr, vr = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    for causal in (False, True):
        shape = dict(Z=z, H=h, HKV=hkv, M=n, N=n, D=d, causal=causal)
        print(f"gqa {shape}", flush=True)
        flops = 4 * z * h * n * n * d // (2 if causal else 1)
        outs, ms = tile.run(bench_bundle("attn-gqa-causal" if causal
                                         else "attn-gqa", "attention_gqa"),
                            dict(Z=z, H=h, HKV=hkv, M=n, N=n),
                            dict(q=q, k=k, v=v), ["o"], dict(scale=d ** -0.5))
        ours = outs["o"]
        record(rows, "attention_gqa", "tegula", shape, ms, flops=flops,
               config=tile.last_config)
        for backend in ("cudnn", "flash"):
            name, fn = sdpa_gqa(backend, q, k, v)
            time_peer(rows, checks, "attention_gqa", name,
                      lambda: fn(causal, d ** -0.5), ours, shape, flops=flops)
        time_peer(rows, checks, "attention_gqa", "triton-repeat-kv",
                  lambda: baselines.triton_attention(q, kr, vr, causal,
                                                     d ** -0.5),
                  ours, shape, flops=flops)
    del q, k, v, kr, vr, ours

    # Decode: Z=16, H=32, HKV=8, M=1 against N=8192 keys (non-causal: with
    # M = 1 a bottom-right causal mask hides nothing).
    z, m, n = 16, 1, 8192
    q, k, v = inputs(z, h, hkv, m, n)
    shape = dict(Z=z, H=h, HKV=hkv, M=m, N=n, D=d, causal=False)
    print(f"gqa decode {shape}", flush=True)
    flops = 4 * z * h * m * n * d
    nbytes = 2 * (2 * z * hkv * n * d + 2 * z * h * m * d)
    dims = dict(Z=z, H=h, HKV=hkv, M=m, N=n)
    outs, ms = tile.run(bench_bundle("attn-gqa-decode", "attention_gqa_decode"),
                        dims, dict(q=q, k=k, v=v), ["o"],
                        dict(scale=d ** -0.5))
    ours = outs["o"]
    record(rows, "attention_gqa_decode", "tegula", shape, ms, flops=flops,
           nbytes=nbytes, config=tile.last_config)
    # The same shape through attention_gqa: one program per query head.
    outs, ms = tile.run(gqa_bundle(tile, "attention_gqa"), dims,
                        dict(q=q, k=k, v=v), ["o"], dict(scale=d ** -0.5))
    checked(f"gqa decode tegula-per-head vs tegula {shape}", outs["o"], ours,
            1e-2, checks)
    record(rows, "attention_gqa_decode", "tegula-per-head", shape, ms,
           flops=flops, nbytes=nbytes)
    # Split-KV: attention_gqa_decode_split over SPLITS chunks of the keys,
    # then attention_combine; both launches timed together.
    splits = 8
    split_k = tile.kernel(gqa_bundle(tile, "attention_gqa_decode_split"))
    combine_k = tile.kernel(gqa_bundle(tile, "attention_combine"))
    o_part = torch.full((z, h, m, splits, d), float("nan"), device="cuda")
    lse_part = torch.full((z, h, m, splits), float("nan"), device="cuda")
    o_split = torch.full_like(q, float("nan"))

    def split_decode():
        split_k(q=q, k=k, v=v, o_part=o_part, lse_part=lse_part,
                scale=d ** -0.5, dims=dict(dims, SPLITS=splits))
        combine_k(o_part=o_part, lse_part=lse_part, o=o_split,
                  dims=dict(Z=z, H=h, M=m, SPLITS=splits))
        return o_split
    time_peer(rows, checks, "attention_gqa_decode", f"tegula-split{splits}",
              split_decode, ours, shape, flops=flops, nbytes=nbytes)
    for backend in ("cudnn", "flash"):
        name, fn = sdpa_gqa(backend, q, k, v)
        time_peer(rows, checks, "attention_gqa_decode", name,
                  lambda: fn(False, d ** -0.5), ours, shape, flops=flops,
                  nbytes=nbytes)
    del q, k, v, ours, o_part, lse_part, o_split


def family_varlen(tile, rows, checks):
    """Packed sequences of mixed lengths (cu_seqlens) against one SDPA call
    per sequence (K/V repeated to H heads where grouped)."""
    g = torch.Generator(device="cuda").manual_seed(8)

    def inputs(bounds, h, hkv, d=128):
        t = bounds[-1]
        q = torch.randn(t, h, d, device="cuda", generator=g,
                        dtype=torch.bfloat16)
        k, v = (torch.randn(t, hkv, d, device="cuda", generator=g,
                            dtype=torch.bfloat16) for _ in range(2))
        cu = torch.tensor(bounds, dtype=torch.int32, device="cuda")
        return q, k, v, cu

    def run(bounds, h, hkv, causal, bench):
        q, k, v, cu = inputs(bounds, h, hkv)
        lens = [b - a for a, b in zip(bounds[:-1], bounds[1:])]
        outs, ms = tile.run(bench_bundle("attn-varlen-causal" if causal
                                         else "attn-varlen",
                                         "attention_varlen"),
                            dict(T=bounds[-1], H=h, HKV=hkv, S=len(bounds)),
                            dict(q=q, k=k, v=v, cu_seqlens=cu), ["o"],
                            dict(max_seqlen=max(lens), scale=128 ** -0.5),
                            bench=bench)
        return q, k, v, outs["o"], ms, lens

    # float64 first, at ragged lengths (an empty sequence included).
    bounds = [0, 1, 66, 66, 140, 203, 1000]
    for causal in (False, True):
        q, k, v, ours, _, _ = run(bounds, 8, 2, causal, False)
        ref = baselines.ref_attention_varlen(q, k, v, bounds, causal,
                                             128 ** -0.5)
        checked(f"varlen tegula causal={causal} {bounds} vs float64", ours,
                ref, 1e-2, checks)
        checked(f"varlen sdpa-per-sequence causal={causal} vs float64",
                baselines.sdpa_varlen(q, k, v, bounds, causal, 128 ** -0.5),
                ref, 1e-2, checks)
    # 16384 tokens in 12 sequences of 256 to 3000 rows; H=32 over HKV=8.
    lens = [3000, 256, 1800, 700, 2048, 333, 1024, 2500, 512, 1111, 1500]
    lens.append(16384 - sum(lens))
    bounds = [0]
    for n in lens:
        bounds.append(bounds[-1] + n)
    h, hkv, d = 32, 8, 128
    for causal in (False, True):
        flops = sum(4 * h * n * n * d // (2 if causal else 1) for n in lens)
        shape = dict(T=bounds[-1], B=len(lens), H=h, HKV=hkv, D=d,
                     max_seqlen=max(lens), causal=causal)
        print(f"varlen {shape}", flush=True)
        q, k, v, ours, ms, _ = run(bounds, h, hkv, causal, True)
        record(rows, "attention_varlen", "tegula", shape, ms, flops=flops,
               config=tile.last_config)
        # K/V repeated to H heads once, outside the timing (the peer's best
        # case; SDPA's default backend choice for each call).
        kr, vr = (x.repeat_interleave(h // hkv, 1) for x in (k, v))
        time_peer(rows, checks, "attention_varlen", "sdpa-per-sequence",
                  lambda: baselines.sdpa_varlen(q, kr, vr, bounds, causal,
                                                d ** -0.5),
                  ours, shape, flops=flops)
        del q, k, v, kr, vr, ours


def paged_inputs(g, lens, page, h, hkv, d=128):
    """q, caches with each sequence's pages scattered at random over the
    pool, the block table (entries past a sequence's pages point at page
    0, which gather-then-SDPA reads and masks) and the lengths."""
    b = len(lens)
    used = [-(-n // page) for n in lens]
    num_pages = sum(used) + 7
    max_pages = max(max(used), 1)
    perm = torch.randperm(num_pages, device="cuda", generator=g)
    table = torch.zeros(b, max_pages, dtype=torch.int32, device="cuda")
    at = 0
    for i, n in enumerate(used):
        table[i, :n] = perm[at:at + n].to(torch.int32)
        at += n
    q = torch.randn(b, h, d, device="cuda", generator=g, dtype=torch.bfloat16)
    k_cache, v_cache = (torch.randn(num_pages, page, hkv, d, device="cuda",
                                    generator=g, dtype=torch.bfloat16)
                        for _ in range(2))
    seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    return q, k_cache, v_cache, table, seq_lens


def family_paged(tile, rows, checks):
    """Paged-KV decode (one query per sequence) against gather-then-SDPA
    and the Triton paged kernel of bench/baselines.py."""
    g = torch.Generator(device="cuda").manual_seed(9)
    h, hkv, d = 32, 8, 128
    scale = d ** -0.5

    def run(page, lens, bench):
        q, kc, vc, table, seq_lens = paged_inputs(g, lens, page, h, hkv, d)
        dims = dict(B=len(lens), H=h, HKV=hkv, NUM_PAGES=kc.shape[0],
                    MAX_PAGES=table.shape[1])
        cfg = os.path.join(family_dir(tile), f"attn-paged-p{page}-sm_90a")
        flat_cfg = os.path.join(family_dir(tile),
                                f"attn-paged-flat-p{page}-sm_90a")
        outs, ms = tile.run(
            f"{cfg}/attention_paged.json", dims,
            dict(q=q, k_cache=kc, v_cache=vc, block_table=table,
                 seq_lens=seq_lens), ["o"], dict(scale=scale), bench=bench)
        # The same caches seen flat: blocks of 64 keys gathered across pages.
        dims = dict(dims, SLOTS=kc.shape[0] * page)
        del dims["NUM_PAGES"]
        flat, flat_ms = tile.run(
            f"{flat_cfg}/attention_paged_flat.json", dims,
            dict(q=q, k_cache=kc.view(-1, hkv, d), v_cache=vc.view(-1, hkv, d),
                 block_table=table, seq_lens=seq_lens), ["o"],
            dict(scale=scale), bench=bench)
        return (q, kc, vc, table, seq_lens), outs["o"], ms, flat["o"], flat_ms

    def split_decode(page, args, splits):
        """attention_paged_split then attention_combine, as one callable."""
        q, kc, vc, table, seq_lens = args
        split_k = tile.kernel(os.path.join(
            family_dir(tile), f"attn-paged-split-p{page}-sm_90a",
            "attention_paged_split.json"))
        combine_k = tile.kernel(gqa_bundle(tile, "attention_combine"))
        b = q.shape[0]
        o_part = torch.full((b, h, 1, splits, d), float("nan"), device="cuda")
        lse_part = torch.full((b, h, 1, splits), float("nan"), device="cuda")
        o = torch.full((b, h, 1, d), float("nan"), device="cuda",
                       dtype=q.dtype)
        dims = dict(B=b, H=h, HKV=hkv, SLOTS=kc.shape[0] * page,
                    MAX_PAGES=table.shape[1], SPLITS=splits)

        def run_split():
            split_k(q=q, k_cache=kc.view(-1, hkv, d),
                    v_cache=vc.view(-1, hkv, d), block_table=table,
                    seq_lens=seq_lens, o_part=o_part, lse_part=lse_part,
                    scale=scale, dims=dims)
            combine_k(o_part=o_part, lse_part=lse_part, o=o,
                      dims=dict(Z=b, H=h, M=1, SPLITS=splits))
            return o[:, :, 0, :]
        return run_split

    peers = {"triton": lambda a, n: baselines.triton_paged_decode(*a, scale),
             "gather-sdpa": lambda a, n: baselines.gather_sdpa_paged(
                 *a, scale, max_len=n)}
    # float64 first: ragged lengths (0, 1, mid-page ends) on every page size.
    for page in (16, 64, 256):
        lens = [1, page + 3, 0, 3 * page - 5, 777]
        args, ours, _, flat, _ = run(page, lens, False)
        ref = baselines.ref_attention_paged(*args, scale)
        checked(f"paged tegula PAGE={page} {lens} vs float64", ours, ref,
                1e-2, checks)
        checked(f"paged tegula-flat PAGE={page} {lens} vs float64", flat, ref,
                1e-2, checks)
        checked(f"paged tegula-split3 PAGE={page} {lens} vs float64",
                split_decode(page, args, 3)(), ref, 1e-2, checks)
        for name, fn in peers.items():
            checked(f"paged {name} PAGE={page} vs float64",
                    fn(args, max(lens)), ref, 1e-2, checks)
    # 32 sequences of 1k to 8k keys (4.5k mean), and 4 of 16k to 32k (too
    # few programs without a split); H=32 over HKV=8, d128.
    many = [1024 + (i * 2357) % 7169 for i in range(32)]
    few = [32768, 16384, 27000, 20000]
    for page, lens, splits in ((16, many, 4), (64, many, 4), (256, many, 4),
                               (16, few, 16), (256, few, 16)):
        shape = dict(B=len(lens), H=h, HKV=hkv, D=d, PAGE=page,
                     keys=sum(lens), max_len=max(lens))
        print(f"paged {shape}", flush=True)
        flops = 4 * h * sum(lens) * d
        nbytes = 2 * 2 * sum(lens) * hkv * d
        args, ours, ms, flat, flat_ms = run(page, lens, True)
        record(rows, "attention_paged", "tegula", shape, ms, flops=flops,
               nbytes=nbytes)
        checked(f"paged tegula-flat vs tegula {shape}", flat, ours, 1e-2,
                checks)
        record(rows, "attention_paged", "tegula-flat", shape, flat_ms,
               flops=flops, nbytes=nbytes)
        time_peer(rows, checks, "attention_paged", f"tegula-split{splits}",
                  split_decode(page, args, splits), ours, shape, flops=flops,
                  nbytes=nbytes)
        for name, fn in peers.items():
            time_peer(rows, checks, "attention_paged", name,
                      lambda: fn(args, max(lens)), ours, shape, flops=flops,
                      nbytes=nbytes)
        del args, ours, flat


def section(tile, rows, checks, time_fn, record_fn, checked_fn):
    """Runs the three parts with run.py's helpers; each part reports its
    own failure so the others still run."""
    global time_cuda, record, checked
    time_cuda, record, checked = time_fn, record_fn, checked_fn
    for part in (family_gqa, family_varlen, family_paged):
        try:
            part(tile, rows, checks)
        except Exception:
            traceback.print_exc()
            checks.append({"check": f"attention_family: {part.__name__} "
                           "raised", "rel_l2": float("nan"), "tol": 0,
                           "pass": False})
