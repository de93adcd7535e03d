#!/usr/bin/env bash
# Proves the Dockerfile's steps without a Docker engine: pack the built package,
# install it with production dependencies only into an empty folder, run the
# installed `sitehost-exporter` against the installed simulator, check /-/ready
# and /metrics, the image's HEALTHCHECK command, and a clean exit 0 on SIGTERM.
#
#   bash scripts/ci/package-smoke.sh     (SMOKE_SKIP_BUILD=1 to use dist/ as is)
#   SMOKE_NODE=26 bash scripts/ci/package-smoke.sh   the same under Node.js 26 (scripts/ci/node26.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d)"
SIM_PID=""
DAEMON_PID=""
cleanup() {
  [ -n "$DAEMON_PID" ] && kill -KILL "$DAEMON_PID" 2>/dev/null || true
  [ -n "$SIM_PID" ] && kill -KILL "$SIM_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "package-smoke: FAIL: $*" >&2
  for f in "$WORK"/sim.log "$WORK"/daemon.log; do
    [ -s "$f" ] && { echo "--- last lines of $(basename "$f"):" >&2; tail -n 25 "$f" >&2; }
  done
  exit 1
}

# The project's pinned Node 24 (the `node` devDependency), or Node 26 with SMOKE_NODE=26, first on
# PATH so npm and the installed bin's `#!/usr/bin/env node` use it too. Only node itself comes from
# the repository: the installed package must not reach the repo's node_modules.
want="${SMOKE_NODE:-24}"
case "$want" in
  24) NODE_BIN="$(cd "$ROOT" && npx --no-install node -p process.execPath 2>/dev/null)" || fail "cannot find the pinned node (npm ci first)" ;;
  26) NODE_BIN="$(bash "$ROOT/scripts/ci/node26.sh")" || fail "cannot fetch Node.js 26" ;;
  *) fail "SMOKE_NODE=$want: 24 or 26" ;;
esac
export PATH="$(dirname "$NODE_BIN"):$PATH"
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" = "$want" ] || fail "expected Node $want, got $(node --version)"
echo "--- node $(node --version)"

if [ "${SMOKE_SKIP_BUILD:-0}" != "1" ]; then
  echo "--- build"
  (cd "$ROOT" && npx --no-install tsc -p tsconfig.json) || fail "build failed"
fi
[ -f "$ROOT/dist/src/cli/main.js" ] || fail "dist/src/cli/main.js missing; build first"

echo "--- npm pack"
mkdir -p "$WORK/pack" "$WORK/app"
tarball="$(cd "$ROOT" && npm pack --silent --pack-destination "$WORK/pack" 2>/dev/null | tail -n1)"
tarball="$WORK/pack/$tarball"
[ -f "$tarball" ] || fail "npm pack produced no tarball"
listing="$(tar -tzf "$tarball")"
for want in package/package.json package/bin/sitehost-exporter package/dist/src/cli/main.js package/config/example.yaml \
  package/config/alerts/sitehost-exporter.rules.yaml package/README.md package/CHANGELOG.md; do
  grep -qx "$want" <<<"$listing" || fail "the package lacks ${want#package/} (package.json \"files\")"
done
grep -q '^package/dashboards/.*\.json$' <<<"$listing" || fail "the package has no dashboards/*.json"
unwanted='^package/(test|bench|src|helm|\.tools|node_modules|config/alerts/(src|tests)|dashboards/src)/'
if grep -Eq "$unwanted" <<<"$listing"; then
  fail "the package ships files it should not: $(grep -E "$unwanted" <<<"$listing" | head -3 | tr '\n' ' ')"
fi
# Source maps point at TypeScript sources the package does not carry: none shipped.
! grep -q '\.map$' <<<"$listing" || fail "the package ships source maps without their sources: $(grep '\.map$' <<<"$listing" | head -3 | tr '\n' ' ')"
# The metadata npm, provenance and registries read.
tar -xzOf "$tarball" package/package.json | node -e '
  const p = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const missing = ["repository", "homepage", "bugs", "license", "description", "keywords"].filter((k) => !p[k]);
  if (missing.length) { console.error("package.json lacks " + missing.join(", ")); process.exit(1); }
' || fail "package.json metadata incomplete"
echo "    $(wc -l <<<"$listing" | tr -d ' ') files, $(du -k "$tarball" | cut -f1) KiB"

echo "--- npm install --omit=dev into an empty folder"
# A project of the user's own (npm sbom names its root by name and version).
printf '{ "name": "smoke-app", "version": "1.0.0", "private": true }\n' >"$WORK/app/package.json"
(cd "$WORK/app" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline \
  --loglevel=warn "$tarball" >"$WORK/install.log" 2>&1) || { cat "$WORK/install.log" >&2; fail "npm install --omit=dev"; }
# Every engines range of the package and its dependencies admits this Node.js.
! grep -q EBADENGINE "$WORK/install.log" || { grep EBADENGINE "$WORK/install.log" >&2; fail "npm install warns EBADENGINE under Node $want"; }
for dev in typescript vitest eslint nock node; do
  [ ! -e "$WORK/app/node_modules/$dev" ] || fail "development dependency $dev was installed"
done
# A CycloneDX SBOM of the installed package and its dependencies, as npm produces it.
(cd "$WORK/app" && npm sbom --omit=dev --sbom-format=cyclonedx >"$WORK/sbom.cdx.json" 2>"$WORK/sbom.log") ||
  { cat "$WORK/sbom.log" >&2; fail "npm sbom"; }
sbom="$(node "$ROOT/scripts/ci/check-sbom.mjs" "$WORK/sbom.cdx.json" sitehost-exporter prom-client undici zod pino)" ||
  fail "the SBOM does not list the package and its dependencies"
echo "    SBOM: $sbom"
BIN="$WORK/app/node_modules/.bin/sitehost-exporter"
[ -x "$BIN" ] || fail "node_modules/.bin/sitehost-exporter missing"
cd "$WORK/app" # away from the repository: no fallback to its node_modules

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
http_get() { # url -> body on stdout; exit 1 unless 2xx
  # exit only after the write has drained: stdout to a pipe is asynchronous in node.
  node -e 'fetch(process.argv[1]).then(async r=>{const t=await r.text();process.stdout.write(t,()=>process.exit(r.ok?0:1))}).catch(()=>process.exit(1))' "$1"
}

echo "--- installed simulator"
"$BIN" simulate --port 0 --sites 5 --seed 7 >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 100); do
  grep -q '^SITEHOST_CLIENT_SECRET=' "$WORK/sim.log" && break
  kill -0 "$SIM_PID" 2>/dev/null || fail "the simulator exited"
  sleep 0.2
done
grep -q '^SITEHOST_CLIENT_SECRET=' "$WORK/sim.log" || fail "the simulator printed no credentials"
sim_var() { sed -n "s/^$1=//p" "$WORK/sim.log" | head -n1; }
SECRET_FILE="$WORK/client-secret"
(umask 077 && printf '%s' "$(sim_var SITEHOST_CLIENT_SECRET)" >"$SECRET_FILE")

PORT="$(free_port)"
CHECKPOINTS="$WORK/checkpoints"
mkdir -p "$CHECKPOINTS"
cat >"$WORK/config.yaml" <<YAML
logs:
  enabled: true
  ship: false
  startFrom: -5m
  pollInterval: 5s
YAML

echo "--- installed daemon on 127.0.0.1:$PORT (secret from a file, as in the image)"
SITEHOST_API_URL="$(sim_var SITEHOST_API_URL)" SITEHOST_AUTH_URL="$(sim_var SITEHOST_AUTH_URL)" \
  SITEHOST_CLIENT_ID="$(sim_var SITEHOST_CLIENT_ID)" SITEHOST_CLIENT_SECRET_FILE="$SECRET_FILE" \
  SITEHOST_CHECKPOINT_DIR="$CHECKPOINTS" \
  "$BIN" run --config "$WORK/config.yaml" --web.listen-address "127.0.0.1:$PORT" --log.format json \
  >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!

ready=0
for _ in $(seq 1 120); do
  kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon exited before it was ready"
  if http_get "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1; then
    ready=1
    break
  fi
  sleep 0.5
done
[ "$ready" = 1 ] || fail "/-/ready did not answer 200 within 60 s"
echo "    ready"
# The installed command (a launcher) started Node.js as its child with the V8 flags of this workload
# (logs on here) and the allocator settings that go with them: Node.js started once, no restart.
NODE_PID="$(cut -d' ' -f1 "/proc/$DAEMON_PID/task/$DAEMON_PID/children")"
[ -n "$NODE_PID" ] || fail "the sitehost-exporter command runs no Node.js child"
tr '\0' ' ' <"/proc/$NODE_PID/cmdline" | grep -q -- "--heap-growing-percent=40" ||
  fail "the daemon runs without its V8 flags for logging: $(tr '\0' ' ' <"/proc/$NODE_PID/cmdline")"
tr '\0' '\n' <"/proc/$NODE_PID/environ" | grep -qx "MALLOC_ARENA_MAX=2" ||
  fail "the daemon runs without its allocator settings (MALLOC_ARENA_MAX)"
! tr '\0' '\n' <"/proc/$NODE_PID/environ" | grep -q "^SITEHOST_NODE_FLAGS_APPLIED=" ||
  fail "the daemon restarted itself to apply its V8 flags (the launcher should have given them)"
echo "    running with the V8 flags for logging and the lean allocator settings (Node.js started once)"

metrics="$(http_get "http://127.0.0.1:$PORT/metrics")" || fail "GET /metrics failed"
grep -Eq '^sitehost_up(\{\})? 1$' <<<"$metrics" ||
  fail "/metrics has no 'sitehost_up 1' (got: $(grep '^sitehost_up' <<<"$metrics" | tr '\n' ' '))"
sites="$(grep -c '^sitehost_site_info{' <<<"$metrics" || true)"
[ "$sites" -ge 1 ] || fail "/metrics has no sitehost_site_info line"
echo "    sitehost_up 1, $sites sitehost_site_info series"
if grep -qF -- "$(cat "$SECRET_FILE")" "$WORK/daemon.log" || grep -qF -- "$(cat "$SECRET_FILE")" <<<"$metrics"; then
  fail "the client secret appears in the logs or /metrics"
fi

echo "--- the image's HEALTHCHECK command"
node "$ROOT/scripts/ci/healthcheck.mjs" "$ROOT/Dockerfile" "$PORT" || fail "HEALTHCHECK failed against a healthy daemon"
dead="$(free_port)"
if node "$ROOT/scripts/ci/healthcheck.mjs" "$ROOT/Dockerfile" "$dead" 2>/dev/null; then
  fail "HEALTHCHECK passed against a port nobody listens on"
fi
echo "    healthy daemon: 0; nothing listening: non-zero"

echo "--- SIGTERM"
kill -TERM "$DAEMON_PID"
code=""
for _ in $(seq 1 40); do
  if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
    set +e
    wait "$DAEMON_PID"
    code=$?
    set -e
    break
  fi
  sleep 0.5
done
[ -n "$code" ] || fail "the daemon did not exit within 20 s of SIGTERM"
DAEMON_PID=""
[ "$code" = 0 ] || fail "the daemon exited $code after SIGTERM (want 0)"
echo "    exit 0"

kill -TERM "$SIM_PID" 2>/dev/null || true
wait "$SIM_PID" 2>/dev/null || true
SIM_PID=""
echo "--- package smoke test OK"
