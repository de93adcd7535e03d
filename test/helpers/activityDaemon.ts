/**
 * A daemon that reads activity logs with webhooks on, as the tests of what events and activity
 * entries tell (site states, change markers, reads on events) run it: only the activity streams,
 * shipped from now to an OTLP receiver over http/protobuf, read every second at first, backing off
 * to `activityPollInterval` with webhooks on; only the inventory collector, unless `collectors` says
 * more.
 */
import { COLLECTOR_NAMES } from "../../src/config/schema.js";
import type { RunningSimulator } from "../../src/simulator/index.js";
import { startDaemonProcess, type DaemonProcess } from "./daemon.js";
import type { OtlpReceiver } from "./otlp-receiver.js";

export interface ActivityDaemonOptions {
  sim: RunningSimulator;
  receiver: OtlpReceiver;
  port: number;
  checkpointDir: string;
  webhookToken: string;
  activityPollInterval: string;
  /** Collector settings over "inventory only". */
  collectors?: Record<string, unknown>;
}

export function startActivityDaemon(o: ActivityDaemonOptions): Promise<DaemonProcess> {
  return startDaemonProcess({
    sim: o.sim,
    port: o.port,
    checkpointDir: o.checkpointDir,
    config: {
      webhooks: { enabled: true },
      logs: {
        ship: true,
        streams: ["activity"],
        startFrom: "now",
        pollInterval: "1s",
        maxPollInterval: "2s",
        activityPollInterval: o.activityPollInterval,
      },
      collectors: {
        ...Object.fromEntries(
          COLLECTOR_NAMES.filter((c) => c !== "inventory").map((c) => [c, { enabled: false }]),
        ),
        ...o.collectors,
      },
    },
    env: {
      SITEHOST_WEBHOOK_TOKEN: o.webhookToken,
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: o.receiver.logsEndpoint,
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/protobuf",
    },
  });
}
