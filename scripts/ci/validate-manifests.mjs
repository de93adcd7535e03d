/* global process, console */
// Validates `helm template` output offline against the Kubernetes and Prometheus
// Operator schemas shipped by kubernetes-models / @kubernetes-models/prometheus-operator,
// then checks the chart's own promises: non-root, read-only root fs, secret as a file; one
// StatefulSet whose pods take their shard from the pod index; checkpoints on a volume claim
// template; a grace period sized against logs.shutdownTimeout; HTTPS probes with TLS; the
// collector as a native sidecar with health probes and a file_storage sending queue;
// checksum annotations; dashboards labelled for the Grafana sidecar; the webhook token as a
// mounted file only (no Secret value in a ConfigMap, an env value or an argument); an Ingress
// that routes the webhook path alone; with --probes, blackbox_exporter as locked down as the
// exporter with the modules the targets name, and a ScrapeConfig that reads every shard's
// /sd/probes through that shard's own Service and sends each target to blackbox_exporter.
//
//   node scripts/ci/validate-manifests.mjs rendered.yaml [--shards N] [--persistence] [--grace S]
//     [--tls] [--sidecar] [--queue-bytes N] [--webhooks] [--dashboards N] [--rules-out FILE] [--test-pod]
//     [--probes]
import { Buffer } from "node:buffer";
import { readFileSync, writeFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";
import * as appsV1 from "kubernetes-models/apps/v1";
import * as networkingV1 from "kubernetes-models/networking.k8s.io/v1";
import * as policyV1 from "kubernetes-models/policy/v1";
import * as coreV1 from "kubernetes-models/v1";
import * as monitoringV1 from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import * as monitoringV1alpha1 from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1alpha1";
import { probeProblems } from "./validate-probes.mjs";

const MODELS = {
  "apps/v1": appsV1,
  "networking.k8s.io/v1": networkingV1,
  "policy/v1": policyV1,
  v1: coreV1,
  "monitoring.coreos.com/v1": monitoringV1,
  "monitoring.coreos.com/v1alpha1": monitoringV1alpha1,
};

const args = process.argv.slice(2);
const file = args[0];
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const flag = (name) => args.includes(name);
if (!file) {
  console.error(
    "usage: validate-manifests.mjs rendered.yaml [--shards N] [--persistence] [--grace S] [--tls] [--sidecar] [--queue-bytes N] [--webhooks] [--dashboards N] [--rules-out FILE] [--test-pod] [--probes]",
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
// blackbox_exporter (probes.blackboxExporter) is a Deployment of its own, checked below.
const isProber = (o) => o.metadata?.labels?.["app.kubernetes.io/component"] === "prober";
const workloads = docs.filter((o) => (o.kind === "StatefulSet" || o.kind === "Deployment") && !isProber(o));
const sts = workloads.find((o) => o.kind === "StatefulSet");
if (workloads.length !== 1 || !sts)
  problems.push(`expected exactly one StatefulSet, got ${workloads.map(where)}`);
const pod = sts?.spec?.template?.spec ?? {};
const exporter = (pod.containers ?? []).find((c) => c.name === "exporter");
const envOf = (c, name) => (c?.env ?? []).find((e) => e.name === name);
// Non-root, RuntimeDefault seccomp, no API token; every container read-only, without privilege
// escalation or capabilities.
const checkLockedDown = (workload) => {
  const spec = workload.spec?.template?.spec ?? {};
  const psc = spec.securityContext ?? {};
  if (psc.runAsNonRoot !== true)
    problems.push(`${where(workload)}: pod securityContext.runAsNonRoot is not true`);
  if (!(Number.isInteger(psc.runAsUser) && psc.runAsUser > 0)) {
    problems.push(`${where(workload)}: pod securityContext.runAsUser is not a non-zero uid`);
  }
  if (psc.seccompProfile?.type !== "RuntimeDefault")
    problems.push(`${where(workload)}: seccompProfile is not RuntimeDefault`);
  if (spec.automountServiceAccountToken !== false) {
    problems.push(`${where(workload)}: automountServiceAccountToken is not false`);
  }
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    const sc = c.securityContext ?? {};
    if (sc.readOnlyRootFilesystem !== true)
      problems.push(`${where(workload)} ${c.name}: readOnlyRootFilesystem is not true`);
    if (sc.allowPrivilegeEscalation !== false) {
      problems.push(`${where(workload)} ${c.name}: allowPrivilegeEscalation is not false`);
    }
    if (!(sc.capabilities?.drop ?? []).includes("ALL"))
      problems.push(`${where(workload)} ${c.name}: capabilities do not drop ALL`);
  }
};
if (sts) {
  checkLockedDown(sts);
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    if (envOf(c, "SITEHOST_CLIENT_SECRET")) {
      problems.push(`${where(sts)} ${c.name}: the client secret is passed as an environment variable`);
    }
    if (envOf(c, "SITEHOST_WEBHOOK_TOKEN")) {
      problems.push(`${where(sts)} ${c.name}: the webhook token is passed as an environment variable`);
    }
  }
  if (!exporter) problems.push(`${where(sts)}: no exporter container`);
  if (!sts.spec.template.metadata?.annotations?.["checksum/config"]) {
    problems.push(`${where(sts)}: no checksum/config annotation (a config change would not roll the pods)`);
  }
}
if (exporter) {
  const secretFile = envOf(exporter, "SITEHOST_CLIENT_SECRET_FILE");
  if (secretFile) {
    const mounts = exporter.volumeMounts ?? [];
    if (!mounts.some((m) => secretFile.value.startsWith(`${m.mountPath}/`) && m.name === "credentials")) {
      problems.push(
        `${where(sts)}: SITEHOST_CLIENT_SECRET_FILE is not inside the mounted credentials volume`,
      );
    }
  }
  if (exporter.livenessProbe?.httpGet?.path !== "/-/healthy")
    problems.push(`${where(sts)}: liveness is not /-/healthy`);
  if (exporter.readinessProbe?.httpGet?.path !== "/-/ready")
    problems.push(`${where(sts)}: readiness is not /-/ready`);
  const scheme = flag("--tls") ? "HTTPS" : undefined;
  for (const kind of ["startupProbe", "livenessProbe", "readinessProbe"]) {
    const got = exporter[kind]?.httpGet?.scheme;
    if (exporter[kind]?.httpGet && got !== scheme && !(scheme === undefined && got === "HTTP")) {
      problems.push(`${where(sts)}: ${kind} scheme is ${got ?? "HTTP"}, want ${scheme ?? "HTTP"}`);
    }
  }
}

// A chart-managed Secret the pod mounts rolls the pods when it changes.
const checksumOf = {
  credentials: "checksum/secret",
  "webhook-token": "checksum/secret",
  "web-config": "checksum/web-config",
};
for (const v of pod.volumes ?? []) {
  const own = docs.find((o) => o.kind === "Secret" && o.metadata.name === v.secret?.secretName);
  if (!own) continue;
  const key = checksumOf[v.name] ?? "checksum/?";
  if (!/^[0-9a-f]{64}$/.test(sts.spec.template.metadata?.annotations?.[key] ?? "")) {
    problems.push(
      `${where(sts)}: the chart's Secret ${own.metadata.name} (volume ${v.name}) has no ${key} annotation`,
    );
  }
}

// No Secret value (8 characters or more) appears in clear in a ConfigMap, an env value or an
// argument: secrets reach the exporter as mounted files.
const secretValues = docs
  .filter((o) => o.kind === "Secret")
  .flatMap((o) => [
    ...Object.values(o.data ?? {}).map((v) => Buffer.from(String(v), "base64").toString("utf8")),
    ...Object.values(o.stringData ?? {}).map(String),
  ])
  .map((v) => v.replace(/(?:\r?\n)+$/, ""))
  .filter((v) => v.length >= 8);
const plainTexts = [
  ...docs
    .filter((o) => o.kind === "ConfigMap")
    .flatMap((o) => Object.entries(o.data ?? {}).map(([k, v]) => [`${where(o)} ${k}`, String(v)])),
  ...[...(pod.initContainers ?? []), ...(pod.containers ?? [])].flatMap((c) => [
    ...(c.env ?? []).filter((e) => e.value !== undefined).map((e) => [`${c.name} env ${e.name}`, e.value]),
    ...[...(c.args ?? []), ...(c.command ?? [])].map((a) => [`${c.name} args`, a]),
  ]),
];
for (const [at, text] of plainTexts) {
  if (secretValues.some((v) => text.includes(v))) problems.push(`${at}: holds a Secret's value in clear`);
}

// The webhook receiver: config from the ConfigMap, the token a mounted Secret file, and an
// Ingress (if any) that routes the webhook path alone, exactly, to the exporter's Service.
const configCm = docs.find(
  (o) =>
    o.kind === "ConfigMap" &&
    o.metadata.name === pod.volumes?.find((v) => v.name === "config")?.configMap?.name,
);
const exporterConfig = configCm
  ? (parseAllDocuments(configCm.data?.["config.yaml"] ?? "")[0]?.toJS() ?? {})
  : {};
const webhooks = exporterConfig.webhooks ?? {};
if (webhooks.token !== undefined || webhooks.tokenFile !== undefined) {
  problems.push(`${where(configCm)}: the webhook token (or its file) is in the ConfigMap`);
}
const tokenFile = envOf(exporter, "SITEHOST_WEBHOOK_TOKEN_FILE")?.value;
if (exporter && webhooks.enabled === true) {
  const mount = (exporter.volumeMounts ?? []).find((m) => tokenFile?.startsWith(`${m.mountPath}/`));
  const volume = (pod.volumes ?? []).find((v) => v.name === mount?.name);
  if (!tokenFile)
    problems.push(`${where(sts)}: webhooks are enabled but SITEHOST_WEBHOOK_TOKEN_FILE is not set`);
  else if (mount?.name !== "webhook-token" || !volume?.secret?.secretName) {
    problems.push(
      `${where(sts)}: SITEHOST_WEBHOOK_TOKEN_FILE is not inside the mounted webhook-token Secret volume`,
    );
  }
} else if (tokenFile) {
  problems.push(`${where(sts)}: SITEHOST_WEBHOOK_TOKEN_FILE is set but the config does not enable webhooks`);
}
const webhookPath = webhooks.path ?? "/webhook";
const service = docs.find((o) => o.kind === "Service" && o.metadata.name === sts?.spec?.serviceName);
const ingresses = docs.filter((o) => o.kind === "Ingress");
for (const ing of ingresses) {
  if (webhooks.enabled !== true) problems.push(`${where(ing)}: an Ingress although webhooks are not enabled`);
  if (ing.spec?.defaultBackend)
    problems.push(`${where(ing)}: has a defaultBackend (it would route every path)`);
  const rules = ing.spec?.rules ?? [];
  if (rules.length === 0) problems.push(`${where(ing)}: no rules`);
  for (const rule of rules) {
    const paths = rule.http?.paths ?? [];
    if (paths.length === 0) problems.push(`${where(ing)} ${rule.host ?? "*"}: no paths`);
    for (const p of paths) {
      const at = `${where(ing)} ${rule.host ?? "*"}${p.path}`;
      if (p.path !== webhookPath || p.pathType !== "Exact") {
        problems.push(
          `${at}: routes ${p.pathType} ${p.path}, want only Exact ${webhookPath} (the webhook path)`,
        );
      }
      const backend = p.backend?.service;
      const port = (service?.spec?.ports ?? []).find(
        (sp) => sp.name === backend?.port?.name || sp.port === backend?.port?.number,
      );
      if (backend?.name !== service?.metadata?.name || !port || port.targetPort !== "http-metrics") {
        problems.push(`${at}: the backend is not the exporter's Service port (http-metrics)`);
      }
    }
  }
}
if (flag("--webhooks")) {
  if (webhooks.enabled !== true) problems.push("webhooks: the config does not enable the receiver");
  if (ingresses.length !== 1) problems.push(`webhooks: expected 1 Ingress, got ${ingresses.length}`);
}

const shards = opt("--shards");
if (shards !== undefined && sts && exporter) {
  const want = Number(shards);
  if (sts.spec.replicas !== want)
    problems.push(`${where(sts)}: replicas ${sts.spec.replicas}, want ${want} (shards)`);
  const index = envOf(exporter, "SITEHOST_SHARD");
  if (index?.valueFrom?.fieldRef?.fieldPath !== "metadata.labels['apps.kubernetes.io/pod-index']") {
    problems.push(`${where(sts)}: SITEHOST_SHARD does not come from the apps.kubernetes.io/pod-index label`);
  }
  if (envOf(exporter, "SITEHOST_SHARD_COUNT")?.value !== String(want)) {
    problems.push(`${where(sts)}: SITEHOST_SHARD_COUNT is not "${want}"`);
  }
  const cmName = pod.volumes?.find((v) => v.name === "config")?.configMap?.name;
  const cm = docs.find((o) => o.kind === "ConfigMap" && o.metadata.name === cmName);
  if (!cm) problems.push(`${where(sts)}: its ConfigMap ${cmName} is not rendered`);
  else if (parseAllDocuments(cm.data["config.yaml"])[0].toJS()?.sites?.shard !== undefined) {
    problems.push(`${where(cm)}: sites.shard is set in the config; the pod index decides`);
  }
}

if (sts && exporter) {
  const dir = envOf(exporter, "SITEHOST_CHECKPOINT_DIR")?.value;
  const mount = (exporter.volumeMounts ?? []).find((m) => m.mountPath === dir);
  if (!mount) problems.push(`${where(sts)}: nothing is mounted at SITEHOST_CHECKPOINT_DIR ${dir}`);
  const claim = (sts.spec.volumeClaimTemplates ?? []).find((t) => t.metadata.name === mount?.name);
  const volume = (pod.volumes ?? []).find((v) => v.name === mount?.name);
  if (flag("--persistence")) {
    if (!claim && !volume?.persistentVolumeClaim) {
      problems.push(`${where(sts)}: the checkpoint directory is not on a persistent volume claim`);
    }
    if (claim && volume)
      problems.push(`${where(sts)}: checkpoints is both a pod volume and a claim template`);
  } else if (!volume?.emptyDir) {
    problems.push(`${where(sts)}: without persistence the checkpoints should be an emptyDir`);
  }
}

const grace = opt("--grace");
if (grace !== undefined && sts && pod.terminationGracePeriodSeconds !== Number(grace)) {
  problems.push(
    `${where(sts)}: terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds}, want ${grace}`,
  );
}

if (flag("--sidecar") && sts && exporter) {
  const oc = (pod.initContainers ?? []).find((c) => c.name === "otel-collector");
  if (!oc) problems.push(`${where(sts)}: no otel-collector init container`);
  else {
    if (oc.restartPolicy !== "Always") {
      problems.push(`${where(sts)}: otel-collector is not a native sidecar (restartPolicy Always)`);
    }
    const health = (oc.ports ?? []).find((p) => p.name === "otelcol-health")?.containerPort;
    for (const kind of ["startupProbe", "livenessProbe", "readinessProbe"]) {
      const port = oc[kind]?.httpGet?.port;
      if (port !== "otelcol-health" && port !== health)
        problems.push(`${where(sts)}: otel-collector ${kind} is not on the health_check port`);
    }
    const cmName = (pod.volumes ?? []).find(
      (v) => v.name === (oc.volumeMounts ?? []).find((m) => m.mountPath === "/etc/otelcol")?.name,
    )?.configMap?.name;
    const cm = docs.find((o) => o.kind === "ConfigMap" && o.metadata.name === cmName);
    const cfg = cm ? parseAllDocuments(cm.data["config.yaml"])[0].toJS() : undefined;
    if (!cfg) problems.push(`${where(sts)}: the collector's ConfigMap is not rendered`);
    else {
      const healthEndpoint = cfg.extensions?.health_check?.endpoint ?? "";
      if (!healthEndpoint.endsWith(`:${health}`))
        problems.push(`collector: health_check does not listen on ${health}`);
      const storage = cfg.extensions?.["file_storage/queue"];
      if (!storage?.directory) problems.push("collector: no file_storage/queue extension");
      const mounted = (oc.volumeMounts ?? []).find((m) => storage?.directory?.startsWith(`${m.mountPath}/`));
      const exporterMount = (exporter.volumeMounts ?? []).find(
        (m) => m.mountPath === envOf(exporter, "SITEHOST_CHECKPOINT_DIR")?.value,
      );
      if (!mounted || mounted.name !== exporterMount?.name) {
        problems.push("collector: the file_storage directory is not on the checkpoint volume");
      }
      for (const ext of ["health_check", "file_storage/queue"]) {
        if (!(cfg.service?.extensions ?? []).includes(ext))
          problems.push(`collector: service.extensions lacks ${ext}`);
      }
      const queueBytes = opt("--queue-bytes");
      for (const [name, pipeline] of Object.entries(cfg.service?.pipelines ?? {})) {
        for (const p of pipeline.processors ?? []) {
          if (/^batch(\/|$)/.test(p))
            problems.push(`collector: pipeline ${name} acknowledges early (processor ${p})`);
        }
        for (const e of pipeline.exporters ?? []) {
          if (/^(debug|nop)(\/|$)/.test(e)) continue;
          const queue = cfg.exporters?.[e]?.sending_queue ?? {};
          if (queue.storage !== "file_storage/queue") {
            problems.push(`collector: exporter ${e} does not queue on file_storage/queue`);
          }
          if (queue.sizer !== "bytes" || !Number.isInteger(queue.queue_size) || queue.queue_size <= 0) {
            problems.push(`collector: exporter ${e}'s queue is not bounded in bytes (sizer ${queue.sizer})`);
          } else if (queueBytes !== undefined && queue.queue_size !== Number(queueBytes)) {
            problems.push(`collector: exporter ${e}'s queue_size ${queue.queue_size}, want ${queueBytes}`);
          }
        }
      }
      // Its own metrics: served on the container's otelcol-metrics port, scraped by the monitor.
      const metricsPort = (oc.ports ?? []).find((p) => p.name === "otelcol-metrics")?.containerPort;
      const reader = cfg.service?.telemetry?.metrics?.readers?.[0]?.pull?.exporter?.prometheus;
      if (!metricsPort || reader?.port !== metricsPort)
        problems.push("collector: service.telemetry does not serve metrics on the otelcol-metrics port");
      for (const m of docs.filter((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor")) {
        const endpoints = m.spec.endpoints ?? m.spec.podMetricsEndpoints ?? [];
        const ep = endpoints.find((x) => x.port === "otelcol-metrics" || x.portNumber === metricsPort);
        const job = ep?.relabelings?.find((r) => r.targetLabel === "job");
        if (!ep || !/-otel-collector$/.test(job?.replacement ?? ""))
          problems.push(
            `${where(m)}: does not scrape the collector's metrics as the <job>-otel-collector job`,
          );
      }
    }
  }
  if (envOf(exporter, "OTEL_EXPORTER_OTLP_ENDPOINT")?.value !== "http://127.0.0.1:4318") {
    problems.push(`${where(sts)}: the exporter does not send to the sidecar on 127.0.0.1:4318`);
  }
}

// Probes (probes.*): scripts/ci/validate-probes.mjs.
problems.push(
  ...probeProblems({
    docs,
    sts,
    pod,
    exporterConfig,
    isProber,
    checkLockedDown,
    tls: flag("--tls"),
    expected: flag("--probes"),
  }),
);

// The `helm test` pod: as locked down as the exporter, asking for /-/ready and the metrics.
for (const t of docs.filter(
  (o) => o.kind === "Pod" && o.metadata?.annotations?.["helm.sh/hook"] === "test",
)) {
  const c = t.spec?.containers?.[0] ?? {};
  const sc = c.securityContext ?? {};
  if (t.spec?.securityContext?.runAsNonRoot !== true || sc.readOnlyRootFilesystem !== true)
    problems.push(`${where(t)}: not run as non-root with a read-only root filesystem`);
  if (t.spec?.restartPolicy !== "Never") problems.push(`${where(t)}: restartPolicy is not Never`);
  const script = (c.args ?? []).join("\n");
  if (!script.includes("/-/ready") || !script.includes("TELEMETRY_PATH"))
    problems.push(`${where(t)}: does not check /-/ready and the metrics`);
  const base = envOf(c, "BASE")?.value ?? "";
  if (!base.includes(`//${service?.metadata?.name}.${service?.metadata?.namespace}.svc:`))
    problems.push(`${where(t)}: does not ask the exporter's Service (${base})`);
}
if (
  flag("--test-pod") &&
  !docs.some((o) => o.kind === "Pod" && o.metadata?.annotations?.["helm.sh/hook"] === "test")
)
  problems.push("no helm test pod");

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
