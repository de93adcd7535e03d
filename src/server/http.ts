/** The HTTP(S) server: /metrics, /-/healthy, /-/ready and the landing page. */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import type { Exposition } from "../metrics/exposition.js";
import { renderLanding, type LandingInfo } from "./landing.js";
import { BasicAuth, clientCertProblem, loadWebConfig, type WebConfig } from "./webConfig.js";

export type { LandingInfo } from "./landing.js";

export interface HttpServerOptions {
  listenAddress: string;
  telemetryPath: string;
  webConfigFile?: string;
  exposition: Exposition;
  readiness: () => { ready: boolean; reason?: string };
  landing: () => LandingInfo;
  logger: Logger;
}

export interface RunningHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `:10987`, `0.0.0.0:10987`, `127.0.0.1:0`, `[::1]:10987`. */
export function parseListenAddress(address: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address.trim());
  if (!m)
    throw new Error(
      `web.listenAddress: ${JSON.stringify(address)} is not host:port such as :10987 or 127.0.0.1:10987`,
    );
  const host = m[1] ?? (m[2] === "" ? undefined : m[2]);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`web.listenAddress: port ${port} is out of range`);
  return { host, port };
}

export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const web: WebConfig = opts.webConfigFile ? await loadWebConfig(opts.webConfigFile) : { headers: {} };
  // An empty basic_auth_users mapping means no authentication, as in exporter-toolkit.
  const auth = web.users && web.users.size > 0 ? new BasicAuth(web.users) : undefined;
  const log = opts.logger.child({ component: "http" });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const [k, v] of Object.entries(web.headers)) res.setHeader(k, v);
    // exporter-toolkit protects every path, health endpoints included.
    if (auth && !(await auth.check(req.headers.authorization))) {
      res.writeHead(401, {
        "www-authenticate": 'Basic realm="sitehost-exporter"',
        "content-type": "text/plain",
      });
      res.end("Unauthorized\n");
      return;
    }
    // The path as sent, without the query (new URL() would read `//x` as a host).
    const path = (req.url ?? "/").split("?")[0] as string;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" });
      res.end("Method Not Allowed\n");
      return;
    }
    if (path === opts.telemetryPath) {
      const exp = await opts.exposition.current();
      const wantsGzip = /\bgzip\b/i.test(String(req.headers["accept-encoding"] ?? ""));
      const body = wantsGzip ? exp.gzip : exp.body;
      res.writeHead(200, {
        "content-type": exp.contentType,
        "content-length": String(body.length),
        vary: "Accept-Encoding",
        ...(wantsGzip ? { "content-encoding": "gzip" } : {}),
      });
      res.end(req.method === "HEAD" ? undefined : body);
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
      res.end(r.ready ? "Ready\n" : `Not ready: ${r.reason ?? "starting"}\n`);
      return;
    }
    if (path === "/") {
      const html = renderLanding(opts.landing());
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(req.method === "HEAD" ? undefined : html);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("Not Found\n");
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err: (err as Error).message, path: req.url }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("Internal Server Error\n");
    });
  };
  const server: Server = web.tls
    ? createHttpsServer(
        {
          cert: web.tls.cert,
          key: web.tls.key,
          ca: web.tls.ca,
          requestCert: web.tls.requestCert,
          rejectUnauthorized: web.tls.rejectUnauthorized,
          minVersion: web.tls.minVersion,
          maxVersion: web.tls.maxVersion,
        },
        listener,
      )
    : createHttpServer(listener);
  const tls = web.tls;
  if (tls && tls.clientAuth !== "NoClientCert" && tls.clientAuth !== "RequestClientCert") {
    server.on("secureConnection", (socket: TLSSocket) => {
      const cert = socket.getPeerCertificate();
      const problem = clientCertProblem(
        tls.clientAuth,
        cert !== null && Object.keys(cert).length > 0,
        socket.authorized,
      );
      if (problem) {
        log.warn({ remote: socket.remoteAddress, reason: problem }, "TLS connection refused");
        socket.destroy();
      }
    });
  }
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 70_000;
  server.requestTimeout = 60_000;
  const { host, port } = parseListenAddress(opts.listenAddress);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = host === undefined || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const url = `${web.tls ? "https" : "http"}://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${addr.port}`;
  log.info(
    { address: opts.listenAddress, url, tls: Boolean(web.tls), basicAuth: Boolean(auth) },
    "listening",
  );
  return {
    url,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
