/**
 * Webhook deliveries: each event is POSTed as JSON to the configured URL. An attempt fails on a
 * connection error, on no answer within 5 s, or on a status other than 2xx; a failed delivery is tried
 * again after the backoff, doubling each time, up to the configured number of attempts. Events are
 * sent independently, so a retried one can arrive after a later one. Retries wait in real time, not
 * on the simulator's clock.
 */
import type { WebhookPayload } from "./events.js";
import type { WebhookAttempt } from "./stats.js";
import { backoffMs, sleep } from "../util/time.js";

export const WEBHOOK_TIMEOUT_MS = 5000;

export interface WebhookSettings {
  url: string | null;
  attempts: number;
  backoffMs: number;
}

export class WebhookSender {
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly controller = new AbortController();
  private closed = false;

  constructor(
    public readonly settings: WebhookSettings,
    private readonly now: () => number,
    private readonly record: (attempt: WebhookAttempt) => void,
  ) {}

  /** Queue an event for delivery (nothing happens without a URL). */
  send(payload: WebhookPayload): void {
    const url = this.settings.url;
    if (url === null || this.closed) return;
    this.pending += 1;
    void this.attempt(url, payload, 1);
  }

  private async attempt(url: string, payload: WebhookPayload, attempt: number): Promise<void> {
    let status: number | null = null;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "sitehost-simulator-webhooks/1" },
        body: JSON.stringify(payload),
        signal: AbortSignal.any([this.controller.signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch {
      // unreachable, refused or too slow: status stays null
    }
    if (this.closed) return this.done();
    this.record({ event: payload.event, attempt, status, at: this.now() });
    const delivered = status !== null && status >= 200 && status < 300;
    if (delivered || attempt >= this.settings.attempts) return this.done();
    // A plain doubling from the configured backoff (no jitter): tests can tell when each attempt comes.
    const waitMs = backoffMs(attempt - 1, { baseMs: this.settings.backoffMs, capMs: Infinity }, () => 1);
    try {
      await sleep(waitMs, this.controller.signal);
    } catch {
      return; // closed
    }
    return this.attempt(url, payload, attempt + 1);
  }

  private done(): void {
    this.pending = Math.max(0, this.pending - 1);
    if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves once every queued event is delivered or has used up its attempts. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.controller.abort();
    this.pending = 0;
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
