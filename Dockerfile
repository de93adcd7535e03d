# syntax=docker/dockerfile:1
# sitehost-exporter container image.
#
#   docker build -t sitehost-exporter .
#   docker run --rm -p 10987:10987 -e SITEHOST_CLIENT_ID=... \
#     -v "$PWD/secret:/run/secrets/sitehost-client-secret:ro" \
#     -e SITEHOST_CLIENT_SECRET_FILE=/run/secrets/sitehost-client-secret sitehost-exporter
#
# Stop it with room for the log flush: `docker run --stop-timeout 30` (compose:
# `stop_grace_period: 30s`). SIGTERM lets an unacknowledged log export run for up to
# logs.shutdownTimeout (default 10s) plus a few seconds for collectors and the OTLP client;
# Docker's default of 10s would SIGKILL it first. Size it as logs.shutdownTimeout + 20s.
#
# scripts/ci/image.sh builds this file with podman on a base image made from Debian
# packages (mmdebstrap) and the pinned Node binary (NODE_IMAGE below), runs the image
# read-only, non-root, without capabilities against the simulator, and stops it.
# scripts/ci/package-smoke.sh proves the same steps without any container engine.
#
# npm registry settings (a private registry, its CA, a token) go in as build secrets and
# never into a layer:
#   docker build --secret id=npmrc,src=$HOME/.npmrc [--secret id=npm_ca,src=ca.pem] .
# with `cafile=/run/secrets/npm_ca` in that npmrc when the registry needs its own CA.

# Same Node release as the pinned "node" devDependency. Any image with node and npm on
# PATH and a shell works (scripts/ci/image.sh passes its own). The package also runs on Node.js 26
# (node:26-bookworm-slim); docs/benchmarks.md says why the image stays on 24.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- build: every dependency, compile TypeScript -------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
# The "node" devDependency pins Node 24 for npm scripts; the base image is Node 24 already,
# so --ignore-scripts skips its binary download (and tsc below runs on the image's node).
# The npm cache is a build cache, not a layer.
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc \
    --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca \
    --mount=type=cache,id=sitehost-exporter-npm,target=/root/.npm,sharing=locked \
    npm ci --ignore-scripts
COPY tsconfig.json ./
COPY src ./src
COPY dashboards ./dashboards
COPY bench ./bench
COPY scripts ./scripts
# No source maps: the image carries no TypeScript sources for them to point at.
RUN node node_modules/typescript/bin/tsc -p tsconfig.json --sourceMap false

# ---- production dependencies only ---------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc \
    --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca \
    --mount=type=cache,id=sitehost-exporter-npm,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --ignore-scripts
# A CycloneDX SBOM of the production packages npm ci installed, read from the lockfile it installed
# from (the installed tree lacks the devDependencies, which npm sbom would report as missing).
RUN npm sbom --omit=dev --package-lock-only --sbom-format=cyclonedx > /app/sbom.cdx.json

# ---- runtime -------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="sitehost-exporter" \
      org.opencontainers.image.description="Prometheus exporter and OpenTelemetry log shipper for every site of a managed web-hosting account" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.documentation="https://github.com/sitehost-exporter/sitehost-exporter/blob/main/docs/deployment.md" \
      org.opencontainers.image.source="https://github.com/sitehost-exporter/sitehost-exporter"

# The memory-lean V8 flags for shipping logs (src/cli/v8Flags.ts, docs/benchmarks.md) are given on
# the entry point's command line, with the allocator settings below, so the daemon does not restart
# itself to apply them: Node.js starts once, and a SIGTERM in the first part of a second meets the
# daemon's handlers sooner. SITEHOST_NODE_FLAGS_PRESET tells the daemon these flags are its own: a
# config with logs.enabled: false, SITEHOST_NODE_FLAGS (off for V8's defaults) or heap flags in
# NODE_OPTIONS still get their own flags (by that restart).
ENV NODE_ENV=production \
    SITEHOST_CHECKPOINT_DIR=/var/lib/sitehost-exporter \
    SITEHOST_LISTEN_ADDRESS=:10987 \
    SITEHOST_NODE_FLAGS_PRESET=logs \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=262144

WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/sbom.cdx.json /usr/share/doc/sitehost-exporter/sbom.cdx.json
COPY --from=build /src/dist/src ./dist/src
COPY package.json README.md CHANGELOG.md ./
COPY config/example.yaml ./config/
COPY config/alerts/*.rules.yaml ./config/alerts/
COPY dashboards/*.json ./dashboards/

# Checkpoints must survive restarts: mount a volume here (the chart uses an emptyDir or a PVC).
RUN mkdir -p /var/lib/sitehost-exporter /etc/sitehost-exporter \
 && chown 65532:65532 /var/lib/sitehost-exporter
VOLUME ["/var/lib/sitehost-exporter"]

# Numeric uid/gid so Kubernetes runAsNonRoot can verify it without /etc/passwd.
USER 65532:65532
EXPOSE 10987

# No shell in the health check: node's own fetch, on the address of SITEHOST_LISTEN_ADDRESS
# (loopback when it names no host). With --web.listen-address or a TLS web config, override
# it (docker run --health-cmd / compose healthcheck).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const a=process.env.SITEHOST_LISTEN_ADDRESS||':10987',i=a.lastIndexOf(':'),h=a.slice(0,i).replace('[','').replace(']',''),host=h===''||h==='0.0.0.0'||h==='::'?'127.0.0.1':h.includes(':')?'['+h+']':h;fetch('http://'+host+':'+a.slice(i+1)+'/-/healthy').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]

# Exec form: node is PID 1 and gets SIGTERM itself; the daemon's handler flushes
# logs and checkpoints, releases the checkpoint lock, then exits 0 (see --stop-timeout
# above). Add `--config /etc/sitehost-exporter/config.yaml` when you mount a config file;
# environment variables alone are enough otherwise.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--disable-sigusr1", "--max-semi-space-size=8", "--no-parallel-scavenge", "--initial-old-space-size=64", "--heap-growing-percent=40", "dist/src/cli/main.js"]
CMD ["run"]
