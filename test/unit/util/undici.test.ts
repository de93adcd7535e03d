/**
 * undici's Agent and request come from their own modules: the same objects the package's index
 * exports, and the daemon's modules leave the index (all of undici, 2.8 MB of heap) unloaded. The
 * second test needs the build (`npm test` builds first).
 */
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { Agent, request } from "../../../src/util/undici.js";

const root = resolve(import.meta.dirname, "../../..");

describe("undici without its index", () => {
  it("is the Agent the package exports, and sends a request with its path, query, headers and body", async () => {
    const undici = createRequire(import.meta.url)("undici") as { Agent: unknown };
    expect(Agent).toBe(undici.Agent);
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () =>
        res.end(JSON.stringify({ method: req.method, url: req.url, h: req.headers.x, body })),
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const agent = new Agent();
    try {
      const { port } = server.address() as AddressInfo;
      const res = await request(`http://127.0.0.1:${port}/a/b?c=1&d=2`, {
        method: "POST",
        dispatcher: agent,
        headers: { x: "y" },
        body: "hello",
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ method: "POST", url: "/a/b?c=1&d=2", h: "y", body: "hello" });
    } finally {
      await agent.close();
      server.close();
    }
  });

  it("the daemon's modules, the OTLP sink and the doctor's probe included, do not load the index", () => {
    const built = [
      "dist/src/cli/program.js",
      "dist/src/daemon.js",
      "dist/src/logs/otlp/sink.js",
      "dist/src/logs/otlp/probe.js",
    ].map((f) => resolve(root, f));
    for (const file of built) expect(existsSync(file), `${file}: run npm run build`).toBe(true);
    const imports = built.map((f) => `await import(${JSON.stringify(pathToFileURL(f).href)});`).join(" ");
    const loaded = (code: string): string =>
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { createRequire } from "node:module"; ${code} ` +
            `const cache = createRequire(${JSON.stringify(`${root}/`)}).cache; ` +
            `console.log(Object.keys(cache).filter((k) => k.includes("undici")).map((k) => k.slice(k.lastIndexOf("undici"))).join(","));`,
        ],
        { cwd: root, encoding: "utf8" },
      );
    // The check can tell: importing the package loads its index.
    expect(loaded(`await import("undici");`)).toContain("undici/index.js");
    const daemon = loaded(imports);
    expect(daemon).toContain("undici/lib/api/api-request.js");
    expect(daemon).not.toContain("undici/index.js");
  });
});
