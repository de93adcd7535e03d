/**
 * Test helper: a real Alertmanager (Debian's /usr/bin/prometheus-alertmanager) on a free loopback port,
 * clustering off, routing every alert to a webhook receiver served by this test process.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "./ports.js";
import { startTool } from "./prometheus.js";

export const ALERTMANAGER_BIN = process.env.ALERTMANAGER_BIN ?? "/usr/bin/prometheus-alertmanager";

/** One alert of Alertmanager's webhook payload (version 4). */
export interface WebhookAlert {
  status: "firing" | "resolved";
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

export interface WebhookPayload {
  version: string;
  status: "firing" | "resolved";
  receiver: string;
  groupKey: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: WebhookAlert[];
}

export interface AlertmanagerOptions {
  /** Default 1s. */
  groupWait?: string;
  /** Default 1s. */
  groupInterval?: string;
  /** Default 1h. */
  repeatInterval?: string;
}

export interface RunningAlertmanager {
  url: string;
  /** Every webhook call received so far, in order. */
  received: WebhookPayload[];
  /** Resolves with the first received alert (past or future) matching `predicate`. */
  waitForAlert(predicate: (alert: WebhookAlert) => boolean, timeoutMs: number): Promise<WebhookAlert>;
  logs(): string;
  close(): Promise<void>;
}

async function startWebhook(
  onPayload: (p: WebhookPayload) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        onPayload(JSON.parse(Buffer.concat(chunks).toString("utf8")) as WebhookPayload);
        res.writeHead(200).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhook`, server };
}

export async function startAlertmanager(opts: AlertmanagerOptions = {}): Promise<RunningAlertmanager> {
  const received: WebhookPayload[] = [];
  const listeners = new Set<() => void>();
  const webhook = await startWebhook((p) => {
    received.push(p);
    for (const l of listeners) l();
  });
  const dir = await mkdtemp(join(tmpdir(), "sitehost-alertmanager-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = {
    route: {
      receiver: "test",
      group_by: ["alertname", "site"],
      group_wait: opts.groupWait ?? "1s",
      group_interval: opts.groupInterval ?? "1s",
      repeat_interval: opts.repeatInterval ?? "1h",
    },
    receivers: [{ name: "test", webhook_configs: [{ url: webhook.url, send_resolved: true }] }],
  };
  const configFile = join(dir, "alertmanager.yml");
  await writeFile(configFile, stringify(config));
  const { logs, close } = await startTool(
    ALERTMANAGER_BIN,
    [
      `--config.file=${configFile}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
      "--log.level=warn",
    ],
    `${url}/-/ready`,
    async () => {
      await new Promise<void>((resolve) => webhook.server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  );

  const waitForAlert = (predicate: (a: WebhookAlert) => boolean, timeoutMs: number): Promise<WebhookAlert> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = received.flatMap((p) => p.alerts).find(predicate);
        if (!hit) return false;
        listeners.delete(listener);
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const listener = (): void => void check();
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`no matching alert within ${timeoutMs} ms; received ${JSON.stringify(received)}`));
      }, timeoutMs);
      listeners.add(listener);
      check();
    });

  return { url, received, waitForAlert, logs, close };
}
