/**
 * The set of streams the pipeline runs, kept in step with the streams wanted: one map, one job (the
 * way fastly-exporter's manager keeps one subscriber per service). A stream wanted and not running is
 * opened; one running and no longer wanted is closed; one whose site's name changed is renamed, by an
 * explicit call to the stream, which passes the new name to each part that carries it (so does a
 * site whose datacenter, kind or account changed: what its records' resource says).
 */
import { identityChanged, type StreamSpec } from "./streams.js";

export interface ManagedStream {
  readonly spec: StreamSpec;
  rename(spec: StreamSpec): void;
  close(): void;
}

export interface StreamChanges {
  opened: number;
  renamed: number;
  closed: number;
}

export class StreamSet<S extends ManagedStream> {
  private readonly streams = new Map<string, S>();

  constructor(private readonly open: (spec: StreamSpec) => S) {}

  get size(): number {
    return this.streams.size;
  }

  get(key: string): S | undefined {
    return this.streams.get(key);
  }

  values(): IterableIterator<S> {
    return this.streams.values();
  }

  /** Open, rename and close streams until the running ones are exactly `wanted`. */
  reconcile(wanted: readonly StreamSpec[]): StreamChanges {
    const changes: StreamChanges = { opened: 0, renamed: 0, closed: 0 };
    const keys = new Set<string>();
    for (const spec of wanted) {
      keys.add(spec.key);
      const running = this.streams.get(spec.key);
      if (!running) {
        this.streams.set(spec.key, this.open(spec));
        changes.opened += 1;
      } else if (identityChanged(running.spec, spec)) {
        running.rename(spec);
        changes.renamed += 1;
      }
    }
    for (const [key, stream] of this.streams) {
      if (keys.has(key)) continue;
      this.streams.delete(key);
      stream.close();
      changes.closed += 1;
    }
    return changes;
  }
}
