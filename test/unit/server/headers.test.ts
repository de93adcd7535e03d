/** Security headers on every response, the landing page's Content-Security-Policy, and configured headers. */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadWebConfig } from "../../../src/server/webConfig.js";
import { send, serverRig } from "./helpers.js";
import { configProblems, yamlFiles } from "../../helpers/config.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-headers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const webFile = yamlFiles(dir);

const rig = serverRig();
afterEach(() => rig.close());

async function start(webConfigFile?: string): Promise<string> {
  const server = await rig.start(webConfigFile, { readiness: () => ({ ready: false, reason: "starting" }) });
  return server.url;
}

/** Every directive of a Content-Security-Policy header, by name. */
function directives(csp: unknown): Map<string, string[]> {
  return new Map(
    String(csp)
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name as string, values]),
  );
}

describe("security headers by default", () => {
  it("X-Content-Type-Options: nosniff on every response, errors included", async () => {
    const url = await start();
    const replies = [
      await send(`${url}/metrics`),
      await send(`${url}/`),
      await send(`${url}/-/healthy`),
      await send(`${url}/-/ready`), // 503
      await send(`${url}/nope`), // 404
      await send(`${url}/metrics`, { method: "POST" }), // 405
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 503, 404, 405]);
    for (const r of replies) expect(r.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("401 answers carry it too", async () => {
    const hash = bcrypt.hashSync("pw", 4);
    const url = await start(webFile(`basic_auth_users:\n  alice: '${hash}'\n`));
    const r = await send(`${url}/metrics`);
    expect(r.status).toBe(401);
    expect(r.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("the landing page has a restrictive Content-Security-Policy that still allows its own style", async () => {
    const url = await start();
    const r = await send(`${url}/`);
    const csp = directives(r.headers["content-security-policy"]);
    expect(csp.get("default-src")).toEqual(["'none'"]);
    expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
    expect(String(r.headers["content-security-policy"])).not.toContain("unsafe-inline");
    // The browser hashes the text of the <style> element: it must be the one the policy allows.
    const style = /<style>([\s\S]*?)<\/style>/.exec(r.body.toString())?.[1] as string;
    const digest = createHash("sha256").update(style).digest("base64");
    expect(csp.get("style-src")).toEqual([`'sha256-${digest}'`]);
    expect(r.body.toString()).not.toMatch(/<script|style="/);
  });
});

describe("http_server_config.headers", () => {
  it("are added to every response, and replace a default of the same name (any case)", async () => {
    const url = await start(
      webFile(
        "http_server_config:\n  headers:\n    X-Frame-Options: deny\n    content-security-policy: \"default-src 'self'\"\n",
      ),
    );
    for (const path of ["/", "/metrics"]) {
      const r = await send(`${url}${path}`);
      expect(r.headers["x-frame-options"]).toBe("deny");
      expect(r.headers["content-security-policy"]).toBe("default-src 'self'");
      expect(r.headers["x-content-type-options"]).toBe("nosniff");
    }
  });

  it("an empty value removes the header", async () => {
    const url = await start(webFile('http_server_config:\n  headers:\n    X-Content-Type-Options: ""\n'));
    expect((await send(`${url}/metrics`)).headers["x-content-type-options"]).toBeUndefined();
  });

  it.each([
    ["a name with a space", '    "X Bad": yes\n', /headers\.X Bad: "X Bad" is not a valid header name/],
    [
      "a value with CR/LF",
      '    X-Injected: "a\\r\\nSet-Cookie: x=1"\n',
      /headers\.X-Injected: the value contains a line break/,
    ],
    [
      "a value with a NUL",
      '    X-Nul: "a\\u0000b"\n',
      /headers\.X-Nul: the value contains a line break or another control character/,
    ],
    [
      "a header the server sets itself",
      "    Content-Type: text/html\n",
      /headers\.Content-Type: set by the server/,
    ],
    [
      "the same name twice in another case",
      "    X-A: one\n    x-a: two\n",
      /headers\.x-a: the same header as X-A/,
    ],
  ])("%s is rejected when the file is loaded", async (_what, yaml, expected) => {
    const file = webFile(`http_server_config:\n  headers:\n${yaml}`);
    const lines = await configProblems(loadWebConfig(file));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.startsWith(`${file}: http_server_config.headers.`)).toBe(true);
    expect(lines[0]).toMatch(expected);
  });
});
