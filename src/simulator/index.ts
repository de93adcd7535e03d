/**
 * An in-process fake of the platform's management API: token endpoints at the host root, everything
 * else under /v1, the platform's envelopes and casing, deterministic data from a seed, continuous
 * logs, activity, DNS and certificates, git, backups, restores, webhooks and fault knobs.
 *
 * Layout: platform.ts holds the state; handlers/ answer API routes (no HTTP); operations.ts makes
 * things happen (state, activity, webhooks); server.ts is the HTTP front; control.ts and
 * controlHttp.ts are the hooks for tests and their HTTP form. docs/simulator.md describes it all.
 */
import { createControl, type SimulatorControl } from "./control.js";
import { controlApi } from "./controlHttp.js";
import { DEFAULT_SIMULATOR_OPTIONS, type SimulatorOptions } from "./options.js";
import { Platform } from "./platform.js";
import { createSimulatorServer, listen } from "./server.js";

export type { SimulatorControl } from "./control.js";
export {
  DEFAULT_SIMULATOR_OPTIONS,
  behaviourProblems,
  faultProblems,
  type SimulatorBehaviour,
  type SimulatorFaults,
  type SimulatorOptions,
} from "./options.js";
export type { SimulatorStats, WebhookAttempt } from "./stats.js";
export type { WebhookPayload, WebhookEventName } from "./events.js";

export interface RunningSimulator {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  port: number;
  control: SimulatorControl;
  close(): Promise<void>;
}

export async function startSimulator(options: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  const opts: SimulatorOptions = { ...DEFAULT_SIMULATOR_OPTIONS, ...options };
  const platform = new Platform(opts);
  const control = createControl(platform);
  const server = createSimulatorServer(platform, controlApi(platform, control));
  const port = await listen(server, opts.port, opts.host);
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const authUrl = `http://${host}:${port}`;
  return {
    apiUrl: `${authUrl}/v1`,
    authUrl,
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    port,
    control,
    close: () =>
      new Promise<void>((resolve) => {
        platform.webhooks.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
