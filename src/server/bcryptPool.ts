/**
 * bcrypt comparisons on worker threads. bcrypt is slow on purpose (tens to hundreds of
 * milliseconds of CPU at the usual costs); on the main thread every comparison would hold up
 * every other request, cached scrapes included.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Resolves whether `password` matches the bcrypt `hash`; never rejects for a wrong password. */
export type PasswordVerifier = (password: string, hash: string) => Promise<boolean>;

interface Job {
  password: string;
  hash: string;
  resolve: (ok: boolean) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

// A CommonJS worker given by source, so it runs the same from dist/ and from the TypeScript
// sources under test; bcryptjs is loaded from the path this module resolves.
const bcryptPath = createRequire(import.meta.url).resolve("bcryptjs");
const SOURCE = `
const { parentPort } = require("node:worker_threads");
const bcrypt = require(${JSON.stringify(bcryptPath)});
parentPort.on("message", (m) => {
  let ok = false;
  try { ok = bcrypt.compareSync(m.password, m.hash); } catch { ok = false; }
  parentPort.postMessage(ok);
});
`;

export class BcryptPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Job[] = [];
  private closed = false;

  constructor(private readonly size: number) {}

  readonly verify: PasswordVerifier = (password, hash) =>
    new Promise<boolean>((resolve, reject) => {
      if (this.closed) return reject(new Error("password verification stopped"));
      this.waiting.push({ password, hash, resolve, reject });
      this.dispatch();
    });

  private dispatch(): void {
    for (;;) {
      const job = this.waiting[0];
      if (!job) return;
      let slot = this.slots.find((s) => !s.job);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      this.waiting.shift();
      slot.job = job;
      slot.worker.postMessage({ password: job.password, hash: job.hash });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(SOURCE, { eval: true });
    // Idle workers must not keep a stopping daemon alive.
    worker.unref();
    const slot: Slot = { worker };
    worker.on("message", (ok: boolean) => {
      const job = slot.job;
      slot.job = undefined;
      job?.resolve(ok === true);
      this.dispatch();
    });
    const fail = (err: Error) => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      slot.job?.reject(err);
      slot.job = undefined;
      this.dispatch();
    };
    worker.on("error", fail);
    worker.on("exit", () => fail(new Error("password verification worker exited")));
    this.slots.push(slot);
    return slot;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new Error("password verification stopped"));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}
