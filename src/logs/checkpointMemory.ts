/**
 * What a process that lost the checkpoint lock last knew of its streams. When the lock is lost
 * because the checkpoint directory was deleted or recreated (not taken over: a person emptied it, a
 * volume was remounted), the process stands by and, holding the lock again, finds no checkpoint:
 * every stream would start again at logs.startFrom and ship everything since then a second time.
 *
 * A stream closed while the lock was lost leaves its acknowledged state here, as the snapshot it
 * would have written; a stream opened later whose file is missing resumes from it. A file that
 * exists (another exporter took over and moved on) wins, and an entry is used once.
 */
export class CheckpointMemory {
  private readonly snapshots = new Map<string, string>();

  /** The snapshot text of a stream closed while fenced, by its file name. */
  keep(file: string, snapshot: string): void {
    this.snapshots.set(file, snapshot);
  }

  /** The kept snapshot of a file, removed from memory (a checkpoint on disk supersedes it either way). */
  take(file: string): string | undefined {
    const snapshot = this.snapshots.get(file);
    this.snapshots.delete(file);
    return snapshot;
  }

  get size(): number {
    return this.snapshots.size;
  }
}
