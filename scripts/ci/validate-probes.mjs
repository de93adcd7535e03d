// The Helm chart's probes (probes.*), checked on `helm template` output by validate-manifests.mjs:
// blackbox_exporter as locked down as the exporter, with every module the targets name; a
// ScrapeConfig that reads each shard's /sd/probes from a Service of that shard alone (none of which
// the ServiceMonitor scrapes a second time), with the credentials the web config asks for, and hands
// each target to blackbox_exporter unchanged; with a NetworkPolicy, Prometheus reaches
// blackbox_exporter and blackbox_exporter the sites.
import { Buffer } from "node:buffer";
import { parseAllDocuments } from "yaml";

const where = (o) => `${o.kind ?? "?"}/${o.metadata?.name ?? "?"}`;

/**
 * The problems of the rendered objects' probes. `checkLockedDown(workload)` is the exporter's own
 * check (it reports through validate-manifests.mjs); `expected`: the values enable the probes.
 */
export function probeProblems({ docs, sts, pod, exporterConfig, isProber, checkLockedDown, tls, expected }) {
  const problems = [];
  // Probes: blackbox_exporter as locked down as the exporter, with every module the targets name; a
  // ScrapeConfig that reads each shard's /sd/probes from a Service of that shard alone (none of which
  // the ServiceMonitor scrapes a second time), with the credentials the web config asks for, and hands
  // each target to blackbox_exporter unchanged.
  const matches = (selector, labels) =>
    Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v) &&
    Object.keys(selector ?? {}).length > 0;
  const probers = docs.filter((o) => o.kind === "Deployment" && isProber(o));
  const proberService = docs.find(
    (o) =>
      o.kind === "Service" &&
      probers.some((d) => matches(o.spec?.selector, d.spec.template.metadata?.labels)),
  );
  for (const d of probers) {
    checkLockedDown(d);
    const spec = d.spec.template.spec;
    const cmName = spec.volumes?.find((v) => v.configMap)?.configMap?.name;
    const cm = docs.find((o) => o.kind === "ConfigMap" && o.metadata.name === cmName);
    const modules = cm ? (parseAllDocuments(cm.data?.["blackbox.yml"] ?? "")[0]?.toJS()?.modules ?? {}) : {};
    const probes = exporterConfig.probes ?? {};
    const named = [probes.module ?? "http_2xx", ...(probes.overrides ?? []).map((o) => o.module)].filter(
      Boolean,
    );
    for (const m of new Set(named)) {
      if (!modules[m])
        problems.push(
          `${where(d)}: blackbox.yml (ConfigMap ${cmName}) lacks module ${m}, named by config.probes`,
        );
    }
    if (!d.spec.template.metadata?.annotations?.["checksum/config"])
      problems.push(`${where(d)}: no checksum/config annotation (new modules would not roll the pods)`);
    if (!(proberService?.spec?.ports ?? []).some((sp) => sp.port === 9115))
      problems.push(`${where(d)}: no Service on port 9115 selects its pods`);
  }
  const scrapeConfigs = docs.filter((o) => o.kind === "ScrapeConfig");
  if (expected) {
    if (scrapeConfigs.length !== 1)
      problems.push(`probes: expected 1 ScrapeConfig, got ${scrapeConfigs.length}`);
    if (probers.length !== 1)
      problems.push(`probes: expected 1 blackbox_exporter Deployment, got ${probers.length}`);
  }
  const webConfigSecret = docs.find(
    (o) =>
      o.kind === "Secret" &&
      o.metadata.name === pod.volumes?.find((v) => v.name === "web-config")?.secret?.secretName,
  );
  const webConfig = webConfigSecret?.data?.["web-config.yml"]
    ? (parseAllDocuments(
        Buffer.from(webConfigSecret.data["web-config.yml"], "base64").toString("utf8"),
      )[0]?.toJS() ?? {})
    : {};
  const monitors = docs.filter((o) => o.kind === "ServiceMonitor");
  for (const sc of scrapeConfigs) {
    const sds = sc.spec.httpSDConfigs ?? [];
    const want = sts?.spec?.replicas ?? 0;
    if (sds.length !== want)
      problems.push(
        `${where(sc)}: ${sds.length} httpSDConfigs for ${want} shards (each shard lists only its own sites)`,
      );
    for (let i = 0; i < want; i++) {
      const podName = `${sts.metadata.name}-${i}`;
      const svc = docs.find(
        (o) =>
          o.kind === "Service" &&
          o.spec?.selector?.["statefulset.kubernetes.io/pod-name"] === podName &&
          matches(sts.spec.selector.matchLabels, o.spec.selector),
      );
      const port = (svc?.spec?.ports ?? []).find((sp) => sp.targetPort === "http-metrics")?.port;
      const scheme = tls ? "https" : "http";
      const url = `${scheme}://${svc?.metadata?.name}.${svc?.metadata?.namespace}.svc:${port}/sd/probes`;
      if (!svc || !port)
        problems.push(`${where(sc)}: no Service of pod ${podName} alone on its http-metrics port`);
      else if (!sds.some((sd) => sd.url === url))
        problems.push(`${where(sc)}: does not read ${url} (shard ${i})`);
      for (const m of monitors) {
        if (svc && matches(m.spec.selector?.matchLabels, svc.metadata.labels))
          problems.push(`${where(m)}: selects ${where(svc)}, so shard ${i} would be scraped twice`);
      }
    }
    if (webConfig.basic_auth_users) {
      for (const sd of sds.filter((x) => !x.basicAuth))
        problems.push(`${where(sc)}: ${sd.url} without basicAuth, but the web config asks for it`);
    }
    if (sc.spec.metricsPath !== "/probe") problems.push(`${where(sc)}: metricsPath is not /probe`);
    const rl = sc.spec.relabelings ?? [];
    const sets = (from, to) =>
      rl.some((r) => JSON.stringify(r.sourceLabels) === JSON.stringify([from]) && r.targetLabel === to);
    for (const [from, to] of [
      ["__address__", "__param_target"],
      ["module", "__param_module"],
      ["__param_target", "instance"],
    ]) {
      if (!sets(from, to)) problems.push(`${where(sc)}: no relabeling of ${from} to ${to}`);
    }
    const address = rl.find((r) => r.targetLabel === "__address__" && !r.sourceLabels)?.replacement;
    const wantAddress = proberService
      ? `${proberService.metadata.name}.${proberService.metadata.namespace}.svc:9115`
      : undefined;
    if (!address) problems.push(`${where(sc)}: does not send the probes to blackbox_exporter (__address__)`);
    else if (wantAddress && address !== wantAddress)
      problems.push(
        `${where(sc)}: sends the probes to ${address}, not the chart's blackbox_exporter ${wantAddress}`,
      );
    if (Object.keys(sc.spec.params ?? {}).some((k) => k !== "module"))
      problems.push(`${where(sc)}: adds query parameters to the probes (${Object.keys(sc.spec.params)})`);
  }
  // With a NetworkPolicy: Prometheus reaches blackbox_exporter, which reaches the sites over HTTPS.
  const policies = docs.filter((o) => o.kind === "NetworkPolicy");
  for (const d of policies.length > 0 ? probers : []) {
    const labels = d.spec.template.metadata?.labels;
    const np = policies.find((o) => matches(o.spec.podSelector?.matchLabels, labels));
    const portOk = (p) => p.port === 9115 || p.port === "http";
    if (!np) problems.push(`${where(d)}: no NetworkPolicy selects its pods`);
    else {
      if (!(np.spec.ingress ?? []).some((r) => (r.ports ?? []).some(portOk)))
        problems.push(`${where(np)}: Prometheus cannot reach blackbox_exporter on 9115`);
      if (
        (np.spec.policyTypes ?? []).includes("Egress") &&
        !(np.spec.egress ?? []).some((r) => !r.to && (r.ports ?? []).some((p) => p.port === 443))
      )
        problems.push(`${where(np)}: restricts egress without HTTPS to the sites`);
    }
  }
  return problems;
}
