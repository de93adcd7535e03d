/**
 * A loopback proxy in front of the simulator that plants one fault the simulator has no knob for: an
 * endpoint refused (403, a scope the API application lacks), one endpoint's answer rewritten (a
 * renamed field: schema drift), or headers added to its answers (Deprecation, Sunset). Everything else
 * passes through unchanged.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";

export interface FaultProxy {
  apiUrl: string;
  authUrl: string;
  /** Requests seen, as `METHOD /path`. */
  seen: string[];
  close(): Promise<void>;
}

export interface Faults {
  /** Paths (regular expressions over the path, query excluded) answered 403. */
  forbid?: RegExp;
  /** Rewrite the JSON answer of matching paths. */
  rewrite?: { path: RegExp; body: (json: unknown) => unknown };
  /** Headers added to the answers of matching paths. */
  addHeaders?: { path: RegExp; headers: Record<string, string> };
}

export async function startFaultProxy(upstream: string, faults: Faults): Promise<FaultProxy> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const path = (req.url ?? "/").split("?")[0] as string;
        seen.push(`${req.method} ${path}`);
        if (faults.forbid?.test(path)) {
          res.writeHead(403, { "content-type": "application/json" });
          res.end(JSON.stringify({ message: "Forbidden", data: null, errors: ["insufficient scope"] }));
          return;
        }
        const headers = { ...req.headers };
        delete headers.host;
        delete headers["content-length"];
        const up = await request(`${upstream}${req.url ?? "/"}`, {
          method: req.method as "GET",
          headers,
          body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
        });
        let text = await up.body.text();
        if (faults.rewrite?.path.test(path) && up.statusCode === 200) {
          text = JSON.stringify(faults.rewrite.body(JSON.parse(text)));
        }
        res.writeHead(up.statusCode, {
          "content-type": "application/json",
          date: new Date().toUTCString(),
          ...(faults.addHeaders?.path.test(path) ? faults.addHeaders.headers : {}),
        });
        res.end(text);
      })().catch((err: unknown) => {
        res.writeHead(502);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: `${base}/v1`,
    authUrl: base,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
