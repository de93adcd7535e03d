/**
 * What probing the sites costs the prober: Debian's blackbox_exporter probing a local HTTPS site (TLS
 * verified against its CA, an HTML page of 20 KB, module http_2xx as the chart configures it) as
 * Prometheus would, one GET /probe per target and interval, at a steady rate for a while; its CPU
 * (utime + stime from /proc) and resident memory sampled before and after, and the series one probe
 * returns (what Prometheus stores per target). Projected to 5,000 sites probed once a minute
 * (83 probes a second).
 *
 *   node dist/bench/probeCost.js [probes per second, 50] [seconds, 30]
 *
 * Loopback only; needs prometheus-blackbox-exporter and openssl.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./daemon.js";

const BLACKBOX = process.env.BLACKBOX_EXPORTER_BIN ?? "/usr/bin/prometheus-blackbox-exporter";
const SITES = 5000;
const PROBE_INTERVAL_S = 60;
const rate = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 30);
const TICKS_PER_S = 100;

/** CPU seconds and resident bytes of a process. */
function usage(pid: number): { cpuS: number; rssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const cpuS = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  const rss = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return { cpuS, rssBytes: Number(rss) * 1024 };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sitehost-probe-cost-"));
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-keyout", "site.key", "-out", "site.pem", "-days", "2", "-subj", "/CN=site"],
      ...["-addext", "subjectAltName=IP:127.0.0.1"],
    ],
    { cwd: dir, stdio: "pipe" },
  );
  const page = `<!doctype html><html><body>${"<p>Lorem ipsum dolor sit amet.</p>".repeat(600)}</body></html>`;
  const site = createServer(
    { key: readFileSync(join(dir, "site.key")), cert: readFileSync(join(dir, "site.pem")) },
    (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(page),
  );
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  const target = `https://127.0.0.1:${(site.address() as AddressInfo).port}/`;

  const port = await freePort();
  writeFileSync(
    join(dir, "blackbox.yml"),
    stringify({
      modules: {
        http_2xx: {
          prober: "http",
          timeout: "14s",
          http: {
            preferred_ip_protocol: "ip4",
            follow_redirects: true,
            tls_config: { ca_file: join(dir, "site.pem") },
          },
        },
      },
    }),
  );
  const blackbox = spawn(
    BLACKBOX,
    [
      `--config.file=${join(dir, "blackbox.yml")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: "ignore" },
  );
  const probeUrl = `http://127.0.0.1:${port}/probe?module=http_2xx&target=${encodeURIComponent(target)}`;
  const probe = async () => {
    const res = await fetch(probeUrl, { headers: { "X-Prometheus-Scrape-Timeout-Seconds": "15" } });
    return res.text();
  };
  for (let i = 0; ; i++) {
    try {
      await probe();
      break;
    } catch {
      if (i > 100) throw new Error("blackbox_exporter did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const body = await probe();
  const series = body.split("\n").filter((l) => l && !l.startsWith("#")).length;
  if (!/^probe_success 1$/m.test(body)) throw new Error(`the probe failed:\n${body}`);
  // Warm up, then the measured run at a steady rate.
  await Promise.all(Array.from({ length: 50 }, probe));
  const pid = blackbox.pid as number;
  const before = usage(pid);
  const started = performance.now();
  let done = 0;
  let failed = 0;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < rate * seconds; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      probe().then(
        (b) => (/^probe_success 1$/m.test(b) ? done++ : failed++, undefined),
        () => (failed++, undefined),
      ),
    );
  }
  await Promise.all(inFlight);
  const elapsedS = (performance.now() - started) / 1000;
  const after = usage(pid);
  blackbox.kill("SIGTERM");
  site.close();
  rmSync(dir, { recursive: true, force: true });

  const cpuPerProbeMs = ((after.cpuS - before.cpuS) * 1000) / (done + failed);
  const fleetRate = SITES / PROBE_INTERVAL_S;
  console.log(`${done + failed} probes in ${elapsedS.toFixed(1)} s (${rate}/s asked), ${failed} failed`);
  console.log(`blackbox_exporter CPU per probe: ${cpuPerProbeMs.toFixed(2)} ms`);
  console.log(
    `blackbox_exporter RSS: ${(before.rssBytes / 2 ** 20).toFixed(0)} MB before, ${(after.rssBytes / 2 ** 20).toFixed(0)} MB after`,
  );
  console.log(`series per probe (what Prometheus stores per target): ${series}`);
  console.log(
    `at ${SITES} sites every ${PROBE_INTERVAL_S} s: ${fleetRate.toFixed(1)} probes/s, ${((fleetRate * cpuPerProbeMs) / 1000).toFixed(2)} cores of blackbox_exporter, ${SITES * series} probe series in Prometheus (${((SITES * series) / PROBE_INTERVAL_S).toFixed(0)} samples/s)`,
  );
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
