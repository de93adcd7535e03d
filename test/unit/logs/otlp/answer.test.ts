/**
 * A 2xx answer counts as an OTLP receiver's only when it is an ExportLogsServiceResponse: empty, or
 * the message in protobuf or JSON (its partial success read). An HTML page, a web server's "OK" or
 * bytes that do not decode are not, and `doctor`'s probe says so too.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { readAnswer } from "../../../../src/logs/otlp/answer.js";
import { probeOtlpEndpoint } from "../../../../src/logs/otlp/probe.js";
import { Batch } from "../../../../src/logs/otlp/batch.js";
import { ProtobufHttpSink } from "../../../../src/logs/otlp/sink.js";
import { preparePage } from "../../../../src/logs/prepared.js";
import { createResource, logScope } from "../../../../src/logs/resource.js";
import { partialSuccess } from "../../../helpers/otlp-receiver.js";

const PB = "application/x-protobuf";

describe("reading a 2xx answer", () => {
  it.each([
    ["an empty body (204, or the empty message)", PB, "", { rejected: 0 }],
    ["an empty body without a Content-Type", undefined, "", { rejected: 0 }],
    ["a partial success in protobuf", PB, partialSuccess(3, "too old"), { rejected: 3, message: "too old" }],
    ["the same with application/protobuf", "application/protobuf", partialSuccess(1, "x"), { rejected: 1 }],
    ["an empty JSON response", "application/json", "{}", { rejected: 0 }],
    [
      "a JSON partial success (int64 as a string)",
      "application/json; charset=utf-8",
      '{"partialSuccess":{"rejectedLogRecords":"2","errorMessage":"rate"}}',
      { rejected: 2, message: "rate" },
    ],
  ])("%s is accepted", (_, type, body, expected) => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    expect(readAnswer("HTTP 200", type, bytes, "protobuf")).toMatchObject({ kind: "accepted", ...expected });
  });

  it.each([
    [
      "an HTML page",
      "text/html",
      "<!DOCTYPE html><html><title>Welcome to nginx!</title></html>",
      /text\/html.*Welcome to nginx!/,
    ],
    ["a web server's OK", "text/plain", "OK", /text\/plain instead of an OTLP response \("OK"\)/],
    [
      "HTML declared as protobuf",
      PB,
      "<html><body>Login</body></html>",
      /not an OTLP response \(application\/x-protobuf, 31 bytes: "Login"\)/,
    ],
    ["HTML without a Content-Type", undefined, "<html>hi</html>", /not an OTLP response/],
    ["JSON that is not a response", "application/json", '["accepted"]', /not an OTLP response/],
    [
      "a JSON count that is not one",
      "application/json",
      '{"partialSuccess":{"rejectedLogRecords":"many"}}',
      /not an OTLP response/,
    ],
    ["protobuf with a wrong wire type", PB, Buffer.from([0x08, 0x01]), /not an OTLP response/],
    ["a truncated protobuf", PB, Buffer.from([0x0a, 0x05, 0x08]), /not an OTLP response/],
  ])("%s is not", (_, type, body, reason) => {
    const out = readAnswer("HTTP 200", type, typeof body === "string" ? Buffer.from(body) : body, "protobuf");
    expect(out.kind).toBe("invalid");
    expect(out.kind === "invalid" ? out.reason : "").toMatch(reason);
  });
});

describe("doctor's probe of the endpoint", () => {
  it("a 200 with a proxy's HTML page fails, saying what came instead", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "text/html" }).end("<title>Sign in</title>"));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/logs`;
      const probe = await probeOtlpEndpoint({
        protocol: "http/protobuf",
        url,
        headers: {},
        compression: "none",
        timeoutMs: 2000,
      });
      expect(probe).toMatchObject({
        result: "failed",
        status: 200,
        outcome: {
          kind: "invalid",
          reason: 'HTTP 200 with text/html instead of an OTLP response ("Sign in")',
        },
      });
    } finally {
      server.close();
    }
  });
});

describe("an endpoint that echoes the request's headers", () => {
  it("its answer is quoted without the credentials", async () => {
    const token = "s3cr3t-otlp-token-42";
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(`<title>You sent: Authorization: ${String(req.headers.authorization)}</title>`),
      );
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/logs`;
    const sink = new ProtobufHttpSink(
      {
        protocol: "http/protobuf",
        url,
        headers: { authorization: `Bearer ${token}` },
        compression: "none",
        timeoutMs: 2000,
      },
      createResource({}),
      logScope({}),
    );
    try {
      const batch = new Batch();
      batch.add(
        preparePage([{ entry: { timestamp: 1, status: 200 }, timeMs: 1, fingerprint: "f", occurrence: 0 }], {
          encode: (w, r) =>
            sink.encode(w, {
              timeMs: r.timeMs,
              observedMs: 1,
              severityNumber: 9,
              severityText: "",
              body: "x",
              attributes: {},
            }),
        }),
      );
      const outcome = await sink.send(batch, new AbortController().signal);
      expect(outcome).toMatchObject({
        kind: "invalid",
        reason: expect.stringContaining("You sent: Authorization: <redacted>"),
      });
      expect(JSON.stringify(outcome)).not.toContain(token);
      const probe = await probeOtlpEndpoint({
        protocol: "http/protobuf",
        url,
        headers: { authorization: `Bearer ${token}` },
        compression: "none",
        timeoutMs: 2000,
      });
      expect(probe.result).toBe("failed");
      expect(JSON.stringify(probe)).not.toContain(token);
    } finally {
      await sink.shutdown();
      server.close();
    }
  });
});
