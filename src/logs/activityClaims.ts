/**
 * Which activity stream ships an entry met by more than one. The account's activity log may list the
 * sites' entries too (the platform does not say); the same entry then reaches the account's stream
 * and its site's, with the same fingerprint. The first stream to keep it claims it and ships it; the
 * others count it as a duplicate. A stream never loses its own claim, so a read it abandons and
 * repeats ships the entry still.
 */
export const CLAIM_TTL_MS = 3_600_000;

export class ActivityClaims {
  private readonly owners = new Map<string, { stream: string; atMs: number }>();
  private sinceSweep = 0;

  /** True when `stream` may ship the entry (no other stream claimed it); claims it if unclaimed. */
  claim(fingerprint: string, stream: string, nowMs: number): boolean {
    const owner = this.owners.get(fingerprint);
    if (owner && owner.stream !== stream && nowMs - owner.atMs < CLAIM_TTL_MS) return false;
    if (!owner || owner.stream !== stream) this.owners.set(fingerprint, { stream, atMs: nowMs });
    if (++this.sinceSweep >= 1024) this.sweep(nowMs);
    return true;
  }

  /** Claims older than the TTL: a stream that has not met the entry within an hour never will. */
  private sweep(nowMs: number): void {
    this.sinceSweep = 0;
    for (const [fp, owner] of this.owners) if (nowMs - owner.atMs >= CLAIM_TTL_MS) this.owners.delete(fp);
  }

  get size(): number {
    return this.owners.size;
  }
}
