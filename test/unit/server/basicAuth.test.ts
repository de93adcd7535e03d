/**
 * Basic auth under load: wrong passwords cannot starve a valid scrape. The password check is
 * injected, so the tests hold verifications open and count them instead of timing bcrypt.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { decodeBasicAuth } from "../../../src/server/basicAuth.js";
import { startHttpServer, type RunningHttpServer } from "../../../src/server/http.js";
import { makeExposition, send, silentLogger, type Reply, statusOf } from "./helpers.js";
import { waitFor } from "../../helpers/wait.js";

const dir = mkdtempSync(join(tmpdir(), "sitehost-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PASSWORD = "correct horse battery staple";
const hash = bcrypt.hashSync(PASSWORD, 4);
const webFile = join(dir, "web.yml");
writeFileSync(webFile, `basic_auth_users:\n  alice: '${hash}'\n`);

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
});

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A password check that answers the right password at once and holds every other one until released. */
function gatedVerifier() {
  const held: Array<() => void> = [];
  const state = { calls: 0, inFlight: 0, maxInFlight: 0, held };
  const verify = async (password: string, h: string): Promise<boolean> => {
    state.calls += 1;
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    try {
      if (password !== PASSWORD) await new Promise<void>((resolve) => held.push(resolve));
      return await bcrypt.compare(password, h);
    } finally {
      state.inFlight -= 1;
    }
  };
  return { state, verify };
}

async function start(verify: (p: string, h: string) => Promise<boolean>, limits?: Record<string, number>) {
  const { exposition } = makeExposition();
  server = await startHttpServer({
    listenAddress: "127.0.0.1:0",
    telemetryPath: "/metrics",
    webConfigFile: webFile,
    exposition,
    readiness: () => ({ ready: true }),
    status: () => statusOf(),
    logger: silentLogger,
    verifyPassword: verify,
    authLimits: limits,
  });
  return server.url;
}

/** Resolves once `count` of the replies have arrived (rejects at the deadline). */
async function firstReplies(
  pending: Array<Promise<Reply>>,
  count: number,
  deadlineMs = 10_000,
): Promise<Reply[]> {
  const arrived: Reply[] = [];
  for (const p of pending) void p.then((r) => arrived.push(r));
  await waitFor(`${count} replies`, () => arrived.length >= count, {
    timeoutMs: deadlineMs,
    intervalMs: 5,
    last: () => `${arrived.length} arrived`,
  });
  return arrived.slice(0, count);
}

/** Waits for `condition` (10 s at most). */
const until = (condition: () => boolean, what: string, deadlineMs = 10_000) =>
  waitFor(what, condition, { timeoutMs: deadlineMs, intervalMs: 5 });

describe("basic auth under a password-guessing flood", () => {
  it("limits checks in flight, answers the excess 429 with Retry-After, and serves a cached scrape meanwhile", async () => {
    const { state, verify } = gatedVerifier();
    const url = await start(verify, { maxConcurrent: 2, maxQueued: 3 });
    // The valid scraper's first request is verified once; afterwards it is cached.
    expect((await send(`${url}/metrics`, { headers: basic("alice", PASSWORD) })).status).toBe(200);
    const verifiedOnce = state.calls;

    // Ten guesses, each a different password: two checks run, three wait, five are turned away.
    const guesses = Array.from({ length: 10 }, (_, i) =>
      send(`${url}/metrics`, { headers: basic("alice", `guess-${i}`) }),
    );
    const turnedAway = await firstReplies(guesses, 5);
    for (const r of turnedAway) {
      expect(r.status).toBe(429);
      expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
      expect(r.body.toString()).not.toContain("sitehost_test_sites");
    }
    await until(() => state.held.length === 2, "two checks in flight");

    // While every check slot is busy, the cached scrape is answered without a check.
    const scrape = await send(`${url}/metrics`, { headers: basic("alice", PASSWORD) });
    expect(scrape.status).toBe(200);
    expect(scrape.body.toString()).toContain("sitehost_test_sites");
    expect(state.calls - verifiedOnce).toBe(2);

    // Released, the queued guesses are checked two at a time and refused.
    await until(() => {
      state.held.splice(0).forEach((release) => release());
      return state.held.length === 0 && state.inFlight === 0;
    }, "the queued checks to finish");
    const all = await Promise.all(guesses);
    expect(all.filter((r) => r.status === 401)).toHaveLength(5);
    expect(state.maxInFlight).toBe(2);
    expect(state.calls - verifiedOnce).toBe(5);
  });

  it("checks the same credentials once: cached afterwards, shared while in flight", async () => {
    const { state, verify } = gatedVerifier();
    const url = await start(verify);
    const concurrent = await Promise.all(
      Array.from({ length: 5 }, () => send(`${url}/-/healthy`, { headers: basic("alice", PASSWORD) })),
    );
    expect(concurrent.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (let i = 0; i < 5; i++)
      expect((await send(`${url}/-/healthy`, { headers: basic("alice", PASSWORD) })).status).toBe(200);
    expect(state.calls).toBe(1);
  });

  it("a wrong password is never cached as right, and an unknown user costs a check too", async () => {
    const { state, verify } = gatedVerifier();
    const url = await start(verify);
    let answered = false;
    const replies = Promise.all([
      send(`${url}/-/healthy`, { headers: basic("alice", "nope") }),
      send(`${url}/-/healthy`, { headers: basic("mallory", PASSWORD) }),
    ]).finally(() => (answered = true));
    await until(() => {
      state.held.splice(0).forEach((release) => release());
      return answered;
    }, "both answers");
    expect((await replies).map((r) => r.status)).toEqual([401, 401]);
    expect(state.calls).toBe(2);
    // Asked again, the wrong password is checked again: only successes are remembered.
    const again = send(`${url}/-/healthy`, { headers: basic("alice", "nope") });
    await until(() => state.held.length === 1, "the second check");
    state.held.splice(0).forEach((release) => release());
    expect((await again).status).toBe(401);
    expect(state.calls).toBe(3);
  });
});

describe("Authorization header decoding", () => {
  const valid = Buffer.from(`alice:${PASSWORD}`).toString("base64");

  it("accepts exactly the RFC 4648 base64 of user:password", () => {
    expect(decodeBasicAuth(`Basic ${valid}`)).toEqual({ user: "alice", password: PASSWORD });
    expect(decodeBasicAuth(`basic ${valid}`)).toEqual({ user: "alice", password: PASSWORD });
    expect(decodeBasicAuth(`Basic ${Buffer.from("bob:p:w").toString("base64")}`)).toEqual({
      user: "bob",
      password: "p:w",
    });
  });

  it.each([
    ["trailing garbage after padding", `Basic ${Buffer.from("alice:pw").toString("base64")}===garbage`],
    ["garbage appended without padding", `Basic ${valid}AAAA!`],
    ["missing padding", `Basic ${Buffer.from("alice:pw").toString("base64").replace(/=+$/, "")}`],
    ["too much padding", `Basic ${Buffer.from("alice:pw").toString("base64")}=`],
    ["URL-safe alphabet", `Basic ${Buffer.from("alice:p>?w").toString("base64url")}`],
    ["non-canonical final bits", "Basic YWxpY2U6cHX="],
    ["an inner space", `Basic ${valid.slice(0, 4)} ${valid.slice(4)}`],
    ["no colon", `Basic ${Buffer.from("alice").toString("base64")}`],
    ["invalid UTF-8", `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString("base64")}`],
    ["another scheme", `Bearer ${valid}`],
  ])("rejects %s", (_what, header) => {
    expect(decodeBasicAuth(header)).toBeUndefined();
  });

  it("the server answers 401 to valid credentials followed by ===garbage", async () => {
    const { verify } = gatedVerifier();
    const url = await start(verify);
    const r = await send(`${url}/metrics`, { headers: { authorization: `Basic ${valid}===garbage` } });
    expect(r.status).toBe(401);
    expect((await send(`${url}/metrics`, { headers: { authorization: `Basic ${valid}` } })).status).toBe(200);
  });
});
