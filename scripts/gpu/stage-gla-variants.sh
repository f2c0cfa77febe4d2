#!/usr/bin/env bash
# Stages variants of tegula.ops' GLA bundles for a timing comparison on the
# GPU (check-gla-ops.py --variants): the backward's chunk (the states it
# recomputes, [B, T/CHUNK, H, K, V] f32, are written once and read twice,
# so a larger chunk moves less) with spill-free blocks at each chunk.
# Each variant is a bundle root with the ops' names (sm_90a, bf16, the
# bench's head sizes) and a CHUNK file:
#   .device-gla/c16       the shipped builds (CHUNK 16, default blocks)
#   .device-gla/c32, c64  CHUNK 32 / 64, BLOCK_K = BLOCK_V = 32
#   .device-gla/c64v16    CHUNK 64, BLOCK_K = 32, BLOCK_V = 16
# Then carry .device-gla with python/tegula/_bundles.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tilec=${TEGULA_BUILD_DIR:-$root/build}/bin/tilec
stage=$root/.device-gla
rm -rf "$stage"
queue=$(mktemp)
trap 'rm -f "$queue"' EXIT
# build VARIANT NAME FILE KERNEL DEFINES...
build() {
  local dir=$stage/$1/sm_90a/$2 file=$3 kernel=$4
  shift 4
  mkdir -p "$dir"
  echo "$tilec" "$root/kernels/$file" -k "$kernel" --target sm_90a -o "$dir" \
    "$@" >>"$queue"
}
for variant in c16:16: c32:32:32,32 c64:64:32,32 c64v16:64:32,16; do
  IFS=: read -r name chunk blocks <<<"$variant"
  mkdir -p "$stage/$name"
  echo "$chunk" >"$stage/$name/CHUNK"
  bwd_blocks=()
  [ -n "$blocks" ] && bwd_blocks=(-D BLOCK_K="${blocks%,*}" -D BLOCK_V="${blocks#*,}")
  for dims in 64:64 64:128 128:128 256:256; do
    k=${dims%:*} v=${dims#*:}
    fwd_v=()
    [ "$k" = 256 ] && fwd_v=(-D BLOCK_V=16)
    d=(-D K="$k" -D V="$v")
    for kernel in chunk_gla_fwd chunk_gla_states; do
      build "$name" "gla-fwd-k$k-v$v" gla.tile $kernel "${d[@]}" \
        -D CHUNK="$chunk" "${fwd_v[@]}"
    done
    build "$name" "gla-fwd2-k$k-v$v" gla.tile chunk_gla_states "${d[@]}" \
      -D CHUNK=64 "${fwd_v[@]}"
    build "$name" "gla-chunks-k$k-v$v" gla.tile chunk_gla_chunks "${d[@]}" \
      -D CHUNK=64 "${fwd_v[@]}"
    build "$name" "gla-bwd-dh-k$k-v$v" gla_bwd.tile chunk_gla_bwd_dh \
      "${d[@]}" -D CHUNK="$chunk"
    for kernel in chunk_gla_bwd_dqkg chunk_gla_bwd_dv; do
      build "$name" "gla-bwd-k$k-v$v" gla_bwd.tile $kernel "${d[@]}" \
        -D CHUNK="$chunk" "${bwd_blocks[@]}"
    done
  done
done
xargs -P "$(nproc)" -L 1 sh -c '"$0" "$@" >/dev/null' <"$queue"
spills=$(grep -l '"spill_bytes": [1-9]' "$stage"/*/sm_90a/*/*.json || true)
echo "staged $(ls "$stage"/*/sm_90a/*/*.json | grep -vc tuning) GLA variant kernels in $stage${spills:+; SPILLS: $spills}"
