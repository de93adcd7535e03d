/** Test helper: a pino logger whose records (parsed JSON objects) the test can read. */
import { Writable } from "node:stream";
import { pino } from "pino";

export function captureLogs(level = "info"): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level }, out), lines };
}
