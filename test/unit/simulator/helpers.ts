/** Plain HTTP helpers for the simulator tests: no ApiClient, so the tests see the wire format. */
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from "../../../src/simulator/index.js";

/** 2026-11-22T12:00:00Z = 1795348800 epoch seconds. */
export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
export const T0_SECONDS = 1_795_348_800;

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface TestSim {
  sim: RunningSimulator;
  /** The simulator's clock, ms; tests move it. */
  clock: { ms: number };
  token: string;
  get(path: string, token?: string | null): Promise<Reply>;
  post(path: string, body: unknown, token?: string | null): Promise<Reply>;
  /** Control endpoints (no /v1, no token). */
  control(method: string, path: string, body?: unknown): Promise<Reply>;
  newToken(): Promise<string>;
  close(): Promise<void>;
}

async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export async function startTestSim(options: Partial<SimulatorOptions> = {}): Promise<TestSim> {
  const clock = { ms: T0 };
  const sim = await startSimulator({ port: 0, host: "127.0.0.1", now: () => clock.ms, ...options });
  const auth = (token: string | null | undefined): Record<string, string> =>
    token ? { authorization: `Bearer ${token}` } : {};
  const newToken = async (): Promise<string> => {
    const res = await fetch(`${sim.authUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        grant_type: "client_credentials",
        client_id: sim.clientId,
        client_secret: sim.clientSecret,
      }),
    });
    const body = (await res.json()) as { access_token: string };
    return body.access_token;
  };
  const t: TestSim = {
    sim,
    clock,
    token: "",
    get: async (path, token) =>
      reply(await fetch(`${sim.apiUrl}${path}`, { headers: auth(token === undefined ? t.token : token) })),
    post: async (path, body, token) =>
      reply(
        await fetch(`${sim.apiUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...auth(token === undefined ? t.token : token) },
          body: JSON.stringify(body),
        }),
      ),
    control: async (method, path, body) =>
      reply(
        await fetch(`${sim.authUrl}${path}`, {
          method,
          headers: body === undefined ? {} : { "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      ),
    newToken,
    close: () => sim.close(),
  };
  t.token = await newToken();
  return t;
}

/** The `data` of an envelope (asserting the envelope's shape on the way). */
export function dataOf(r: Reply): unknown {
  const body = r.body as { message: unknown; data: unknown; errors: unknown };
  if (typeof body !== "object" || body === null || !("data" in body) || !("message" in body))
    throw new Error(`not an envelope: ${r.text.slice(0, 200)}`);
  return body.data;
}

export interface SiteRecord {
  id: number;
  name: string;
  favorite: boolean;
  state: string;
  [key: string]: unknown;
}

/** Every site record of GET /sites (unpaginated). */
export async function allSites(t: TestSim): Promise<SiteRecord[]> {
  const r = await t.get("/sites");
  if (r.status !== 200) throw new Error(`GET /sites answered ${r.status}`);
  return dataOf(r) as SiteRecord[];
}
