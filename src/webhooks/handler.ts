/**
 * One webhook delivery, from request to answer:
 *   405 (with Allow) for anything but POST; 401 for a wrong or missing token, before the body is read;
 *   415 for a compressed body; 413 for a body over the limit; 400 for a body that is not a JSON
 *   object with an `event` string; 503 while nothing can take events (start-up, standby) or when the
 *   durable queue is full or failing, so the platform retries;
 *   200 once the event's log record is on disk in the queue (or, when logs are not shipped, at once)
 *   and the event is counted. Site events then refresh that site.
 * A rejected delivery counts only in sitehost_exporter_webhook_rejected_total, never as an event.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { OutgoingRecord } from "../logs/otlp/encode.js";
import { ThrottledWarnings } from "../util/throttledLog.js";
import { systemClock, type Clock } from "../util/time.js";
import type { WebhookAuth } from "./auth.js";
import { MAX_BODY_BYTES, parsePayload, readBody, type BodySource } from "./body.js";
import type { EventCounts, RejectReason, WebhookSelfMetrics } from "./metrics.js";
import { SITE_EVENTS, siteIdOf, type WebhookPayload } from "./payload.js";
import { CheckpointWriteError } from "../ha/volume.js";
import { QueueFullError } from "./queue.js";
import { buildRecord } from "./record.js";

export interface WebhookRequest extends BodySource {
  method?: string;
  url?: string;
  httpVersionMajor?: number;
  socket?: { remoteAddress?: string } | null;
  destroy(): unknown;
}

export interface WebhookResponse {
  writeHead(status: number, headers?: Record<string, string>): unknown;
  end(body: string): unknown;
  once(event: "finish", listener: () => void): unknown;
}

/** What takes accepted events; absent while the exporter starts or stands by. */
export interface WebhookTarget {
  /** Resolves once the record is durable. Absent when logs are not shipped: events are counted only. */
  queue?: { enqueue(record: OutgoingRecord): Promise<void> };
  /** The inventory's name of a site (undefined for a site this exporter does not watch). */
  siteName(id: number): string | undefined;
  /** Read a site again soon (site events). */
  refresh(siteId: number): void;
  /** Any accepted event, with its site when it names one (the activity logs have an entry; collectors may ask again). */
  happened?(siteId: number | undefined, payload: WebhookPayload): void;
}

export interface WebhookHandlerDeps {
  auth: WebhookAuth;
  counts: EventCounts;
  metrics: WebhookSelfMetrics;
  logger: Logger;
  target(): WebhookTarget | undefined;
  clock?: Pick<Clock, "now">;
  /** log.record.uid of a new record. */
  uid?: () => string;
  maxBodyBytes?: number;
}

export type WebhookHandler = (req: WebhookRequest, res: WebhookResponse) => Promise<void>;

function answer(res: WebhookResponse, status: number, body: object, headers: Record<string, string> = {}) {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
}

/** Whether the request announces a body (a length above zero, or chunked). */
function hasBody(req: WebhookRequest): boolean {
  const length = req.headers["content-length"];
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
}

export function createWebhookHandler(deps: WebhookHandlerDeps): WebhookHandler {
  const log = deps.logger.child({ component: "webhooks" });
  const clock = deps.clock ?? systemClock;
  const warnings = new ThrottledWarnings(log, 60_000, clock);
  const uid = deps.uid ?? (() => `webhook-${randomUUID()}`);
  const limit = deps.maxBodyBytes ?? MAX_BODY_BYTES;

  const reject = (
    req: WebhookRequest,
    res: WebhookResponse,
    reason: RejectReason,
    status: number,
    error: string,
    headers: Record<string, string> = {},
  ) => {
    deps.metrics.rejected.inc({ reason });
    warnings.warn(
      `rejected ${reason}`,
      { reason, status, remote: req.socket?.remoteAddress },
      `webhook delivery rejected: ${error}`,
    );
    answer(res, status, { error }, headers);
  };

  return async (req, res) => {
    // Refused before its body is read: an HTTP/1.1 connection is closed rather than drained of a body
    // nobody wants (HTTP/2 resets the stream when the answer ends).
    const unread: Record<string, string> =
      hasBody(req) && req.httpVersionMajor === 1 ? { connection: "close" } : {};
    if (req.method !== "POST") {
      return reject(req, res, "method_not_allowed", 405, "only POST is accepted", {
        allow: "POST",
        ...unread,
      });
    }
    // The token is checked before a byte of the body is read.
    if (deps.auth.check(req.headers.authorization, req.url) !== "ok") {
      return reject(req, res, "unauthorized", 401, "wrong or missing token", {
        "www-authenticate": 'Bearer realm="sitehost-exporter webhooks"',
        ...unread,
      });
    }
    const encoding = String(req.headers["content-encoding"] ?? "identity").toLowerCase();
    if (encoding !== "identity") {
      return reject(req, res, "unsupported_media_type", 415, "compressed bodies are not accepted", unread);
    }
    const body = await readBody(req, limit);
    if (body.kind === "aborted") return;
    if (body.kind === "too_large") {
      // Close the connection rather than read (and drop) the rest of a body that may be huge.
      reject(req, res, "too_large", 413, `the body is larger than ${limit} bytes`, {
        ...(req.httpVersionMajor === 1 ? { connection: "close" } : {}),
      });
      if (req.httpVersionMajor !== 1) res.once("finish", () => req.destroy());
      return;
    }
    const parsed = parsePayload(body.body);
    if ("problem" in parsed) return reject(req, res, "bad_request", 400, parsed.problem);
    const target = deps.target();
    if (!target) {
      return reject(req, res, "unavailable", 503, "not accepting events yet (starting, or standing by)", {
        "retry-after": "10",
      });
    }
    const payload = parsed.ok;
    const siteId = siteIdOf(payload);
    if (target.queue) {
      const { record, truncated } = buildRecord(payload, {
        receivedMs: clock.now(),
        uid: uid(),
        siteName: target.siteName,
      });
      for (const reason of truncated) deps.metrics.truncated.inc({ reason });
      try {
        await target.queue.enqueue(record);
      } catch (err) {
        // A full queue is counted; a refused write is logged by the checkpoint directory's volume.
        if (!(err instanceof QueueFullError) && !(err instanceof CheckpointWriteError)) {
          warnings.error("queue", { err }, "could not queue a webhook event on disk");
        }
        return reject(req, res, "unavailable", 503, "the event could not be queued; try again later", {
          "retry-after": "30",
        });
      }
    }
    const label = deps.counts.count(payload.event);
    answer(res, 200, { status: "accepted" });
    log.debug({ event: payload.event, label, siteId }, "webhook event accepted");
    if (siteId !== undefined && SITE_EVENTS.has(payload.event)) target.refresh(siteId);
    target.happened?.(siteId, payload);
  };
}
