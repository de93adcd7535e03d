/** The HTTP(S) server: /metrics, /-/healthy, /-/ready, /-/status, /sd/probes, the landing page, the webhook receiver. */
import type { IncomingHttpHeaders, Server as HttpServer } from "node:http";
import { createSecureServer, type Http2Session } from "node:http2";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Server as TlsServer } from "node:tls";
import type { Logger } from "pino";
import { listenFailure, parseListenAddress } from "../config/listenAddress.js";
import { redactQueryToken } from "../config/redact.js";
import type { Exposition } from "../metrics/exposition.js";
import { negotiateFormat } from "../metrics/openMetrics.js";
import { SD_PROBES_PATH, type TargetGroup } from "../probes/targets.js";
import { DEFAULT_AUTH_LIMITS, type BasicAuthLimits } from "./basicAuth.js";
import type { PasswordVerifier } from "./bcryptPool.js";
import { renderLanding } from "./landing.js";
import { createServer as createHttpServer } from "../util/nodeHttp.js";
import type { StatusReport } from "./status.js";
import { loadWebConfig, type WebConfig } from "./webConfig.js";
import { refuseClientsOutsidePolicy } from "./clientCertPolicy.js";
import { watchWebConfig } from "./webConfigReload.js";
import type { TlsSettings } from "./webConfigTls.js";
import { secureContextOf, WebSettingsFactory } from "./webSettings.js";
import type { WebhookHandler, WebhookRequest, WebhookResponse } from "../webhooks/handler.js";

/**
 * Connection deadlines, as Go's http.Server has them (ReadHeaderTimeout, ReadTimeout,
 * IdleTimeout, and the TLS handshake bounded by them): a client that connects and sends
 * nothing, or sends slowly, cannot hold a connection open.
 */
export interface ServerTimeouts {
  /** From accepting the connection to the end of the TLS handshake. */
  tlsHandshakeMs: number;
  /** From the start of a request (or of the connection) to the end of its headers. */
  headersMs: number;
  /** For the whole request, and the longest a socket may go without any traffic while a request is open. */
  requestMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  idleMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  tlsHandshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 60_000,
  // A little over a minute, so a one-minute scrape interval keeps reusing its connection.
  idleMs: 65_000,
};

/** How long close() lets responses in flight finish before it drops their connections. */
const CLOSE_GRACE_MS = 2_000;

export interface HttpServerOptions {
  listenAddress: string;
  telemetryPath: string;
  webConfigFile?: string;
  exposition: Exposition;
  readiness: () => { ready: boolean; reason?: string };
  /** What the landing page and /-/status show. */
  status: () => StatusReport;
  logger: Logger;
  timeouts?: Partial<ServerTimeouts>;
  authLimits?: Partial<BasicAuthLimits>;
  /** Replaces the bcrypt worker pool (tests). */
  verifyPassword?: PasswordVerifier;
  /** Prometheus HTTP SD targets for blackbox_exporter, at SD_PROBES_PATH (absent: not served). */
  probeTargets?: () => readonly TargetGroup[];
  /** The webhook receiver: POST on its path, authenticated by its own token, not by basic auth. */
  webhook?: { path: string; handle: WebhookHandler };
  /** How often the web config file is re-read (default WEB_CONFIG_RELOAD_MS; tests shorten it). */
  webConfigReloadMs?: number;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** What the handler needs of a request and a response, HTTP/1.1 and HTTP/2 alike. */
interface Req {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}
interface Res {
  headersSent: boolean;
  setHeader(name: string, value: string): unknown;
  writeHead(status: number, headers?: Record<string, string>): unknown;
  write(chunk: Uint8Array): unknown;
  end(): unknown;
  end(body: string | Uint8Array): unknown;
}

/** Ends the response, with `body` unless the request was HEAD; a body in parts is written part by part. */
function finish(req: Req, res: Res, body: string | Uint8Array | readonly Uint8Array[]): void {
  if (req.method === "HEAD") res.end();
  else if (typeof body === "string" || body instanceof Uint8Array) res.end(body);
  else {
    // The socket gathers the parts: no copy into one buffer first.
    for (const part of body) res.write(part);
    res.end();
  }
}

export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const web: WebConfig = opts.webConfigFile
    ? await loadWebConfig(opts.webConfigFile)
    : { headers: {}, http2: false };
  const timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const log = opts.logger.child({ component: "http" });
  const factory = new WebSettingsFactory({ ...DEFAULT_AUTH_LIMITS, ...opts.authLimits }, opts.verifyPassword);
  // Replaced whenever the web config file is reloaded (webConfigReload.ts).
  let current = factory.build(web);
  const { host, port } = parseListenAddress(opts.listenAddress);

  async function handle(req: Req, res: Res): Promise<void> {
    // The path as sent, without the query (new URL() would read `//x` as a host).
    const path = (req.url ?? "/").split("?")[0] as string;
    const { auth, limit, everyResponse, landingResponse } = current;
    for (const [k, v] of path === "/" ? landingResponse : everyResponse) res.setHeader(k, v);
    // The platform can send no Authorization header of ours: the webhook has its own token.
    if (opts.webhook && path === opts.webhook.path) {
      await opts.webhook.handle(req as unknown as WebhookRequest, res as unknown as WebhookResponse);
      return;
    }
    // The web config's rate_limit, before any password check (the platform's webhooks are not its to limit).
    if (limit && !limit.take()) {
      res.writeHead(429, { "retry-after": String(limit.retryAfterSeconds()), "content-type": "text/plain" });
      res.end("Too Many Requests: over the web config's rate_limit\n");
      return;
    }
    // exporter-toolkit protects every other path, health endpoints included.
    const verdict = auth ? await auth.check(req.headers.authorization) : "ok";
    if (verdict === "busy") {
      res.writeHead(429, { "retry-after": "1", "content-type": "text/plain" });
      res.end("Too Many Requests: password checks are saturated\n");
      return;
    }
    if (verdict === "denied") {
      res.writeHead(401, {
        "www-authenticate": 'Basic realm="sitehost-exporter"',
        "content-type": "text/plain",
      });
      res.end("Unauthorized\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" });
      res.end("Method Not Allowed\n");
      return;
    }
    if (path === opts.telemetryPath) {
      // A scraper is its address and User-Agent: a steady one's next exposition is rendered ahead.
      const scraper = `${req.socket.remoteAddress ?? ""} ${String(req.headers["user-agent"] ?? "")}`;
      const exp = await opts.exposition.current(negotiateFormat(req.headers.accept), scraper);
      const wantsGzip = /\bgzip\b/i.test(String(req.headers["accept-encoding"] ?? ""));
      res.writeHead(200, {
        "content-type": exp.contentType,
        "content-length": String(wantsGzip ? exp.gzipLength : exp.body.length),
        vary: "Accept, Accept-Encoding",
        ...(wantsGzip ? { "content-encoding": "gzip" } : {}),
      });
      finish(req, res, wantsGzip ? exp.gzipParts : exp.body);
      return;
    }
    if (path === "/-/healthy") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("Healthy\n");
      return;
    }
    if (path === "/-/ready") {
      const r = opts.readiness();
      res.writeHead(r.ready ? 200 : 503, { "content-type": "text/plain" });
      // Ready with a reason: the wait for first runs ran out (web.readyTimeout); say which still go.
      res.end(
        r.ready ? (r.reason ? `Ready; ${r.reason}\n` : "Ready\n") : `Not ready: ${r.reason ?? "starting"}\n`,
      );
      return;
    }
    if (path === "/") {
      const html = renderLanding(opts.status());
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      finish(req, res, html);
      return;
    }
    const body =
      path === "/-/status" ? opts.status() : path === SD_PROBES_PATH ? opts.probeTargets?.() : undefined;
    if (body !== undefined) {
      const json = `${JSON.stringify(body, null, 2)}\n`;
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      finish(req, res, json);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("Not Found\n");
  }

  const listener = (req: Req, res: Res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err, path: redactQueryToken(req.url ?? "") }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("Internal Server Error\n");
    });
  };
  const http1Timeouts = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.idleMs,
    // Node checks the header and request deadlines on this interval (30 s by default).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
  };
  const tlsOptions = web.tls && {
    ...secureContextOf(web.tls),
    requestCert: web.tls.requestCert,
    rejectUnauthorized: web.tls.rejectUnauthorized,
    handshakeTimeout: timeouts.tlsHandshakeMs,
  };
  const http2 = Boolean(tlsOptions && web.http2);
  const server: HttpServer = tlsOptions
    ? web.http2
      ? (createSecureServer(
          { ...tlsOptions, ...http1Timeouts, allowHTTP1: true },
          listener,
        ) as unknown as HttpServer)
      : createHttpsServer({ ...tlsOptions, ...http1Timeouts }, listener)
    : createHttpServer(http1Timeouts, listener);
  // Any socket without traffic for this long while a request is open (a client that stopped
  // reading the response, an HTTP/2 session gone quiet) is closed.
  server.setTimeout(timeouts.requestMs);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const sessions = new Set<Http2Session>();
  if (http2) {
    server.on("session", (session: Http2Session) => {
      sessions.add(session);
      session.setTimeout(timeouts.idleMs, () => session.close());
      session.once("close", () => sessions.delete(session));
    });
  }
  let tlsNow = web.tls;
  if (tlsNow) refuseClientsOutsidePolicy(server, () => tlsNow as TlsSettings, log);
  const watch =
    opts.webConfigFile &&
    watchWebConfig(
      opts.webConfigFile,
      web,
      (next) => {
        current = factory.build(next);
        // New connections get the new certificate, key and client CA; TLS on or off waits for a restart.
        if (tlsNow && next.tls) {
          (server as unknown as TlsServer).setSecureContext(secureContextOf(next.tls));
          tlsNow = next.tls;
        }
      },
      log,
      opts.webConfigReloadMs,
    );
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(listenFailure(err, opts.listenAddress));
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = host === undefined || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const url = `${web.tls ? "https" : "http"}://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${addr.port}`;
  log.info(
    {
      address: opts.listenAddress,
      url,
      tls: Boolean(web.tls),
      http2,
      basicAuth: Boolean(current.auth),
      webhookPath: opts.webhook?.path,
    },
    "listening",
  );
  return {
    url,
    port: addr.port,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        for (const session of sessions) session.close();
        // Responses in flight get a moment to finish; a client that never lets its HTTP/2
        // streams end must not hold up the daemon's shutdown.
        setTimeout(() => {
          for (const session of sessions) session.destroy();
          for (const socket of sockets) socket.destroy();
        }, CLOSE_GRACE_MS).unref();
      });
      if (watch) watch.stop();
      await factory.close();
    },
  };
}
