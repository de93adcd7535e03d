/** The OpenTelemetry resource every log record carries. */
import type { Attributes } from "@opentelemetry/api";
import { defaultResource, resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import { resourceAttributesFromEnv } from "../config/otelEnv.js";
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
