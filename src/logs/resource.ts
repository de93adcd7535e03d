/**
 * The OpenTelemetry resources log records carry. With `logs.resourcePerSite` (the default) each site
 * is a service of its own, so Loki and Grafana list and filter sites by `service.name`:
 *
 *   service.name = the site's name, service.namespace = logs.serviceNamespace (default "sitehost"),
 *   service.instance.id = the site's id, cloud.provider = "sitehost", cloud.region = its datacenter,
 *   cloud.account.id, sitehost.site.id, sitehost.site.kind;
 *
 * the account's own activity log is the service "sitehost-account". The exporter's identity is the
 * instrumentation scope (sitehost-exporter and its version, with SITEHOST_LOG_SCOPE_ATTRIBUTES) and
 * `telemetry.distro.name` / `.version`. OTEL_RESOURCE_ATTRIBUTES adds to every resource (the site's
 * own attributes win over it). Without `logs.resourcePerSite`, every record shares the exporter's
 * resource, as before.
 *
 * Loki makes a stream of each distinct set of the resource attributes it indexes (service.name,
 * service.namespace, service.instance.id, cloud.region, k8s.namespace.name, k8s.pod.name, ... by
 * default) and keeps every other attribute as structured metadata. A site's resource therefore holds
 * nothing that differs between the exporter's pods, shards or restarts: one stream per site, whichever
 * pod ships it. service.instance.id is the site's id: one value per site, so it opens no stream of its
 * own, and it wins over a per-pod service.instance.id in OTEL_RESOURCE_ATTRIBUTES. What tells the
 * exporter's pods apart (the chart's k8s.pod.name and shard) belongs in SITEHOST_LOG_SCOPE_ATTRIBUTES:
 * Loki never indexes scope attributes (test/unit/logs/loki-streams.test.ts counts the streams).
 */
import type { Attributes } from "@opentelemetry/api";
import { defaultResource, resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import { resourceAttributesFromEnv, scopeAttributesFromEnv } from "../config/otelEnv.js";
import { VERSION } from "../version.js";

/** service.name defaults to sitehost-exporter; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win. */
export function createResource(env: NodeJS.ProcessEnv = process.env): Resource {
  const fromEnv: Attributes = resourceAttributesFromEnv(env);
  const serviceName =
    env.OTEL_SERVICE_NAME?.trim() || (fromEnv["service.name"] as string | undefined) || "sitehost-exporter";
  return defaultResource().merge(
    resourceFromAttributes({ ...fromEnv, "service.name": serviceName, "service.version": VERSION }),
  );
}

/** The instrumentation scope of every record: the exporter, its version, and who it is (a pod, a shard). */
export interface LogScope {
  readonly name: string;
  readonly version: string;
  readonly attributes: Attributes;
}

export function logScope(env: NodeJS.ProcessEnv = process.env): LogScope {
  return { name: "sitehost-exporter", version: VERSION, attributes: scopeAttributesFromEnv(env) };
}

/** What a stream's resource is made of: the site (or the account) as discovery last saw it. */
export interface ResourceIdentity {
  /** 0 for the account. */
  siteId: number;
  siteName: string;
  datacenter?: string;
  kind?: string;
  accountId?: number;
}

export interface ResourceSettings {
  perSite: boolean;
  namespace: string;
}

export const CLOUD_PROVIDER = "sitehost";
export const ACCOUNT_SERVICE = "sitehost-account";

/** The resource of a site's (or the account's) records. */
export function streamResource(
  who: ResourceIdentity,
  settings: ResourceSettings,
  env: NodeJS.ProcessEnv = process.env,
): Resource {
  if (!settings.perSite) return createResource(env);
  const own: Attributes = {
    "service.namespace": settings.namespace,
    "service.name": who.siteId === 0 ? ACCOUNT_SERVICE : who.siteName,
    "cloud.provider": CLOUD_PROVIDER,
  };
  if (who.siteId !== 0) {
    own["service.instance.id"] = String(who.siteId);
    if (who.datacenter) own["cloud.region"] = who.datacenter;
  }
  if (who.accountId !== undefined) own["cloud.account.id"] = String(who.accountId);
  if (who.siteId !== 0) {
    own["sitehost.site.id"] = String(who.siteId);
    if (who.kind) own["sitehost.site.kind"] = who.kind;
  }
  own["telemetry.distro.name"] = "sitehost-exporter";
  own["telemetry.distro.version"] = VERSION;
  const fromEnv: Attributes = resourceAttributesFromEnv(env);
  return defaultResource().merge(resourceFromAttributes({ ...fromEnv, ...own }));
}
