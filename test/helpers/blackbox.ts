/**
 * Test helper: Debian's blackbox_exporter (prometheus-blackbox-exporter) on a free loopback port with
 * the given modules, for Prometheus to scrape at /probe.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./ports.js";
import { startTool } from "./prometheus.js";

export const BLACKBOX_BIN = process.env.BLACKBOX_EXPORTER_BIN ?? "/usr/bin/prometheus-blackbox-exporter";

export interface RunningBlackbox {
  /** host:port, as a scrape target's address. */
  address: string;
  logs(): string;
  close(): Promise<void>;
}

export async function startBlackbox(modules: Record<string, unknown>): Promise<RunningBlackbox> {
  const dir = await mkdtemp(join(tmpdir(), "sitehost-blackbox-"));
  const port = await freePort();
  const configFile = join(dir, "blackbox.yml");
  await writeFile(configFile, stringify({ modules }));
  const { logs, close } = await startTool(
    BLACKBOX_BIN,
    [`--config.file=${configFile}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"],
    `http://127.0.0.1:${port}/-/healthy`,
    () => rm(dir, { recursive: true, force: true }),
  );
  return { address: `127.0.0.1:${port}`, logs, close };
}

/**
 * The Prometheus job docs/probes.md gives: the targets of an exporter's /sd/probes, each scraped
 * from blackbox_exporter's /probe with the URL and module as parameters, the URL as the instance.
 */
export function probesJob(sdUrl: string, blackboxAddress: string, interval = "2s"): Record<string, unknown> {
  return {
    job_name: "sitehost-probes",
    metrics_path: "/probe",
    scrape_interval: interval,
    scrape_timeout: interval,
    http_sd_configs: [{ url: sdUrl, refresh_interval: interval }],
    relabel_configs: [
      { source_labels: ["__address__"], target_label: "__param_target" },
      { source_labels: ["module"], target_label: "__param_module" },
      { source_labels: ["__param_target"], target_label: "instance" },
      { target_label: "__address__", replacement: blackboxAddress },
    ],
  };
}
