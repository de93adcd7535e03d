/**
 * The parts of `node:http` the HTTP servers use (the exporter's and the simulator's), loaded through
 * `require`.
 *
 * An ESM import of `node:http` reads every export of the built-in to build its namespace, and
 * reading its `WebSocket`, `CloseEvent` and `MessageEvent` loads Node.js's own bundled copy of
 * undici: 1.3 MB more heap for the daemon's modules (measured), held for the life of a daemon that
 * never uses it (the API client has the undici package). `require` reads only the exports named here.
 */
import { createRequire } from "node:module";
import type * as Http from "node:http";

const http = createRequire(import.meta.url)("node:http") as typeof Http;

export const { createServer, validateHeaderName, validateHeaderValue } = http;
