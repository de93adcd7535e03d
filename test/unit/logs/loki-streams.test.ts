/**
 * How many Loki streams the exporter's records open. Loki indexes the resource attributes of its
 * default list and keeps every other attribute (the rest of the resource, the scope's, the record's)
 * as structured metadata, so the streams are the distinct sets of listed attributes among the
 * resources sent. The resources are built as the pipeline builds them (wantedStreams, then
 * streamResource), each pod with the environment the chart gives it (`helm template`, pod name and
 * ordinal filled in as Kubernetes does), across a reshard (2 → 3 shards) and a reinstall under other
 * pod names.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Attributes } from "@opentelemetry/api";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { shardFromEnv } from "../../../src/config/shard.js";
import { shardOf } from "../../../src/discovery/shard.js";
import { logScope, streamResource } from "../../../src/logs/resource.js";
import { type SiteOfStreams, wantedStreams } from "../../../src/logs/streams.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..", "..");
const CHART = join(ROOT, "helm", "sitehost-exporter");

/**
 * The resource attributes Loki 3.x turns into index labels unless `otlp_config` says otherwise:
 * `distributor.otlp.default_resource_attributes_as_index_labels` (pkg/loghttp/push/otlp_config.go;
 * grafana.com/docs/loki/latest/get-started/labels/#default-labels-for-opentelemetry). Loki's docs no
 * longer recommend indexing k8s.pod.name and service.instance.id, but they are still in the defaults.
 */
const LOKI_DEFAULT_INDEX_LABELS = [
  "service.name",
  "service.namespace",
  "service.instance.id",
  "deployment.environment",
  "deployment.environment.name",
  "cloud.region",
  "cloud.availability_zone",
  "k8s.cluster.name",
  "k8s.namespace.name",
  "k8s.pod.name",
  "k8s.container.name",
  "container.name",
  "k8s.replicaset.name",
  "k8s.deployment.name",
  "k8s.statefulset.name",
  "k8s.daemonset.name",
  "k8s.cronjob.name",
  "k8s.job.name",
] as const;

/** A stream's labels: the listed attributes the resource has, named as Loki names them. */
function lokiLabels(resource: Attributes): string {
  return LOKI_DEFAULT_INDEX_LABELS.filter((k) => resource[k] !== undefined)
    .map((k) => `${k.replace(/[^A-Za-z0-9_]/g, "_")}=${JSON.stringify(String(resource[k]))}`)
    .join(",");
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

interface Pod {
  name: string;
  env: NodeJS.ProcessEnv;
}

/** The exporter's pods of a release: each one's environment as Kubernetes would give it. */
async function chartPods(release: string, shards: number): Promise<Pod[]> {
  const { stdout } = await run(
    helm,
    [
      "template",
      release,
      CHART,
      "--namespace",
      "monitoring",
      "--set",
      `shards.count=${shards}`,
      "--set",
      "otlp.resourceAttributes=deployment.environment.name=prod",
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  type StatefulSet = {
    kind?: string;
    metadata: { name: string };
    spec: { template: { spec: { containers: Array<{ name: string; env?: EnvVar[] }> } } };
  };
  const sts = parseAllDocuments(stdout)
    .map((d) => d.toJS() as StatefulSet | null)
    .find((d) => d?.kind === "StatefulSet");
  const vars = sts?.spec.template.spec.containers.find((c) => c.name === "exporter")?.env ?? [];
  expect(vars.length, "the exporter container's env").toBeGreaterThan(0);
  return Array.from({ length: shards }, (_, ordinal) => {
    const name = `${sts?.metadata.name}-${ordinal}`;
    const fields: Record<string, string> = {
      "metadata.name": name,
      "metadata.namespace": "monitoring",
      "metadata.labels['apps.kubernetes.io/pod-index']": String(ordinal),
      "status.podIP": `10.0.0.${ordinal + 1}`,
    };
    const env: Record<string, string> = {};
    for (const v of vars) {
      const path = v.valueFrom?.fieldRef?.fieldPath;
      if (path !== undefined) {
        const value = fields[path];
        expect(value, `fieldRef ${path}`).toBeDefined();
        env[v.name] = value ?? "";
      } else if (v.value !== undefined) {
        // $(VAR) names a variable defined earlier in the list.
        env[v.name] = v.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => env[n] ?? m);
      }
    }
    return { name, env };
  });
}

function sites(n: number): SiteOfStreams[] {
  return Array.from({ length: n }, (_, i) => ({
    id: 1000 + i,
    name: `site-${i}.example.com`,
    datacenterCode: ["akl", "wlg", "chc"][i % 3],
    accountId: 42,
    staging: i % 10 === 0,
  }));
}

/** The Loki streams of every resource these pods send for these sites (each pod ships its shard). */
function streamsOf(pods: readonly Pod[], all: readonly SiteOfStreams[], perSite = true): Set<string> {
  const streams = new Set<string>();
  for (const pod of pods) {
    const shard = shardFromEnv(pod.env);
    if (!shard) throw new Error(`${pod.name}: no shard in its env`);
    const mine = all.filter((s) => shardOf(s.id, shard.count) === shard.index);
    const settings = { perSite, namespace: "sitehost" };
    const seen = new Set<object>();
    for (const spec of wantedStreams(mine, ["php", "server", "activity"], shard.index)) {
      // A site's streams share one resource (and one sink), as in the pipeline.
      if (seen.has(spec.resource)) continue;
      seen.add(spec.resource);
      streams.add(lokiLabels(streamResource(spec.resource, settings, pod.env).attributes));
    }
  }
  return streams;
}

let helm: string;
/** A release's pods with 2 shards, the same release resharded to 3, and a reinstall as "other". */
let layouts: Pod[][];
beforeAll(async () => {
  helm = (
    await run("bash", [join(ROOT, "scripts", "ci", "helm-binary.sh")], { timeout: 180_000 })
  ).stdout.trim();
  layouts = await Promise.all([chartPods("logs", 2), chartPods("logs", 3), chartPods("other", 3)]);
}, 200_000);

describe("Loki streams of the chart's pods", () => {
  it.each([1_000, 5_000])(
    "%i sites open one stream each, plus the account's, whatever pod or shard ships them",
    (n) => {
      const all = sites(n);
      const pods = layouts.flat();
      // Six pods: logs-…-0 and -1 serve other shards after the reshard; other-…-0 to -2.
      expect(new Set(pods.map((p) => p.name)).size).toBe(6);
      const streams = new Set(layouts.flatMap((layout) => [...streamsOf(layout, all)]));
      expect(streams.size).toBe(n + 1);
      // The site is the service; the stream names nothing of the pod that shipped it.
      const shop = [...streams].find((s) => s.includes('service_name="site-7.example.com"'));
      expect(shop).toBe(
        'service_name="site-7.example.com",service_namespace="sitehost",service_instance_id="1007",' +
          'deployment_environment_name="prod",cloud_region="wlg",k8s_namespace_name="monitoring"',
      );
    },
    60_000,
  );

  it("with logs.resourcePerSite false every pod shares one stream", () => {
    const streams = new Set(layouts.flatMap((layout) => [...streamsOf(layout, sites(100), false)]));
    expect(streams.size).toBe(1);
  });

  it("each record still names its pod and shard, in its scope (structured metadata in Loki)", () => {
    const pod = layouts[1]?.[2];
    expect(pod?.name).toBe("logs-sitehost-exporter-2");
    expect(logScope(pod?.env ?? {}).attributes).toEqual({
      "k8s.pod.name": "logs-sitehost-exporter-2",
      "sitehost.shard.index": "2",
      "sitehost.shard.count": "3",
    });
  });
});
