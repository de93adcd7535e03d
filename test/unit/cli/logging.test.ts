import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, jsonLineToLogfmt } from "../../../src/logging.js";

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      lines.push(
        ...String(chunk)
          .split("\n")
          .filter((l) => l !== ""),
      );
      cb();
    },
  });
  return { lines, stream };
}

const SECRET = "tok-Secret-9b2e-never-log";

describe("logfmt", () => {
  it('has the shape ts=... level=info msg="..." key=value', () => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "info", format: "logfmt", destination: stream });
    log.info({ collector: "traffic", sites: 3, ok: true }, "collector run finished");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=info msg="collector run finished" collector=traffic sites=3 ok=true$/,
    );
  });

  it("quotes values with spaces, quotes, = or newlines; one record per line", () => {
    const line = jsonLineToLogfmt(
      JSON.stringify({
        time: Date.UTC(2026, 0, 31, 12, 0, 0),
        level: "warn",
        msg: "two\nlines",
        a: 'say "hi"',
        b: "k=v",
        c: "",
        d: { x: 1 },
      }),
    );
    expect(line).toBe(
      'ts=2026-01-31T12:00:00.000Z level=warn msg="two\\nlines" a="say \\"hi\\"" b="k=v" c="" d="{\\"x\\":1}"\n',
    );
  });

  it("respects the level", () => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "warn", format: "logfmt", destination: stream });
    log.info("hidden");
    log.warn("shown");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("level=warn msg=shown");
  });
});

describe("json", () => {
  it("one JSON object per line with an ISO time, a level label and the message", () => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "info", format: "json", destination: stream });
    log.info({ site: "a" }, "hello");
    const rec = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(rec.level).toBe("info");
    expect(rec.msg).toBe("hello");
    expect(rec.site).toBe("a");
    expect(String(rec.time)).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe("secret-bearing keys are redacted", () => {
  const record = {
    clientSecret: SECRET,
    token: SECRET,
    req: { headers: { authorization: `Bearer ${SECRET}` } },
    config: { api: { clientSecret: SECRET, client_secret: SECRET } },
    auth: { access_token: SECRET, refresh_token: SECRET, password: SECRET },
  };

  it.each(["json", "logfmt"] as const)("in %s", (format) => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "info", format, destination: stream });
    log.info(record, "with secrets");
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    expect(line).not.toContain(SECRET);
    expect(line).toContain("with secrets");
    // 8 secret-bearing values above, each replaced by the placeholder.
    expect(line.split("<redacted>").length - 1).toBe(8);
  });

  it("a child logger redacts too", () => {
    const { lines, stream } = sink();
    const log = createLogger({ level: "info", format: "json", destination: stream }).child({
      component: "api",
    });
    log.info({ token: SECRET }, "token refreshed");
    expect(lines[0]).not.toContain(SECRET);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ component: "api", token: "<redacted>" });
  });
});
