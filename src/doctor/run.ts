/**
 * `sitehost-exporter doctor`: the platform side and the exporter's own setup checked in one go, with
 * the exporter's own API client (token, budget, retries), read requests only and a bounded number of
 * them (the token, then each endpoint in use once).
 */
import pino from "pino";
import { Registry } from "prom-client";
import { createApiClient } from "../api/client.js";
import { apiClientOptionsFromConfig } from "../api/options.js";
import type { Config } from "../config/schema.js";
import { VERSION } from "../version.js";
import { budgetFindings } from "./budget.js";
import { checkEndpoints } from "./endpoints.js";
import { checkExporter } from "./exporter.js";
import { checkOtlp } from "./otlp.js";
import { checkToken, deprecationFinding, scopesFinding } from "./platform.js";
import { failed, type DoctorReport, type Finding } from "./types.js";

export interface DoctorOptions {
  config: Config;
  env: NodeJS.ProcessEnv;
  configFile?: string;
}

async function requestsMade(registry: Registry): Promise<number> {
  const metric = registry.getSingleMetric("sitehost_exporter_api_requests_total");
  const values = (await metric?.get())?.values ?? [];
  return values.reduce((sum, v) => sum + v.value, 0);
}

export async function runDoctor({ config, env, configFile }: DoctorOptions): Promise<DoctorReport> {
  const registry = new Registry();
  const api = createApiClient({
    ...apiClientOptionsFromConfig(config.api, registry, pino({ level: "silent" })),
    revokeOnClose: false,
    // A refused connection, an unknown host or a scheme mismatch is reported at once, not after retries.
    failFast: true,
  });
  const findings: Finding[] = [];
  try {
    const token = await checkToken(api);
    findings.push(...token.findings);
    if (token.report) {
      const endpoints = await checkEndpoints(api, config);
      const scopes = scopesFinding(token.report, endpoints.findings);
      if (scopes) findings.push(scopes);
      findings.push(...endpoints.findings);
      findings.push(...budgetFindings(config, endpoints.answers, endpoints.siteCount));
      findings.push(deprecationFinding(api.deprecations()));
    }
  } finally {
    await api.close();
  }
  findings.push(...(await checkOtlp(config, env)));
  findings.push(...(await checkExporter(config)));
  return {
    version: VERSION,
    generatedAt: new Date().toISOString(),
    node: process.version,
    configFile,
    findings,
    apiRequests: await requestsMade(registry),
    exitCode: failed(findings) ? 1 : 0,
  };
}
