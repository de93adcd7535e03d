/** The commands, their flags and what they do; main.ts loads this once signal handling is in place. */
import { Command, CommanderError, Option } from "commander";
import type { Logger } from "pino";
import { stringify } from "yaml";
import { parseCollectorList } from "../config/collectorList.js";
import { displayUrl } from "../api/redact.js";
import { closest, ConfigError } from "../config/errors.js";
import { otlpEnvProblems } from "../config/otelEnv.js";
import { credentialProblems, loadConfig, redactConfig, type CliFlags } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { createLogger, LOG_LEVELS, type LogFormat } from "../logging.js";
import { VERSION } from "../version.js";
import { demoCommand, simulateCommand } from "../simulator/command.js";
import { otlpSummary, otlpSummaryComment } from "../doctor/otlpSummary.js";
import { configFileOf, doctorJsonRequested, writeDoctorError } from "./doctorJson.js";
import type { ShutdownSignals } from "./signals.js";
import { exporterHeapFlagsApplied } from "./v8Flags.js";

interface CommonOptions {
  config?: string;
  "web.listenAddress"?: string;
  "web.telemetryPath"?: string;
  "web.config.file"?: string;
  "sites.shard"?: string;
  "log.level": string;
  "log.format": LogFormat;
}

function addCommonOptions(cmd: Command): Command {
  return cmd
    .option("--config <file>", "YAML configuration file")
    .option("--web.listen-address <address>", "address to listen on, e.g. :10987 or 127.0.0.1:10987")
    .option("--web.telemetry-path <path>", "path of the metrics endpoint (default /metrics)")
    .option("--web.config.file <file>", "exporter-toolkit web config file (TLS, basic auth)")
    .option(
      "--sites.shard <i/n>",
      "watch shard i of n (0 <= i < n); overrides SITEHOST_SHARD and sites.shard",
    )
    .addOption(new Option("--log.level <level>", "log level").choices(LOG_LEVELS).default("info"))
    .addOption(
      new Option("--log.format <format>", "log format").choices(["json", "logfmt", "pretty"]).default("json"),
    );
}

/** commander keeps dotted flag names as keys with the last segment camel-cased. */
function flagsOf(opts: Record<string, unknown>): CliFlags {
  const pick = (...keys: string[]) => {
    for (const k of keys) if (typeof opts[k] === "string") return opts[k] as string;
    return undefined;
  };
  return {
    "web.listen-address": pick("web.listenAddress", "webListenAddress"),
    "web.telemetry-path": pick("web.telemetryPath", "webTelemetryPath"),
    "web.config.file": pick("web.config.file", "webConfigFile"),
    "sites.shard": pick("sites.shard", "sitesShard"),
  };
}

/** Where exits go: through the signal handling when it is installed, so a later signal still ends a stuck exit. */
let exitWith: (code: number) => never = (code) => process.exit(code);

function fail(reason: string, code = 1): never {
  process.stderr.write(`sitehost-exporter: ${reason.replace(/\s*\n\s*/g, " ")}\n`);
  exitWith(code);
}

async function load(
  opts: CommonOptions,
  requireCredentials: boolean,
  checkRuntime?: "create" | "probe",
  warn?: (warning: string) => void,
  onConfigError: (err: ConfigError) => never = configError,
) {
  try {
    return await loadConfig({
      configFile: opts.config,
      env: process.env,
      flags: flagsOf(opts as unknown as Record<string, unknown>),
      requireCredentials,
      checkRuntime,
      warn,
    });
  } catch (err) {
    if (err instanceof ConfigError) onConfigError(err);
    throw err;
  }
}

/** Every problem on its own line, exit 2. */
function configError(err: ConfigError, what = "invalid configuration"): never {
  process.stderr.write(`sitehost-exporter: ${what}\n${err.problems.map((p) => `  ${p}\n`).join("")}`);
  exitWith(2);
}

/** The web config file is read when the HTTP server starts; read it before anything starts. */
async function checkWebConfig(config: Config): Promise<void> {
  if (!config.web.configFile) return;
  const { loadWebConfig } = await import("../server/webConfig.js");
  try {
    await loadWebConfig(config.web.configFile);
  } catch (err) {
    if (err instanceof ConfigError) configError(err, "invalid web config file");
    throw err;
  }
}

function shutdownLog(logger: Logger) {
  return {
    info: (signal: string, message: string) => logger.info({ signal }, message),
    warn: (signal: string, message: string) => logger.warn({ signal }, message),
    error: (err: unknown, message: string) => logger.error({ err }, message),
  };
}

const program = new Command()
  .name("sitehost-exporter")
  .description(
    "Prometheus exporter and OpenTelemetry log shipper for every site of a managed web-hosting account",
  )
  .version(VERSION, "--version", "print the version")
  .showHelpAfterError()
  // Usage errors exit 2 like configuration errors (commander's own default is 1); set before the
  // subcommands are created so they inherit it.
  .exitOverride();

let signals: ShutdownSignals | undefined;

addCommonOptions(
  program
    .command("run", { isDefault: true })
    .description("run the daemon (SIGTERM, SIGINT or SIGHUP stop it gracefully)")
    .action(async (opts: CommonOptions) => {
      const warnings: string[] = [];
      const config = await load(opts, true, "create", (w) => warnings.push(w));
      await checkWebConfig(config);
      const logger = createLogger({ level: opts["log.level"], format: opts["log.format"] });
      for (const warning of warnings) logger.warn(warning);
      const { runDaemon } = await import("../daemon.js");
      // From here a signal waits for the start to finish, then stops what started.
      signals?.starting();
      let handle;
      try {
        handle = await runDaemon({
          config,
          logger,
          onStopped: () => signals?.stopped(),
          memorySaver: exporterHeapFlagsApplied(),
        });
      } catch (err) {
        if (err instanceof ConfigError) configError(err);
        fail((err as Error).message);
      }
      signals?.running(() => handle.stop(), shutdownLog(logger));
    }),
);

addCommonOptions(
  program
    .command("once")
    .description("discovery plus one run of each enabled collector; prints the exposition")
    .option("--collectors <names>", "comma-separated collectors to run (default: every enabled one)")
    .action(async (opts: CommonOptions & { collectors?: string }, cmd: Command) => {
      let collectors: string[] | undefined;
      try {
        collectors = opts.collectors === undefined ? undefined : parseCollectorList(opts.collectors);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        fail(err.problems.join("; "), 2);
      }
      const config = await load(opts, true);
      // Unless a level is asked for, `once` says only its one-line reason (the log lines, with
      // their stack traces, are there at --log.level debug).
      const quiet = cmd.getOptionValueSource("log.level") === "default";
      const logger = createLogger({
        level: quiet ? "silent" : opts["log.level"],
        format: opts["log.format"],
      });
      const { runOnce } = await import("../daemon.js");
      try {
        const text = await runOnce({ config, logger, collectors });
        process.stdout.write(text);
        exitWith(0);
      } catch (err) {
        fail(`${(err as Error).message}${quiet ? " (details: --log.level debug)" : ""}`);
      }
    }),
);

addCommonOptions(
  program
    .command("check-config")
    .description("validate the configuration; print the effective config with secrets redacted")
    .action(async (opts: CommonOptions) => {
      // Everything `run` checks before it starts, without creating the checkpoint directory.
      const config = await load(opts, false, "probe", (w) =>
        process.stderr.write(`sitehost-exporter: warning: ${w}\n`),
      );
      await checkWebConfig(config);
      process.stdout.write(stringify(redactConfig(config)));
      const otlp = otlpSummary(config, process.env);
      process.stdout.write(otlpSummaryComment(otlp));
      for (const warning of otlp.warnings) process.stderr.write(`sitehost-exporter: warning: ${warning}\n`);
      const missing = credentialProblems(config);
      if (missing.length > 0) {
        process.stderr.write(
          `sitehost-exporter: the daemon would not start:\n${missing.map((p) => `  ${p}\n`).join("")}`,
        );
        exitWith(2);
      }
      process.stderr.write("configuration is valid\n");
    }),
);

addCommonOptions(
  program
    .command("doctor")
    .description(
      "check the platform side (credentials, scopes, endpoints and their answers, rate limits) and the exporter's own setup (OTLP, checkpoints, webhooks, web); exit 0 all pass, 1 a check failed, 2 bad configuration",
    )
    .addOption(new Option("--output <format>", "report format").choices(["text", "json"]).default("text"))
    .action(async (opts: CommonOptions & { output: "text" | "json" }) => {
      // With --output json every outcome is JSON on stdout, with the text form's exit code.
      const invalid = (err: ConfigError): never =>
        opts.output === "json"
          ? exitWith(writeDoctorError("configuration", "invalid configuration", err.problems, opts.config))
          : configError(err);
      const config = await load(opts, true, undefined, undefined, invalid);
      const otlp = otlpEnvProblems(process.env);
      if (otlp.length > 0) invalid(new ConfigError(otlp));
      const { runDoctor } = await import("../doctor/run.js");
      const { renderJson, renderText } = await import("../doctor/report.js");
      const report = await runDoctor({ config, env: process.env, configFile: opts.config });
      process.stdout.write(
        opts.output === "json" ? renderJson(report) : renderText(report, displayUrl(config.api.url)),
      );
      exitWith(report.exitCode);
    }),
);

addCommonOptions(
  program
    .command("slo-rules")
    .description("print the Prometheus rules (SLIs and burn-rate alerts) of the configuration's slos section")
    .action(async (opts: CommonOptions) => {
      const config = await load(opts, false);
      const { sloRuleFile } = await import("../slo/ruleFile.js");
      process.stdout.write(sloRuleFile(config.slos));
    }),
);

program.addCommand(simulateCommand().exitOverride());
program.addCommand(demoCommand().exitOverride());

/** Runs the command line; `shutdown`: the daemon's signal handling, installed by main.ts for `run`. */
export async function runProgram(shutdown?: ShutdownSignals): Promise<void> {
  signals = shutdown;
  if (shutdown) exitWith = (code) => shutdown.exit(code);
  // `run` is the default command, so commander would read a mistyped command as an extra argument
  // of `run` ("too many arguments"); name it for what it is.
  const first = process.argv[2];
  if (first !== undefined && !first.startsWith("-")) {
    const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
    if (!names.includes(first) && first !== "help") {
      const hint = closest(first, names);
      process.stderr.write(
        `sitehost-exporter: unknown command ${JSON.stringify(first)}${hint ? `; did you mean ${hint}?` : ""} (commands: ${names.join(", ")})\n`,
      );
      exitWith(2);
    }
  }
  await program.parseAsync(process.argv).catch((err: unknown) => {
    const usage = err instanceof CommanderError;
    // commander has printed the message (and help) already; help and --version exit 0.
    if (usage && err.exitCode === 0) exitWith(0);
    if (doctorJsonRequested(process.argv)) {
      // `doctor --output json`: a refused command line (exit 2) or a failure (exit 1) as its JSON report.
      exitWith(
        writeDoctorError(usage ? "usage" : "failure", (err as Error).message, [], configFileOf(process.argv)),
      );
    }
    if (usage) exitWith(2);
    fail((err as Error).message);
  });
}
