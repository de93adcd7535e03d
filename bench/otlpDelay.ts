/**
 * A loopback OTLP/HTTP logs receiver for benchmarks (the exporter set to `http/json`): for each
 * record received, how long after its entry's time it arrived, by stream (`sitehost.log.stream`),
 * and how many record uids came twice.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

interface JsonValue {
  stringValue?: string;
}
interface JsonRecord {
  timeUnixNano?: string;
  attributes?: Array<{ key: string; value?: JsonValue }>;
}
interface JsonRequest {
  resourceLogs?: Array<{ scopeLogs?: Array<{ logRecords?: JsonRecord[] }> }>;
}

export interface DelayReceiver {
  /** For OTEL_EXPORTER_OTLP_LOGS_ENDPOINT. */
  endpoint: string;
  /** From now on, record delays (records before are counted for doubles only). */
  measure(): void;
  /** Delays in seconds by stream, of the records received since `measure`. */
  delays: Map<string, number[]>;
  records: number;
  doubled: number;
  close(): Promise<void>;
}

export async function startDelayReceiver(): Promise<DelayReceiver> {
  const seen = new Set<string>();
  let measuring = false;
  const out: Omit<DelayReceiver, "endpoint" | "measure" | "close"> = {
    delays: new Map(),
    records: 0,
    doubled: 0,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const now = Date.now();
      let body = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const parsed = JSON.parse(body.toString("utf8")) as JsonRequest;
      for (const rl of parsed.resourceLogs ?? [])
        for (const sl of rl.scopeLogs ?? [])
          for (const r of sl.logRecords ?? []) {
            const attr = (k: string) => r.attributes?.find((a) => a.key === k)?.value?.stringValue;
            const uid = attr("log.record.uid");
            if (uid !== undefined) {
              if (seen.has(uid)) out.doubled += 1;
              seen.add(uid);
            }
            out.records += 1;
            if (!measuring || r.timeUnixNano === undefined) continue;
            const stream = attr("sitehost.log.stream") ?? "unknown";
            const list = out.delays.get(stream) ?? [];
            list.push((now - Number(BigInt(r.timeUnixNano) / 1_000_000n)) / 1000);
            out.delays.set(stream, list);
          }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(out, {
    endpoint: `http://127.0.0.1:${port}/v1/logs`,
    measure: () => {
      measuring = true;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

/** The `q` quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
