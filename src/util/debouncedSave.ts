/**
 * A state file written a little after it changed, so that a burst of changes is one write: `schedule`
 * after each change, `flush` at stop. The state is copied (`snapshot`) when the write is due, and
 * writes go one after another; a failed write is reported (`failed`) and the next change writes again.
 */
export interface DebouncedSaveOptions<T> {
  delayMs: number;
  snapshot: () => T;
  write: (state: T) => Promise<void>;
  failed: (err: unknown) => void;
}

export class DebouncedSave<T> {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly opts: DebouncedSaveOptions<T>) {}

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.opts.delayMs);
    this.timer.unref();
  }

  /** Write what is pending now, and wait for the writes under way. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.save();
    }
    await this.saving;
  }

  private save(): void {
    const state = this.opts.snapshot();
    this.saving = this.saving
      .then(() => this.opts.write(state))
      .catch((err: unknown) => this.opts.failed(err));
  }
}
