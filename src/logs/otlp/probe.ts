/**
 * One empty export to the OTLP endpoint (doctor): does something there take OTLP log exports? An
 * empty ExportLogsServiceRequest (zero bytes in protobuf, `{}` in JSON) is valid OTLP and writes
 * nothing. For gRPC, only the connection is tried (an empty call needs the gRPC stack).
 */
import { connect } from "node:net";
import { Agent, request } from "../../util/undici.js";
import { VERSION } from "../../version.js";
import { readAnswer } from "./answer.js";
import { classifyHttpStatus, redactOutcome, type ExportOutcome } from "./outcome.js";
import { headerRedactor, tlsOptions, type OtlpSettings } from "./settings.js";

export interface OtlpProbe {
  /** accepted: a 2xx to the empty export; connected: gRPC, a TCP connection only. */
  result: "accepted" | "connected" | "failed";
  status?: number;
  latencyMs: number;
  /** The failure as ExportHealth words it (network codes, statuses, a 2xx that is not OTLP). */
  outcome?: Exclude<ExportOutcome, { kind: "accepted" }>;
}

function grpcTarget(url: string): { host: string; port: number } {
  const u = new URL(/^\w+:\/\//.test(url) ? url : `https://${url}`);
  return { host: u.hostname, port: Number(u.port) || (u.protocol === "http:" ? 80 : 443) };
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (code: string | undefined) => {
      socket.destroy();
      resolve(code);
    };
    socket.setTimeout(timeoutMs, () => done("ETIMEDOUT"));
    socket.once("connect", () => done(undefined));
    socket.once("error", (err: NodeJS.ErrnoException) => done(err.code ?? err.name));
  });
}

export async function probeOtlpEndpoint(settings: OtlpSettings): Promise<OtlpProbe> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  if (settings.protocol === "grpc") {
    const { host, port } = grpcTarget(settings.url);
    const code = await tcpConnect(host, port, settings.timeoutMs);
    return code
      ? { result: "failed", latencyMs: elapsed(), outcome: { kind: "retry", reason: code } }
      : { result: "connected", latencyMs: elapsed() };
  }
  const json = settings.protocol === "http/json";
  const tls = await tlsOptions(settings);
  const agent = new Agent(tls ? { connect: tls } : {});
  try {
    const res = await request(settings.url, {
      method: "POST",
      dispatcher: agent,
      headers: {
        ...settings.headers,
        "content-type": json ? "application/json" : "application/x-protobuf",
        "user-agent": `sitehost-exporter/${VERSION} (doctor)`,
      },
      body: json ? "{}" : new Uint8Array(0),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    const text = body
      .subarray(0, 200)
      .toString("utf8")
      .replace(/[^\x20-\x7e]+/g, " ")
      .trim();
    if (res.statusCode >= 200 && res.statusCode < 300) {
      // A 2xx counts only with an OTLP answer: a proxy's login page is not a collector.
      const contentType = res.headers["content-type"];
      const read = readAnswer(
        `HTTP ${res.statusCode}`,
        Array.isArray(contentType) ? contentType[0] : contentType,
        body,
        json ? "json" : "protobuf",
      );
      return read.kind === "accepted"
        ? { result: "accepted", status: res.statusCode, latencyMs: elapsed() }
        : {
            result: "failed",
            status: res.statusCode,
            latencyMs: elapsed(),
            outcome: redactOutcome(read, headerRedactor(settings.headers)),
          };
    }
    const outcome = redactOutcome(classifyHttpStatus(res.statusCode, text), headerRedactor(settings.headers));
    return {
      result: "failed",
      status: res.statusCode,
      latencyMs: elapsed(),
      outcome: outcome.kind === "accepted" ? { kind: "refused", reason: `HTTP ${res.statusCode}` } : outcome,
    };
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).name;
    const reason =
      code === "TimeoutError" || code === "AbortError" ? `no answer within ${settings.timeoutMs} ms` : code;
    return { result: "failed", latencyMs: elapsed(), outcome: { kind: "retry", reason } };
  } finally {
    await agent.close();
  }
}
