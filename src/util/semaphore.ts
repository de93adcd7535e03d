/** A FIFO counting semaphore: at most `limit` holders at once, waiters served in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get inUse(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** Resolves with a release function (idempotent) once a place is free. */
  async acquire(): Promise<() => void> {
    if (this.active < this.limit && this.waiters.length === 0) this.active += 1;
    // A released place is handed straight to the next waiter, so nobody can slip in between.
    else await new Promise<void>((r) => this.waiters.push(r));
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.active -= 1;
    };
  }
}
