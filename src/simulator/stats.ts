/** What the simulator counts, for tests and benchmarks to read back. */

/** One webhook delivery attempt. */
export interface WebhookAttempt {
  event: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** The receiver's HTTP status; null when it could not be reached or did not answer in time. */
  status: number | null;
  /** Simulator clock when the attempt ended, epoch ms. */
  at: number;
}

export interface SimulatorStats {
  /** Requests by `METHOD route-template status`. */
  requests: Record<string, number>;
  totalRequests: number;
  tokensIssued: number;
  tokensRevoked: number;
  /** Requests that carried an expired (not just unknown) token. */
  expiredTokenUses: number;
  /** Requests received while a 429 Retry-After window was open. */
  requestsDuringRetryAfter: number;
  maxInFlight: number;
  /** Log page requests (every site and stream). */
  logPageRequests: number;
  /** SSL-detail requests for an existing record, by the record's type (A, CNAME, TXT, MX, …). */
  sslRecordTypes: Record<string, number>;
  /** Webhook delivery attempts, oldest first; the newest 1000 are kept. */
  webhookDeliveries: WebhookAttempt[];
}

export const MAX_WEBHOOK_ATTEMPTS_KEPT = 1000;

export function emptyStats(): SimulatorStats {
  return {
    requests: {},
    totalRequests: 0,
    tokensIssued: 0,
    tokensRevoked: 0,
    expiredTokenUses: 0,
    requestsDuringRetryAfter: 0,
    maxInFlight: 0,
    logPageRequests: 0,
    sslRecordTypes: {},
    webhookDeliveries: [],
  };
}

export function countRequest(stats: SimulatorStats, method: string, template: string, status: number): void {
  const key = `${method} ${template} ${status}`;
  stats.requests[key] = (stats.requests[key] ?? 0) + 1;
}

export function recordWebhookAttempt(stats: SimulatorStats, attempt: WebhookAttempt): void {
  stats.webhookDeliveries.push(attempt);
  if (stats.webhookDeliveries.length > MAX_WEBHOOK_ATTEMPTS_KEPT) stats.webhookDeliveries.shift();
}
