#!/usr/bin/env bash
# Builds the real Dockerfile with podman and runs the image the way the docs say to:
# as its non-root user, --read-only, --cap-drop ALL, against the simulator on the host.
# Checks /-/ready and /metrics, the HEALTHCHECK, and that SIGTERM ends it with exit 0
# within the grace period while the OTLP endpoint is down (a closed port) and while
# it accepts connections but never answers. Reports the image size, user and build time.
#
#   bash scripts/ci/image.sh
#
# No registry is reachable in CI, so the Dockerfile's NODE_IMAGE build argument points
# at a base image made here: Debian bookworm from Debian's mirror (mmdebstrap, the
# `essential` package set plus libstdc++6) with the Node binary of the pinned `node`
# devDependency and npm from the npm registry. It is cached in podman's storage under a
# tag naming its inputs; the npm cache of the build is a build cache. On a clean machine
# everything is fetched again (about a minute on top of the build).
#
# Environment: IMAGE_RUNTIME (OCI runtime, default runc: crun cannot set up cgroups in
# some sandboxes), IMAGE_TAG (default localhost/sitehost-exporter:ci).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUNTIME="${IMAGE_RUNTIME:-runc}"
IMAGE="${IMAGE_TAG:-localhost/sitehost-exporter:ci}"
NPM_VERSION="11.21.2"
DEBIAN_SUITE="bookworm"
# Bump when the base recipe below changes, so a cached base is not reused.
BASE_RECIPE="1"
# The grace period the docs give `docker run --stop-timeout`: logs.shutdownTimeout (10s) + 20s.
STOP_TIMEOUT=30

WORK="$(mktemp -d)"
CONTAINERS=()
SIM_PID=""
HANG_PID=""
cleanup() {
  local c
  for c in "${CONTAINERS[@]}"; do podman rm -f "$c" >/dev/null 2>&1 || true; done
  [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
  [ -n "$HANG_PID" ] && kill "$HANG_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "image.sh: FAIL: $*" >&2
  [ -s "$WORK/sim.log" ] && { echo "--- simulator log (tail):" >&2; tail -n 10 "$WORK/sim.log" >&2; }
  exit 1
}
elapsed() { echo $(($(date +%s) - $1)); }
for tool in podman runc mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (apt-get install podman runc mmdebstrap)"
done

# Explicit limits: the runtime's defaults may exceed what this machine allows.
nofile="$(ulimit -Hn)"
[ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
nproc="$(ulimit -Hu)"
[ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
ENGINE_ARGS=(--runtime "$RUNTIME")
LIMITS=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

NODE_BIN="$(cd "$ROOT" && npx --no-install node -p process.execPath 2>/dev/null)" || fail "the pinned node is missing (npm ci first)"
NODE_VERSION="$("$NODE_BIN" --version)"
node() { "$NODE_BIN" "$@"; }

# ---- base image: Debian packages + the pinned Node binary + npm ---------------------
BASE="localhost/sitehost-exporter-base:node${NODE_VERSION#v}-npm${NPM_VERSION}-${DEBIAN_SUITE}-r${BASE_RECIPE}"
t0="$(date +%s)"
if podman image exists "$BASE"; then
  echo "--- base image $BASE (cached)"
else
  echo "--- base image $BASE: mmdebstrap $DEBIAN_SUITE, node $NODE_VERSION, npm $NPM_VERSION"
  mkdir -p "$WORK/base/npm"
  mmdebstrap --variant=essential --include=libstdc++6 \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    "$DEBIAN_SUITE" "$WORK/base/rootfs.tar" \
    "deb http://deb.debian.org/debian $DEBIAN_SUITE main" \
    "deb http://deb.debian.org/debian $DEBIAN_SUITE-updates main" \
    "deb http://deb.debian.org/debian-security $DEBIAN_SUITE-security main" \
    >"$WORK/mmdebstrap.log" 2>&1 || { tail -n 20 "$WORK/mmdebstrap.log" >&2; fail "mmdebstrap"; }
  cp "$NODE_BIN" "$WORK/base/node"
  tgz="$(cd "$WORK/base" && npm pack --silent "npm@$NPM_VERSION" 2>/dev/null | tail -n1)"
  [ -f "$WORK/base/$tgz" ] || fail "npm pack npm@$NPM_VERSION"
  tar -xzf "$WORK/base/$tgz" -C "$WORK/base/npm" --strip-components=1
  rm "$WORK/base/$tgz"
  cat >"$WORK/base/Containerfile" <<EOF
FROM scratch
ADD rootfs.tar /
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node --version && npm --version
ENV NODE_VERSION=${NODE_VERSION#v}
CMD ["node"]
EOF
  podman build "${ENGINE_ARGS[@]}" "${LIMITS[@]}" --network host --format docker --layers=false \
    -t "$BASE" "$WORK/base" >"$WORK/base-build.log" 2>&1 || { tail -n 20 "$WORK/base-build.log" >&2; fail "base image build"; }
  rm -rf "$WORK/base"
fi
base_seconds="$(elapsed "$t0")"

# ---- npm registry settings as build secrets ------------------------------------------
# The registry this machine's npm uses, its CA file and auth lines: mounted into the npm ci
# steps only (RUN --mount=type=secret), never written into a layer, never printed. Asked of
# the machine's own npm (its global npmrc belongs to its own node).
mkdir -m 700 "$WORK/secrets"
npm_get() { local v; v="$(npm config get "$1" 2>/dev/null)"; [ "$v" = null ] || [ "$v" = undefined ] || printf '%s' "$v"; }
{
  printf 'registry=%s\n' "$(npm_get registry)"
  for key in proxy https-proxy noproxy strict-ssl; do
    v="$(npm_get "$key")"
    [ -n "$v" ] && printf '%s=%s\n' "$key" "$v"
  done
  userconfig="$(npm_get userconfig)"
  [ -f "$userconfig" ] && grep -E '^[[:space:]]*//' "$userconfig" || true
} >"$WORK/secrets/npmrc"
SECRET_ARGS=(--secret "id=npmrc,src=$WORK/secrets/npmrc")
cafile="$(npm_get cafile)"
if [ -n "$cafile" ] && [ -f "$cafile" ]; then
  cp "$cafile" "$WORK/secrets/npm_ca"
  echo "cafile=/run/secrets/npm_ca" >>"$WORK/secrets/npmrc"
  SECRET_ARGS+=(--secret "id=npm_ca,src=$WORK/secrets/npm_ca")
fi

# ---- the image -------------------------------------------------------------------------
echo "--- podman build (Dockerfile, NODE_IMAGE=$BASE)"
t1="$(date +%s)"
previous="$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
podman build "${ENGINE_ARGS[@]}" "${LIMITS[@]}" --network host --format docker \
  "${SECRET_ARGS[@]}" \
  --build-arg "NODE_IMAGE=$BASE" \
  --build-arg "VERSION=$(node -p 'require(process.argv[1]).version' "$ROOT/package.json")" \
  --build-arg "REVISION=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)" \
  -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT" >"$WORK/build.log" 2>&1 || { tail -n 30 "$WORK/build.log" >&2; fail "podman build"; }
build_seconds="$(elapsed "$t1")"
# The image this tag named before, if nothing else uses it (the stages stay as build cache).
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect --format '{{.Id}}' "$IMAGE")" ]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi
rm -rf "$WORK/secrets"

user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
size="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
stopsignal="$(podman image inspect --format '{{.Config.StopSignal}}' "$IMAGE")"
health="$(podman image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE")"
[ "$user" = "65532:65532" ] || fail "image user is '$user', want 65532:65532"
[ "$stopsignal" = SIGTERM ] || fail "image STOPSIGNAL is '$stopsignal', want SIGTERM"
grep -q '/-/healthy' <<<"$health" || fail "the image has no HEALTHCHECK (--format docker keeps it): $health"
mnt="$(podman image mount "$IMAGE")"
for leaked in root/.npmrc run/secrets/npmrc run/secrets/npm_ca; do
  [ ! -e "$mnt/$leaked" ] || { podman image unmount "$IMAGE" >/dev/null; fail "/$leaked is in the image"; }
done
# The image's SBOM lists what its node_modules hold; no source map without its source.
sbom="$(node "$ROOT/scripts/ci/check-sbom.mjs" "$mnt/usr/share/doc/sitehost-exporter/sbom.cdx.json" prom-client undici zod pino 2>&1)" &&
  sbom_ok=0 || sbom_ok=$?
maps="$(find "$mnt/app/dist" -name '*.map' | head -3)"
podman image unmount "$IMAGE" >/dev/null
[ "$sbom_ok" = 0 ] || fail "the image's SBOM (/usr/share/doc/sitehost-exporter/sbom.cdx.json): $sbom"
[ -z "$maps" ] || fail "the image carries source maps without their sources: $maps"
echo "    image $IMAGE: $((size / 1000000)) MB, user $user, STOPSIGNAL $stopsignal, HEALTHCHECK kept, no npm secrets, SBOM ($sbom), no source maps"

# ---- the simulator on the host ------------------------------------------------------------
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_get() { node -e 'fetch(process.argv[1]).then(async r=>{const t=await r.text();process.stdout.write(t,()=>process.exit(r.ok?0:1))}).catch(()=>process.exit(1))' "$1"; }
(cd "$ROOT" && [ -f dist/src/cli/main.js ]) || (cd "$ROOT" && npx --no-install tsc -p tsconfig.json) || fail "build"
"$NODE_BIN" "$ROOT/dist/src/cli/main.js" simulate --port "$(free_port)" --sites 4 --seed 5 >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 100); do
  grep -q '^SITEHOST_CLIENT_SECRET=' "$WORK/sim.log" 2>/dev/null && break
  kill -0 "$SIM_PID" 2>/dev/null || fail "the simulator exited"
  sleep 0.2
done
sim_var() { sed -n "s/^$1=//p" "$WORK/sim.log" | head -n1; }
[ -n "$(sim_var SITEHOST_CLIENT_SECRET)" ] || fail "the simulator printed no credentials"
# Readable by the image's user only through its group, as the docs recommend.
printf '%s' "$(sim_var SITEHOST_CLIENT_SECRET)" >"$WORK/client-secret"
chown 65532:65532 "$WORK/client-secret" && chmod 0440 "$WORK/client-secret"
cat >"$WORK/config.yaml" <<'YAML'
logs:
  startFrom: -10m
  pollInterval: 2s
YAML
chmod 0444 "$WORK/config.yaml"

# A "collector" that accepts connections and never answers.
HANG_PORT="$(free_port)"
"$NODE_BIN" -e 'require("net").createServer(()=>{}).listen(Number(process.argv[1]),"127.0.0.1")' "$HANG_PORT" &
HANG_PID=$!

# run_case name otlp-endpoint: start, check, SIGTERM, expect exit 0 within STOP_TIMEOUT.
run_case() {
  local name="$1" endpoint="$2" port ckpt cid ready=0 metrics started stopped code
  port="$(free_port)"
  ckpt="$WORK/checkpoints-$name"
  mkdir -p "$ckpt" && chown 65532:65532 "$ckpt"
  cid="sitehost-exporter-ci-$name-$$"
  CONTAINERS+=("$cid")
  echo "--- run ($name): --read-only --cap-drop ALL, OTLP endpoint $endpoint"
  # No systemd here to time health checks (podman complains on stderr, kept in engine.log): the
  # HEALTHCHECK is run by hand below.
  podman run -d --name "$cid" "${ENGINE_ARGS[@]}" "${LIMITS[@]}" --network host --health-interval disable \
    --read-only --cap-drop ALL --security-opt no-new-privileges \
    -v "$ckpt:/var/lib/sitehost-exporter" \
    -v "$WORK/config.yaml:/etc/sitehost-exporter/config.yaml:ro" \
    -v "$WORK/client-secret:/run/secrets/sitehost-client-secret:ro" \
    -e "SITEHOST_API_URL=$(sim_var SITEHOST_API_URL)" -e "SITEHOST_AUTH_URL=$(sim_var SITEHOST_AUTH_URL)" \
    -e "SITEHOST_CLIENT_ID=$(sim_var SITEHOST_CLIENT_ID)" \
    -e SITEHOST_CLIENT_SECRET_FILE=/run/secrets/sitehost-client-secret \
    -e "SITEHOST_LISTEN_ADDRESS=127.0.0.1:$port" \
    -e "OTEL_EXPORTER_OTLP_ENDPOINT=$endpoint" \
    "$IMAGE" run --config /etc/sitehost-exporter/config.yaml >/dev/null 2>>"$WORK/engine.log" ||
    { tail -n 5 "$WORK/engine.log" >&2; fail "podman run ($name)"; }
  for _ in $(seq 1 120); do
    [ "$(podman inspect --format '{{.State.Running}}' "$cid")" = true ] || {
      podman logs "$cid" 2>&1 | tail -n 20 >&2
      fail "the container exited ($name)"
    }
    if http_get "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then ready=1 && break; fi
    sleep 0.5
  done
  [ "$ready" = 1 ] || { podman logs "$cid" 2>&1 | tail -n 20 >&2; fail "/-/ready not 200 within 60 s ($name)"; }
  metrics="$(http_get "http://127.0.0.1:$port/metrics")" || fail "GET /metrics ($name)"
  grep -Eq '^sitehost_up(\{\})? 1$' <<<"$metrics" || fail "no 'sitehost_up 1' ($name)"
  grep -q '^sitehost_site_info{' <<<"$metrics" || fail "no sitehost_site_info ($name)"
  grep -q '^sitehost_exporter_checkpoint_lock_held 1$' <<<"$metrics" || fail "the exporter does not hold its checkpoint lock ($name)"
  [ "$(podman exec "$cid" node -p 'process.getuid()+":"+process.getgid()')" = "65532:65532" ] || fail "not running as 65532 ($name)"
  grep -q '^CapEff:[[:space:]]*0*$' <<<"$(podman exec "$cid" cat /proc/1/status)" || fail "the process has capabilities ($name)"
  if podman exec "$cid" node -e 'require("fs").writeFileSync("/app/x", "")' 2>/dev/null; then fail "the root filesystem is writable ($name)"; fi
  # Node.js started once, with the entry point's flags: no re-execution (it would set SITEHOST_NODE_FLAGS_APPLIED).
  local started_as
  started_as="$(podman exec "$cid" node -e '
    const fs = require("fs");
    const env = fs.readFileSync("/proc/1/environ", "utf8").split("\0");
    const argv = fs.readFileSync("/proc/1/cmdline", "utf8").split("\0");
    console.log(env.some((v) => v.startsWith("SITEHOST_NODE_FLAGS_APPLIED=")) ? "re-executed" : "once",
      argv.includes("--heap-growing-percent=40") ? "with-flags" : "without-flags");')"
  [ "$started_as" = "once with-flags" ] || fail "the daemon started as '$started_as', want 'once with-flags' ($name)"
  podman healthcheck run "$cid" >/dev/null 2>&1 || fail "HEALTHCHECK failed on a healthy container ($name)"
  # Logs are being read and the export to the dead endpoint is failing (or hanging) when SIGTERM comes.
  for _ in $(seq 1 60); do
    [ -n "$(ls "$ckpt" | grep -E '^site-.*\.json$' || true)" ] && break
    sleep 0.5
  done
  [ -n "$(ls "$ckpt" | grep -E '^site-.*\.json$' || true)" ] || fail "no checkpoints were written ($name)"
  if [ "$name" = otlp-closed ]; then
    for _ in $(seq 1 40); do
      grep -Eq '^sitehost_exporter_log_export_failures_total\{[^}]*\} [1-9]' <<<"$(http_get "http://127.0.0.1:$port/metrics")" && break
      sleep 0.5
    done
    grep -Eq '^sitehost_exporter_log_export_failures_total\{[^}]*\} [1-9]' <<<"$(http_get "http://127.0.0.1:$port/metrics")" ||
      fail "no failed OTLP export was counted before SIGTERM ($name)"
  else
    sleep 4 # the first export is now waiting on the silent endpoint
  fi
  echo "    ready as uid 65532 without capabilities on a read-only root, started once with the image's V8 flags; /metrics, HEALTHCHECK and checkpoints fine"
  started="$(date +%s%N)"
  podman stop --time "$STOP_TIMEOUT" "$cid" >/dev/null 2>>"$WORK/engine.log"
  stopped="$(date +%s%N)"
  code="$(podman inspect --format '{{.State.ExitCode}}' "$cid")"
  local ms=$(((stopped - started) / 1000000))
  [ "$code" = 0 ] || { podman logs "$cid" 2>&1 | tail -n 20 >&2; fail "exit code $code after SIGTERM ($name)"; }
  [ "$ms" -lt $((STOP_TIMEOUT * 1000)) ] || fail "stopping took ${ms} ms, the grace period is ${STOP_TIMEOUT}s ($name)"
  local logs
  logs="$(podman logs "$cid" 2>&1)"
  grep -q '"released the checkpoint lock"' <<<"$logs" || {
    tail -n 15 <<<"$logs" >&2
    fail "the checkpoint lock was not released ($name)"
  }
  echo "    SIGTERM: exit 0 after $((ms / 1000)).$(((ms % 1000) / 100)) s (grace ${STOP_TIMEOUT}s), checkpoint lock released"
  podman rm "$cid" >/dev/null 2>>"$WORK/engine.log"
}

run_case otlp-closed "http://127.0.0.1:$(free_port)"
run_case otlp-hanging "http://127.0.0.1:$HANG_PORT"

echo "--- image OK: $IMAGE, $((size / 1000000)) MB, user $user; base ${base_seconds}s, build ${build_seconds}s"
