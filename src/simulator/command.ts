/**
 * `simulate` (the fake platform API alone) and `demo` (simulator + daemon). The simulator itself is
 * loaded when one of them runs, not by every command (`run` would hold its code for nothing).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { redactQueryToken, redactUrl } from "../config/redact.js";
import { ConfigSchema, DEFAULT_PORT } from "../config/schema.js";
import { createLogger, type LogFormat } from "../logging.js";
import type { RunningSimulator, SimulatorOptions } from "./index.js";
import { LOG_ORDERS, type LogOrder } from "./options.js";
import { brokenPluginError } from "./operations.js";

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a whole number`);
  return n;
};
const ratio = (name: string) => (v: string) => {
  const n = Number(v);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError(`${name} must be between 0 and 1`);
  return n;
};
const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!(n >= 0)) throw new InvalidArgumentError(`${name} must be a non-negative number`);
  return n;
};

interface SimulateFlags {
  port: number;
  host: string;
  sites: number;
  seed: number;
  latency: number;
  errorRate: number;
  requestBudget?: { requests: number; windowSeconds: number };
  tokenLifetime: number;
  malformedRate: number;
  failingSite?: number;
  logRate: number;
  logOrder: LogOrder;
  scrollMode: "snapshot" | "cursor";
  scrollIdle: number;
  logIndexDelay: number;
  lateLogFraction: number;
  lateLogMax: number;
  activityOrder: "newest-first" | "oldest-first";
  accountActivityScope: "all" | "account";
  activityPerPageOverflow: "clamp" | "reject";
  certificateTimeForm: "iso" | "epoch-seconds" | "datetime";
  gitEventPayload: "bare" | "site";
  trafficStartAt: "phrase" | "timestamp";
  webhookUrl?: string;
  webhookAttempts: number;
  webhookBackoff: number;
}

function addSimulatorOptions(cmd: Command, defaultPort: number): Command {
  return cmd
    .option("--port <n>", "port to listen on (0 = any free port)", int("--port"), defaultPort)
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--sites <n>", "number of sites in the account (up to 10000)", int("--sites"), 25)
    .option("--seed <n>", "seed of the deterministic data", int("--seed"), 1)
    .option("--latency <ms>", "added latency per request", positive("--latency"), 0)
    .option("--error-rate <ratio>", "share of API requests answered 500", ratio("--error-rate"), 0)
    .option(
      "--request-budget <n/seconds>",
      "requests allowed per window, then 429 with Retry-After, e.g. 100/10",
      (v: string) => {
        const m = /^(\d+)\/(\d+)$/.exec(v);
        if (!m) throw new InvalidArgumentError("--request-budget must look like 100/10 (requests/seconds)");
        return { requests: Number(m[1]), windowSeconds: Number(m[2]) };
      },
    )
    .option("--token-lifetime <seconds>", "expires_in of issued tokens", int("--token-lifetime"), 3599)
    .option(
      "--malformed-rate <ratio>",
      "share of list records and log entries with a broken field",
      ratio("--malformed-rate"),
      0,
    )
    .option("--failing-site <id>", "a site id whose endpoints all answer 500", int("--failing-site"))
    .option("--log-rate <n>", "log entries per second per site and stream", positive("--log-rate"), 0.2)
    .addOption(
      new Option(
        "--log-order <order>",
        "order of log pages (newest-indexed-first: by when entries became visible)",
      )
        .choices([...LOG_ORDERS])
        .default("newest-first"),
    )
    .addOption(
      new Option("--scroll-mode <mode>", "scroll behaviour (cursor: oldest-first only)")
        .choices(["snapshot", "cursor"])
        .default("snapshot"),
    )
    .option("--scroll-idle <seconds>", "scroll ids expire after this idle time", int("--scroll-idle"), 60)
    .option(
      "--log-index-delay <seconds>",
      "log entries of second s become visible at s + this",
      positive("--log-index-delay"),
      0,
    )
    .option(
      "--late-log-fraction <ratio>",
      "share of log entries that arrive later still (up to --late-log-max)",
      ratio("--late-log-fraction"),
      0,
    )
    .option("--late-log-max <seconds>", "how late a late log entry can be", positive("--late-log-max"), 0)
    .addOption(
      new Option("--activity-order <order>", "order of activity log pages")
        .choices(["newest-first", "oldest-first"])
        .default("newest-first"),
    )
    .addOption(
      new Option(
        "--account-activity-scope <scope>",
        "the account's activity log lists all entries (site entries too) or the account's own",
      )
        .choices(["all", "account"])
        .default("all"),
    )
    .addOption(
      new Option(
        "--activity-per-page-overflow <mode>",
        "activity per_page above 50: clamp to 50 or answer 400",
      )
        .choices(["clamp", "reject"])
        .default("clamp"),
    )
    .addOption(
      new Option(
        "--traffic-start-at <form>",
        "start_at the traffic endpoint takes: a phrase, or only an ISO time",
      )
        .choices(["phrase", "timestamp"])
        .default("phrase"),
    )
    .addOption(
      new Option("--certificate-time-form <form>", "form of certificate_expiration_date")
        .choices(["iso", "epoch-seconds", "datetime"])
        .default("iso"),
    )
    .addOption(
      new Option("--git-event-payload <shape>", "git_deploy_* webhooks: event only, or with site {id}")
        .choices(["bare", "site"])
        .default("bare"),
    )
    .option("--webhook-url <url>", "POST webhook events to this URL", (v: string) => {
      if (!URL.canParse(v)) throw new InvalidArgumentError("--webhook-url must be a URL");
      return v;
    })
    .option("--webhook-attempts <n>", "delivery attempts per webhook event", int("--webhook-attempts"), 4)
    .option(
      "--webhook-backoff <ms>",
      "wait before the second delivery attempt; doubles for each further one",
      positive("--webhook-backoff"),
      1000,
    );
}

function simulatorOptions(f: SimulateFlags): Partial<SimulatorOptions> {
  return {
    port: f.port,
    host: f.host,
    sites: Math.min(f.sites, 10_000),
    seed: f.seed,
    latencyMs: f.latency,
    errorRate: f.errorRate,
    requestBudget: f.requestBudget ?? null,
    tokenLifetimeSeconds: f.tokenLifetime,
    malformedRate: f.malformedRate,
    failingSiteId: f.failingSite ?? null,
    logRatePerSite: f.logRate,
    logOrder: f.logOrder,
    scrollMode: f.scrollMode,
    scrollIdleSeconds: f.scrollIdle,
    logIndexDelaySeconds: f.logIndexDelay,
    lateLogFraction: f.lateLogFraction,
    lateLogMaxSeconds: f.lateLogMax,
    activityOrder: f.activityOrder,
    accountActivityScope: f.accountActivityScope,
    activityPerPageOverflow: f.activityPerPageOverflow,
    certificateTimeForm: f.certificateTimeForm,
    gitEventPayload: f.gitEventPayload,
    trafficStartAt: f.trafficStartAt,
    webhookUrl: f.webhookUrl ?? null,
    webhookAttempts: Math.max(1, f.webhookAttempts),
    webhookBackoffMs: f.webhookBackoff,
  };
}

function onSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) process.exit(1);
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // SIGHUP too: a closed terminal stops the demo as Ctrl-C does, removing its temporary files.
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  process.on("SIGHUP", handler);
}

export function simulateCommand(): Command {
  return addSimulatorOptions(
    new Command("simulate").description("run the fake platform API alone"),
    8787,
  ).action(async (flags: SimulateFlags) => {
    const { startSimulator } = await import("./index.js");
    const sim = await startSimulator(simulatorOptions(flags));
    // Before the first line: whoever waits for it may signal at once.
    onSignals(() => sim.close());
    // The simulator's credentials are throwaway demo values: printing them is the point.
    process.stdout.write(
      [
        `simulator of the platform API listening with ${flags.sites} sites (seed ${flags.seed})`,
        `SITEHOST_API_URL=${sim.apiUrl}`,
        `SITEHOST_AUTH_URL=${sim.authUrl}`,
        `SITEHOST_CLIENT_ID=${sim.clientId}`,
        `SITEHOST_CLIENT_SECRET=${sim.clientSecret}`,
        `control: GET ${sim.authUrl}/_simulator/stats, POST ${sim.authUrl}/_simulator/faults, POST ${sim.authUrl}/_simulator/logs, POST ${sim.authUrl}/_simulator/sites/{id}/disable (docs/simulator.md)`,
        flags.webhookUrl
          ? `webhook events are POSTed to ${redactQueryToken(redactUrl(flags.webhookUrl))}`
          : "no webhook URL (--webhook-url)",
        "",
      ].join("\n"),
    );
  });
}

export function demoCommand(): Command {
  return addSimulatorOptions(new Command("demo").description("simulator plus daemon, wired together"), 0)
    .option("--listen <port>", "port of the daemon", int("--listen"), DEFAULT_PORT)
    .addOption(new Option("--log.level <level>", "log level").default("info"))
    .addOption(
      new Option("--log.format <format>", "log format")
        .choices(["json", "logfmt", "pretty"])
        .default("logfmt"),
    )
    .action(
      async (flags: SimulateFlags & { listen: number; "log.level": string; "log.format": LogFormat }) => {
        const { startSimulator } = await import("./index.js");
        const sim: RunningSimulator = await startSimulator(simulatorOptions(flags));
        const checkpointDir = await mkdtemp(join(tmpdir(), "sitehost-demo-"));
        const otlp = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;
        // A token for this run only: the simulator is told it, nothing prints it.
        const webhookToken = randomBytes(24).toString("hex");
        const config = ConfigSchema.parse({
          api: {
            url: sim.apiUrl,
            authUrl: sim.authUrl,
            clientId: sim.clientId,
            clientSecret: sim.clientSecret,
          },
          collectors: {
            traffic: { schedule: "*/30 * * * * *" },
            statistics: { schedule: "*/5 * * * *" },
            performance: { schedule: "*/10 * * * *" },
            security: { schedule: "*/2 * * * *" },
            domains: { schedule: "* * * * *" },
            backups: { schedule: "*/5 * * * *" },
            access: { schedule: "* * * * *", maxInterval: "5m" },
          },
          // errorGroupsLearnFor: the broken plugin's error, 3 minutes in, is new.
          logs: {
            ship: Boolean(otlp),
            startFrom: "-5m",
            pollInterval: "10s",
            errorGroupsLearnFor: "2m",
            checkpointDir,
          },
          web: { listenAddress: `127.0.0.1:${flags.listen}` },
          webhooks: { enabled: true, token: webhookToken },
        });
        const logger = createLogger({ level: flags["log.level"], format: flags["log.format"] });
        const { runDaemon } = await import("../daemon.js");
        const daemon = await runDaemon({ config, logger });
        // The simulator's events go to the daemon's receiver (unless --webhook-url sends them elsewhere).
        const webhookUrl = `${daemon.url}${config.webhooks.path}`;
        if (!flags.webhookUrl) sim.control.setWebhookUrl(`${webhookUrl}?token=${webhookToken}`);
        const firstId = sim.control.sites()[0]?.site.id ?? 0;
        // What the posture panels and alerts show: a site left in maintenance mode, one marked hacked by
        // support, a git deployment disconnected (index 3k sites are enrolled, with deploys), PHP 8.3
        // dropped from the supported versions (a third of the sites run it) and, a few minutes in, a
        // new administrator on a site the exporter has read before.
        const [maintained, hacked, gitSite, adminSite] = [2, 6, 9, 1].map(
          (i) => sim.control.sites()[i]?.site,
        );
        if (maintained) sim.control.setMaintenanceMode(maintained.id, true);
        if (hacked) sim.control.hackSite(hacked.id);
        if (gitSite) sim.control.disconnectGit(gitSite.id);
        sim.control.setSupportedPhpVersions(["8.4", "8.5"]);
        const newAdmin = adminSite
          ? setTimeout(
              () => sim.control.addCmsUser(adminSite.id, "helpdesk-temp", "administrator"),
              5 * 60_000,
            )
          : undefined;
        newAdmin?.unref();
        // A few minutes in, a plugin update that breaks a site: its change marker, then a fatal PHP
        // error it never logged before, every minute (SitehostSitePhpNewFatalErrorAfterChange).
        const brokenSite = sim.control.sites()[4]?.site;
        const brokenPlugin = "booking-calendar";
        let fatalEveryMinute: NodeJS.Timeout | undefined;
        const pluginUpdate = brokenSite
          ? setTimeout(() => {
              sim.control.updatePlugin(brokenSite.id, { path: brokenPlugin, breaks: true });
              fatalEveryMinute = setInterval(
                () => sim.control.appendLog(brokenSite.id, "php", brokenPluginError(brokenPlugin, 41)),
                60_000,
              );
              fatalEveryMinute.unref();
            }, 3 * 60_000)
          : undefined;
        pluginUpdate?.unref();
        process.stdout.write(
          [
            "",
            "sitehost-exporter demo is running (Ctrl-C stops it)",
            "",
            `  metrics:       ${daemon.url}/metrics`,
            `  status page:   ${daemon.url}/ (JSON: ${daemon.url}/-/status)`,
            `  readiness:     ${daemon.url}/-/ready`,
            `  webhooks:      ${flags.webhookUrl ? `the simulator sends its events to ${redactQueryToken(redactUrl(flags.webhookUrl))}` : `the simulator POSTs its events to ${webhookUrl} (token generated for this run)`}`,
            `  simulator API: ${sim.apiUrl}`,
            `    its account has DNS zones with certificates (one expiring in 5 days, one broken record), git`,
            `    deploys, on-demand backups, restores and activity logs; make things happen with, e.g.:`,
            `    curl -X POST ${sim.authUrl}/_simulator/sites/${firstId}/disable   (a site_disabled webhook: the state changes at once)`,
            `    curl -X POST ${sim.authUrl}/_simulator/sites/${firstId}/git/deploy -H 'content-type: application/json' -d '{"fail": true}'`,
            ...(maintained && hacked
              ? [
                  `    ${maintained.name} was put in maintenance mode and ${hacked.name} marked hacked at start (the Fleet overview's`,
                  `    "Maintenance mode and hacked sites" row), ${gitSite?.name ?? "a site"}'s git deployment disconnected, PHP 8.3`,
                  `    dropped from the supported versions; ${adminSite?.name ?? "a site"} gets a new administrator after 5 minutes`,
                  `    (Site detail's Administrators; its alert compares with an hour before, so it fires in a run of over an hour);`,
                  `    an update of ${brokenPlugin} on ${brokenSite?.name ?? "a site"} after 3 minutes breaks it (a change marker, then a new fatal PHP error).`,
                  `    Turn maintenance off again with:`,
                  `    curl -X POST ${sim.authUrl}/_simulator/sites/${maintained.id}/maintenance-mode -H 'content-type: application/json' -d '{"enabled": false}'`,
                ]
              : []),
            "",
            "  Prometheus scrape config:",
            "    scrape_configs:",
            "      - job_name: sitehost-exporter",
            "        static_configs:",
            `          - targets: ["${daemon.url.replace(/^https?:\/\//, "")}"]`,
            "",
            otlp
              ? `  logs are shipped over OTLP to ${redactUrl(otlp)}`
              : "  logs are read and counted but not shipped; to ship them, start an OpenTelemetry Collector with an\n" +
                "  OTLP receiver and run: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm run demo",
            "",
          ].join("\n"),
        );
        onSignals(async () => {
          await daemon.stop();
          await sim.close();
          await rm(checkpointDir, { recursive: true, force: true });
        });
      },
    );
}
