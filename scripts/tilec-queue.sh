# Sourced by the scripts that compile many bundles (scripts/build-ops.sh,
# scripts/gpu/stage-kernels.sh, scripts/gpu/stage-sweeps.sh): independent
# tilec commands queued, then run one per core through
# scripts/tilec-cached.sh, so that a bundle already built by the same tilec
# from the same source is copied instead of compiled again.
#   tilec_queue TILEC-ARGUMENTS...   queues one compile (-o DIR must exist)
#   tilec_run_queue                  runs the queue; fails if any compile
#                                    failed (each one's output is whole)
tilec_queue_file=$(mktemp)
trap 'rm -f "$tilec_queue_file"' EXIT

tilec_queue() {
  printf '%q ' "$(dirname "${BASH_SOURCE[0]}")/tilec-cached.sh" "$@" \
    >>"$tilec_queue_file"
  echo >>"$tilec_queue_file"
}

tilec_run_queue() {
  # Entries unused for three days go first: the cache holds one copy of
  # every build since (tegula.ops' bundles are about 70 MB).
  local scripts cache tool_key=""
  scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  cache=${TEGULA_TILEC_CACHE:-${TEGULA_BUILD_DIR:-$scripts/../build}/tilec-cache}
  [ "$cache" = off ] || [ ! -d "$cache" ] ||
    find "$cache" -mindepth 1 -maxdepth 1 -mtime +3 -exec rm -rf {} +
  # The tools' part of every compile's key, computed once for the queue.
  [ "$cache" = off ] || [ ! -s "$tilec_queue_file" ] ||
    tool_key=$("$scripts/tilec-cached.sh" --tool-key) || return
  TEGULA_TILEC_TOOL_KEY=$tool_key \
    xargs -d '\n' -P "$(nproc)" -n 1 bash -c 'eval "$1"' tilec-queue \
    <"$tilec_queue_file"
  : >"$tilec_queue_file"
}
