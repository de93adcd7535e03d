/**
 * The exporter's own setup: the checkpoint directory (writable, free space, who holds its lock, the
 * shard layout it was written under), the webhook receiver and the web listener. Reads only: nothing
 * is created or changed (the writability probe leaves the directory as it found it).
 */
import { statfs } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { checkCheckpointDir } from "../config/checkpointDir.js";
import { ConfigError } from "../config/errors.js";
import type { Config } from "../config/schema.js";
import { GenerationFiles } from "../ha/lockFiles.js";
import { parseHolder } from "../ha/lockHolder.js";
import { readShardLayout } from "../ha/shardLayout.js";
import { loadWebConfig } from "../server/webConfig.js";
import type { Finding } from "./types.js";

/** Free space below which the checkpoint volume is a warning (a full volume stops shipping). */
const LOW_SPACE_BYTES = 256 * 1024 * 1024;

/** statfs of the directory, or of its nearest existing parent. */
async function freeBytes(dir: string): Promise<number | undefined> {
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      const s = await statfs(at);
      return s.bavail * s.bsize;
    } catch {
      if (dirname(at) === at) return undefined;
    }
  }
}

async function lockHolder(dir: string): Promise<string> {
  const files = new GenerationFiles(join(dir, "lock"), "doctor");
  try {
    const { top } = await files.list();
    if (top === 0) return "no exporter holds its lock";
    const holder = parseHolder((await files.read(top)) ?? "");
    if (!holder) return `its lock (generation ${top}) is unreadable; it is taken over after logs.lockTimeout`;
    const age = Math.round((Date.now() - Date.parse(holder.heartbeatAt)) / 1000);
    return holder.released
      ? `its lock was released by ${holder.host} (pid ${holder.pid})`
      : `its lock is held by ${holder.host} (pid ${holder.pid}), heartbeat ${age} s ago`;
  } catch {
    return "no exporter holds its lock";
  }
}

async function checkpointFinding(config: Config): Promise<Finding> {
  const dir = config.logs.checkpointDir;
  const title = "Checkpoint directory";
  if (!config.logs.enabled && !config.webhooks.enabled) {
    return {
      id: "checkpoints",
      section: "exporter",
      title,
      verdict: "pass",
      summary: "not used (logs and webhooks off)",
    };
  }
  const { problem, warning } = await checkCheckpointDir(dir, "probe");
  if (problem) {
    return {
      id: "checkpoints",
      section: "exporter",
      title,
      verdict: "fail",
      summary: problem,
      fix: "point logs.checkpointDir (SITEHOST_CHECKPOINT_DIR) at a writable, persistent volume",
    };
  }
  const free = await freeBytes(dir);
  const layout = await readShardLayout(dir);
  const { index, count } = config.sites.shard;
  const moved = layout !== undefined && (layout.index !== index || layout.count !== count);
  const low = warning !== undefined || (free !== undefined && free < LOW_SPACE_BYTES);
  const parts = [
    warning ?? `${resolve(dir)} is writable`,
    free === undefined ? "free space unknown" : `${Math.round(free / 1024 / 1024)} MiB free`,
    await lockHolder(dir),
    layout ? `written under shard ${layout.index}/${layout.count}` : "no shard layout recorded yet",
  ];
  return {
    id: "checkpoints",
    section: "exporter",
    title,
    verdict: low || moved ? "warn" : "pass",
    summary: parts.join("; "),
    ...(low
      ? { fix: "free space on the checkpoint volume: when it is full, shipping stops until space returns" }
      : moved
        ? {
            fix: `this config's shard is ${index}/${count}: at start the checkpoints of sites that moved are archived`,
          }
        : {}),
    details: { freeBytes: free, shardLayout: layout },
  };
}

function webhookFinding(config: Config): Finding {
  const title = "Webhook receiver";
  const { enabled, path, token } = config.webhooks;
  if (!enabled)
    return {
      id: "webhooks",
      section: "exporter",
      title,
      verdict: "pass",
      summary: "off (webhooks.enabled: false)",
    };
  return {
    id: "webhooks",
    section: "exporter",
    title,
    verdict: token ? "pass" : "fail",
    summary: `POST ${path} on ${config.web.listenAddress}; token ${token ? "set" : "missing"}`,
    ...(token ? {} : { fix: "set SITEHOST_WEBHOOK_TOKEN or SITEHOST_WEBHOOK_TOKEN_FILE" }),
  };
}

async function webFinding(config: Config): Promise<Finding> {
  const title = "Web listener";
  const { listenAddress, telemetryPath, configFile } = config.web;
  if (!configFile) {
    return {
      id: "web",
      section: "exporter",
      title,
      verdict: "pass",
      summary: `${listenAddress}, ${telemetryPath}, plain HTTP without authentication (no --web.config.file)`,
    };
  }
  try {
    const web = await loadWebConfig(configFile);
    return {
      id: "web",
      section: "exporter",
      title,
      verdict: "pass",
      summary: `${listenAddress}, ${telemetryPath}; ${configFile}: TLS ${web.tls ? "on" : "off"}, basic auth ${web.users ? `for ${web.users.size} user(s)` : "off"}`,
    };
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems.join("; ") : (err as Error).message;
    return {
      id: "web",
      section: "exporter",
      title,
      verdict: "fail",
      summary: problems,
      fix: "fix the web config file (docs/web-config.md)",
    };
  }
}

export async function checkExporter(config: Config): Promise<Finding[]> {
  return [await checkpointFinding(config), webhookFinding(config), await webFinding(config)];
}
