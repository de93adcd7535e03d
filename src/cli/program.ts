#!/usr/bin/env node
/**
 * sitehost-exporter command line. Exit codes: 0 ok; 1 runtime failure (auth,
 * API unreachable, crash); 2 invalid configuration or usage.
 */
// First: may re-execute this process with memory-lean V8 flags before anything else loads.
import "./leanV8.js";
import { Command, CommanderError, Option } from "commander";
import { stringify } from "yaml";
import { closest, ConfigError } from "../config/errors.js";
import { credentialProblems, loadConfig, redactConfig, type CliFlags } from "../config/load.js";
import { createLogger, LOG_LEVELS, type LogFormat } from "../logging.js";
import { VERSION } from "../version.js";
import { demoCommand, simulateCommand } from "../simulator/command.js";

interface CommonOptions {
  config?: string;
  "web.listenAddress"?: string;
  "web.telemetryPath"?: string;
  "web.config.file"?: string;
  "log.level": string;
  "log.format": LogFormat;
}

function addCommonOptions(cmd: Command): Command {
  return cmd
    .option("--config <file>", "YAML configuration file")
    .option("--web.listen-address <address>", "address to listen on, e.g. :10987 or 127.0.0.1:10987")
    .option("--web.telemetry-path <path>", "path of the metrics endpoint (default /metrics)")
    .option("--web.config.file <file>", "exporter-toolkit web config file (TLS, basic auth)")
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
  };
}

function fail(reason: string, code = 1): never {
  process.stderr.write(`sitehost-exporter: ${reason.replace(/\s*\n\s*/g, " ")}\n`);
  process.exit(code);
}

async function load(opts: CommonOptions, requireCredentials: boolean) {
  try {
    return await loadConfig({
      configFile: opts.config,
      env: process.env,
      flags: flagsOf(opts as unknown as Record<string, unknown>),
      requireCredentials,
    });
  } catch (err) {
    if (err instanceof ConfigError) configError(err);
    throw err;
  }
}

/** Every problem on its own line, exit 2. */
function configError(err: ConfigError): never {
  process.stderr.write(
    `sitehost-exporter: invalid configuration\n${err.problems.map((p) => `  ${p}\n`).join("")}`,
  );
  process.exit(2);
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

addCommonOptions(
  program
    .command("run", { isDefault: true })
    .description("run the daemon")
    .action(async (opts: CommonOptions) => {
      const config = await load(opts, true);
      const logger = createLogger({ level: opts["log.level"], format: opts["log.format"] });
      const { runDaemon } = await import("../daemon.js");
      let handle;
      try {
        handle = await runDaemon({ config, logger });
      } catch (err) {
        // The web config file is read when the HTTP server starts: a problem there is a configuration error.
        if (err instanceof ConfigError) configError(err);
        fail((err as Error).message);
      }
      let signals = 0;
      const shutdown = (signal: string) => {
        signals += 1;
        if (signals > 1) {
          logger.warn({ signal }, "second signal: exiting now");
          process.exit(1);
        }
        logger.info({ signal }, "received signal; shutting down");
        handle
          .stop()
          .then(() => process.exit(0))
          .catch((err: unknown) => {
            logger.error({ err: (err as Error).message }, "shutdown failed");
            process.exit(1);
          });
      };
      process.on("SIGTERM", () => shutdown("SIGTERM"));
      process.on("SIGINT", () => shutdown("SIGINT"));
    }),
);

addCommonOptions(
  program
    .command("once")
    .description("discovery plus one run of each enabled collector; prints the exposition")
    .option("--collectors <names>", "comma-separated collectors to run (default: every enabled one)")
    .action(async (opts: CommonOptions & { collectors?: string }) => {
      const config = await load(opts, true);
      const logger = createLogger({
        level: opts["log.level"] === "info" ? "warn" : opts["log.level"],
        format: opts["log.format"],
      });
      const { runOnce } = await import("../daemon.js");
      try {
        const text = await runOnce({
          config,
          logger,
          collectors: opts.collectors
            ?.split(",")
            .map((s) => s.trim())
            .filter(Boolean),
        });
        process.stdout.write(text);
        process.exit(0);
      } catch (err) {
        fail((err as Error).message);
      }
    }),
);

addCommonOptions(
  program
    .command("check-config")
    .description("validate the configuration; print the effective config with secrets redacted")
    .action(async (opts: CommonOptions) => {
      const config = await load(opts, false);
      if (config.web.configFile) {
        // The daemon reads the web config file at start; check it here too.
        const { loadWebConfig } = await import("../server/webConfig.js");
        try {
          await loadWebConfig(config.web.configFile);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          process.stderr.write(
            `sitehost-exporter: invalid web config file\n${err.problems.map((p) => `  ${p}\n`).join("")}`,
          );
          process.exit(2);
        }
      }
      process.stdout.write(stringify(redactConfig(config)));
      const missing = credentialProblems(config);
      if (missing.length > 0) {
        process.stderr.write(
          `sitehost-exporter: the daemon would not start:\n${missing.map((p) => `  ${p}\n`).join("")}`,
        );
        process.exit(2);
      }
      process.stderr.write("configuration is valid\n");
    }),
);

program.addCommand(simulateCommand().exitOverride());
program.addCommand(demoCommand().exitOverride());

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
    process.exit(2);
  }
}

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // commander has printed the message (and help) already; help and --version exit 0.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  fail((err as Error).message);
});
