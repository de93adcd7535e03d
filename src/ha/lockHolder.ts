/**
 * Who holds the checkpoint lock: the content of a generation file, this process's own identity, and
 * whether a holder is known to be dead (only a process on this kernel and in this PID namespace can
 * be checked; anywhere else its heartbeat decides).
 */
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/** Who holds (or held) the lock: the content of a generation file. */
export interface LockHolder {
  version: 1;
  /** Random per process: tells two processes apart even with the same host and pid. */
  owner: string;
  host: string;
  pid: number;
  /** When the holding process started. */
  startedAt: string;
  /** Refreshed every timeout / 4 while held. */
  heartbeatAt: string;
  generation: number;
  /** Set by a graceful stop: the next exporter takes over at once. */
  released?: boolean;
  /** Kernel boot and PID namespace: only there can a contender tell that the holder's pid is dead. */
  bootId?: string;
  pidNamespace?: string;
}

export type Identity = Pick<LockHolder, "host" | "pid" | "bootId" | "pidNamespace">;

function readOr(read: () => string): string | undefined {
  try {
    return read().trim();
  } catch {
    return undefined;
  }
}

/** The identity fields of this process. */
export function selfIdentity(): Identity {
  return {
    host: hostname(),
    pid: process.pid,
    bootId: readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
    pidNamespace: readOr(() => readlinkSync("/proc/self/ns/pid")),
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is someone else's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A generation file's holder, or undefined when the text is not one (torn, empty). */
export function parseHolder(raw: string): LockHolder | undefined {
  try {
    const v = JSON.parse(raw) as Partial<LockHolder>;
    return typeof v.owner === "string" && typeof v.host === "string" && typeof v.pid === "number"
      ? (v as LockHolder)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The holder process is on the kernel and in the PID namespace of `me`, and no longer runs. */
export function isDeadHere(holder: LockHolder, me: Identity): boolean {
  if (
    !me.bootId ||
    !me.pidNamespace ||
    holder.bootId !== me.bootId ||
    holder.pidNamespace !== me.pidNamespace
  ) {
    return false;
  }
  // A process with this process's own pid in this namespace is this process: the holder is gone.
  return holder.pid === process.pid || !isAlive(holder.pid);
}
