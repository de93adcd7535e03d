/**
 * The parts of a process that start and stop: started one after the other in the order given, stopped
 * in the reverse order, so each part starts after what it uses and stops before it (Go's run.Group,
 * with an order). A start that fails stops the parts already started and fails.
 */

export interface Component {
  /** What it is: a list of components reads as the start order. */
  readonly name: string;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export class ComponentGroup {
  private readonly started: Component[] = [];
  private starting: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | undefined;

  /** Start `components` (absent ones skipped) in order, after those of an earlier start. */
  start(components: ReadonlyArray<Component | undefined | false>): Promise<void> {
    this.starting = this.starting.then(async () => {
      for (const component of components) {
        if (!component || this.stopping) continue;
        try {
          await component.start?.();
        } catch (err) {
          // A stop asked for meanwhile waits for this start to settle; else stop what started here.
          if (!this.stopping) {
            this.stopping = this.stopStarted();
            await this.stopping.catch(() => undefined);
          }
          throw err;
        }
        this.started.push(component);
      }
    });
    return this.starting;
  }

  /**
   * Once: waits for a start under way, then stops every started component in reverse order, each one
   * even when a stop before it failed (the first failure is thrown at the end).
   */
  stop(): Promise<void> {
    return (this.stopping ??= this.starting.catch(() => undefined).then(() => this.stopStarted()));
  }

  private async stopStarted(): Promise<void> {
    let firstError: unknown;
    for (const component of this.started.splice(0).reverse()) {
      try {
        await component.stop?.();
      } catch (err) {
        firstError ??= err;
      }
    }
    if (firstError !== undefined) throw firstError;
  }
}
