import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../src/config/schema.js";
import { probeTargetGroups, type TargetGroup } from "../../../src/probes/targets.js";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { makeSite } from "../collectors/fixtures.js";
import { makeExposition, send, silentLogger, statusOf } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-sd-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(opts: {
  probeTargets?: () => readonly TargetGroup[];
  webConfigFile?: string;
}): Promise<string> {
  server = await startHttpServer({
    listenAddress: "127.0.0.1:0",
    telemetryPath: "/metrics",
    exposition: makeExposition().exposition,
    readiness: () => ({ ready: true }),
    status: () => statusOf(),
    logger: silentLogger,
    ...opts,
  });
  return server.url;
}

/** The sites as discovery holds them: read at every request. */
let sites = [makeSite(1, { name: "blog" }), makeSite(2, { name: "shop" })];
const probes = ConfigSchema.parse({}).probes;
const current = () => probeTargetGroups(sites, () => undefined, probes);

describe("GET /sd/probes", () => {
  it("answers Prometheus HTTP SD JSON: an array of { targets, labels } with string values", async () => {
    const url = await start({ probeTargets: current });
    const reply = await send(`${url}/sd/probes`);
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(reply.body.toString("utf8")) as unknown;
    expect(body).toEqual([
      {
        targets: ["https://site-1.example/"],
        labels: expect.objectContaining({ site_id: "1", site: "blog", module: "http_2xx" }),
      },
      {
        targets: ["https://site-2.example/"],
        labels: expect.objectContaining({ site_id: "2", site: "shop", module: "http_2xx" }),
      },
    ]);
    for (const group of body as TargetGroup[]) {
      expect(Object.keys(group).sort()).toEqual(["labels", "targets"]);
      for (const value of Object.values(group.labels)) expect(typeof value).toBe("string");
    }
  });

  it("follows the site list as it is at each request", async () => {
    const url = await start({ probeTargets: current });
    sites = [makeSite(3, { name: "new" })];
    const body = JSON.parse((await send(`${url}/sd/probes`)).body.toString("utf8")) as TargetGroup[];
    expect(body.map((g) => g.labels.site)).toEqual(["new"]);
    sites = [];
    expect((await send(`${url}/sd/probes`)).body.toString("utf8")).toBe("[]\n");
  });

  it("HEAD answers without a body; POST is 405", async () => {
    const url = await start({ probeTargets: current });
    const head = await send(`${url}/sd/probes`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect((await send(`${url}/sd/probes`, { method: "POST" })).status).toBe(405);
  });

  it("is not served with probes.enabled false (no probeTargets)", async () => {
    const url = await start({});
    expect((await send(`${url}/sd/probes`)).status).toBe(404);
  });

  it("the web config's basic auth protects it like /metrics", async () => {
    const password = "correct horse battery staple";
    const file = join(dir, "web.yml");
    writeFileSync(file, `basic_auth_users:\n  prometheus: '${bcrypt.hashSync(password, 4)}'\n`);
    const url = await start({ probeTargets: current, webConfigFile: file });
    const auth = (p: string) => ({
      authorization: `Basic ${Buffer.from(`prometheus:${p}`).toString("base64")}`,
    });
    for (const path of ["/metrics", "/sd/probes"]) {
      expect((await send(`${url}${path}`)).status, path).toBe(401);
      expect((await send(`${url}${path}`, { headers: auth("wrong") })).status, path).toBe(401);
      expect((await send(`${url}${path}`, { headers: auth(password) })).status, path).toBe(200);
    }
  });
});
