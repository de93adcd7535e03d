#!/usr/bin/env bash
# SIGTERM at start-up against the container image, node as PID 1: the image's entry point (flags on
# node's command line, no restart) beside the daemon restarting itself with them (the entry point
# before: `node dist/src/cli/main.js`). Each run: start the container, wait DELAY, send SIGTERM,
# wait up to 8 s for it to end. Prints, per entry point, how many runs exited 0 and how many were still
# running (the signal ignored: PID 1 has no default actions, so it would wait out the stop timeout).
#
#   IMAGE=localhost/sitehost-exporter:ci bash scripts/bench/image-sigterm-sweep.sh
#
# Build the image first (bash scripts/ci/image.sh). Needs podman and runc; no network beyond loopback.
set -uo pipefail
IMAGE="${IMAGE:-localhost/sitehost-exporter:ci}"
RUNTIME="$(command -v "${IMAGE_RUNTIME:-runc}")"
nofile="$(ulimit -Hn)"
{ [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; } && nofile=65536
nproc="$(ulimit -Hu)"
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ]; } && nproc=4096
DELAYS="${DELAYS:-0 0.025 0.05 0.075 0.1 0.125 0.15 0.175 0.2 0.25 0.3}"
ROUNDS="${ROUNDS:-2}"

sweep() {
  local how="$1" extra=() cid code port
  [ "$how" = restarting ] && extra=(--entrypoint '["node","dist/src/cli/main.js"]' -e SITEHOST_NODE_FLAGS_PRESET=)
  for _ in $(seq 1 "$ROUNDS"); do
    for delay in $DELAYS; do
      port=$((20000 + RANDOM % 20000))
      cid="$(podman run -d --runtime "$RUNTIME" --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" \
        --health-interval disable --network host "${extra[@]}" \
        -e SITEHOST_CLIENT_ID=sigterm-sweep -e SITEHOST_CLIENT_SECRET=sigterm-sweep-secret \
        -e SITEHOST_API_URL=http://127.0.0.1:9 -e "SITEHOST_LISTEN_ADDRESS=127.0.0.1:$port" \
        -e SITEHOST_CHECKPOINT_DIR=/tmp/checkpoints "$IMAGE" run 2>/dev/null)" || { echo "podman run failed" >&2; exit 1; }
      sleep "$delay"
      podman kill --signal TERM "$cid" >/dev/null 2>&1
      code="$(timeout 8 podman wait "$cid" 2>/dev/null || echo "still-running")"
      echo "$how $code"
      podman rm -f -t 0 "$cid" >/dev/null 2>&1
    done
  done
}

for how in image-entry-point restarting; do sweep "$how"; done | sort | uniq -c
