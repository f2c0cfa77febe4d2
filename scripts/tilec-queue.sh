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
  # The cache's pruning and the tools' part of every compile's key, once
  # for the queue (scripts/tilec-cached.sh --prepare).
  local tool_key=""
  [ ! -s "$tilec_queue_file" ] ||
    tool_key=$("$(dirname "${BASH_SOURCE[0]}")/tilec-cached.sh" --prepare) ||
    return
  TEGULA_TILEC_TOOL_KEY=$tool_key \
    xargs -d '\n' -P "$(nproc)" -n 1 bash -c 'eval "$1"' tilec-queue \
    <"$tilec_queue_file"
  : >"$tilec_queue_file"
}
