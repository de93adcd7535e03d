/* global process, console */
// Validates `helm template` output offline against the Kubernetes and Prometheus
// Operator schemas shipped by kubernetes-models / @kubernetes-models/prometheus-operator,
// then checks the chart's own promises (non-root, read-only root fs, secret as a file,
// dashboards labelled for the Grafana sidecar, one shard config per Deployment).
//
//   node scripts/ci/validate-manifests.mjs rendered.yaml [--dashboards N] [--shards N] [--rules-out FILE]
import { readFileSync, writeFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";
import * as appsV1 from "kubernetes-models/apps/v1";
import * as coreV1 from "kubernetes-models/v1";
import * as monitoringV1 from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const MODELS = {
  "apps/v1": appsV1,
  v1: coreV1,
  "monitoring.coreos.com/v1": monitoringV1,
};

const args = process.argv.slice(2);
const file = args[0];
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
if (!file) {
  console.error(
    "usage: validate-manifests.mjs rendered.yaml [--dashboards N] [--shards N] [--rules-out FILE]",
  );
  process.exit(2);
}

const problems = [];
const docs = [];
for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
  if (doc.errors.length > 0) {
    problems.push(`YAML error: ${doc.errors[0].message}`);
    continue;
  }
  const obj = doc.toJS();
  if (obj !== null && obj !== undefined) docs.push(obj);
}

const where = (o) => `${o.kind ?? "?"}/${o.metadata?.name ?? "?"}`;

// 1. Schema validation of every object.
for (const o of docs) {
  const Model = MODELS[o.apiVersion]?.[o.kind];
  if (typeof Model !== "function") {
    problems.push(`${where(o)}: no schema known for ${o.apiVersion} ${o.kind}`);
    continue;
  }
  try {
    new Model(o).validate();
  } catch (err) {
    problems.push(`${where(o)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// 2. The chart's promises.
const deployments = docs.filter((o) => o.kind === "Deployment");
if (deployments.length === 0) problems.push("no Deployment rendered");
for (const d of deployments) {
  const pod = d.spec?.template?.spec ?? {};
  const psc = pod.securityContext ?? {};
  if (psc.runAsNonRoot !== true) problems.push(`${where(d)}: pod securityContext.runAsNonRoot is not true`);
  if (!(Number.isInteger(psc.runAsUser) && psc.runAsUser > 0)) {
    problems.push(`${where(d)}: pod securityContext.runAsUser is not a non-zero uid`);
  }
  if (psc.seccompProfile?.type !== "RuntimeDefault")
    problems.push(`${where(d)}: seccompProfile is not RuntimeDefault`);
  if (pod.automountServiceAccountToken !== false) {
    problems.push(`${where(d)}: automountServiceAccountToken is not false`);
  }
  for (const c of pod.containers ?? []) {
    const sc = c.securityContext ?? {};
    if (sc.readOnlyRootFilesystem !== true)
      problems.push(`${where(d)} ${c.name}: readOnlyRootFilesystem is not true`);
    if (sc.allowPrivilegeEscalation !== false) {
      problems.push(`${where(d)} ${c.name}: allowPrivilegeEscalation is not false`);
    }
    if (!(sc.capabilities?.drop ?? []).includes("ALL"))
      problems.push(`${where(d)} ${c.name}: capabilities do not drop ALL`);
    for (const e of c.env ?? []) {
      if (e.name === "SITEHOST_CLIENT_SECRET") {
        problems.push(`${where(d)} ${c.name}: the client secret is passed as an environment variable`);
      }
    }
  }
  const exporter = (pod.containers ?? []).find((c) => c.name === "exporter");
  if (!exporter) {
    problems.push(`${where(d)}: no exporter container`);
    continue;
  }
  const secretFile = (exporter.env ?? []).find((e) => e.name === "SITEHOST_CLIENT_SECRET_FILE");
  if (secretFile) {
    const mounts = exporter.volumeMounts ?? [];
    if (!mounts.some((m) => secretFile.value.startsWith(`${m.mountPath}/`) && m.name === "credentials")) {
      problems.push(`${where(d)}: SITEHOST_CLIENT_SECRET_FILE is not inside the mounted credentials volume`);
    }
  }
  if (exporter.livenessProbe?.httpGet?.path !== "/-/healthy")
    problems.push(`${where(d)}: liveness is not /-/healthy`);
  if (exporter.readinessProbe?.httpGet?.path !== "/-/ready")
    problems.push(`${where(d)}: readiness is not /-/ready`);
}

const shards = opt("--shards");
if (shards !== undefined) {
  const want = Number(shards);
  if (deployments.length !== want)
    problems.push(`expected ${want} Deployments (shards), got ${deployments.length}`);
  const seen = new Set();
  for (const d of deployments) {
    const cmName = d.spec.template.spec.volumes.find((v) => v.name === "config")?.configMap?.name;
    const cm = docs.find((o) => o.kind === "ConfigMap" && o.metadata.name === cmName);
    if (!cm) {
      problems.push(`${where(d)}: its ConfigMap ${cmName} is not rendered`);
      continue;
    }
    const shard = parseAllDocuments(cm.data["config.yaml"])[0].toJS()?.sites?.shard;
    if (shard?.count !== want)
      problems.push(`${where(cm)}: sites.shard.count is ${shard?.count}, want ${want}`);
    seen.add(shard?.index);
  }
  for (let i = 0; i < want; i++) if (!seen.has(i)) problems.push(`no Deployment watches shard ${i}`);
}

const dashboards = opt("--dashboards");
if (dashboards !== undefined) {
  const cms = docs.filter((o) => o.kind === "ConfigMap" && o.metadata?.labels?.grafana_dashboard === "1");
  if (cms.length !== Number(dashboards)) {
    problems.push(`expected ${dashboards} ConfigMaps labelled grafana_dashboard="1", got ${cms.length}`);
  }
  for (const cm of cms) {
    if (!cm.metadata.annotations?.grafana_folder) problems.push(`${where(cm)}: no grafana_folder annotation`);
    for (const [key, text] of Object.entries(cm.data ?? {})) {
      try {
        JSON.parse(text);
      } catch {
        problems.push(`${where(cm)}: ${key} is not valid JSON`);
      }
    }
  }
}

const rulesOut = opt("--rules-out");
if (rulesOut !== undefined) {
  const rules = docs.filter((o) => o.kind === "PrometheusRule");
  if (rules.length !== 1) problems.push(`expected 1 PrometheusRule, got ${rules.length}`);
  else writeFileSync(rulesOut, stringify({ groups: rules[0].spec.groups }));
}

if (problems.length > 0) {
  console.error(`${file}: ${problems.length} problem(s)`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`${file}: ${docs.length} objects valid (${[...new Set(docs.map((o) => o.kind))].join(", ")})`);
