/**
 * Text written as bytes into one buffer reused by every render, and handed on in chunks as it
 * fills: compressed into gzip members (`GzipMembers`), or collected as text. A gzip stream may hold
 * several members and decompresses to their concatenation, so the members sent one after the other
 * are one valid body. Rendering a family of 5,000 sites' lines this way makes no string of its lines
 * (tens of megabytes at every scrape, as pieces, joined and copied to bytes), only the bytes of a
 * chunk at a time, outside the V8 heap.
 */
import { gzipSync } from "node:zlib";
import { ownedBytes } from "../util/ownedBytes.js";

/**
 * Bytes per chunk. Deflate's window is 32 KB, so a member of that much loses little to its fresh
 * dictionary and is compressed faster (measured once on 8 MB of 5,000 sites' histogram lines at
 * level 1: 13.8 to 1 in 19 ms, against 14.6 to 1 in 67 ms with members of 256 KB).
 */
export const MEMBER_BYTES = 32 * 1024;

/**
 * Level 1: scrapes are frequent and the text compresses well anyway. What this returns is kept (by the
 * store until its family changes, by the exposition while its body is served), so the bytes get
 * memory of their own.
 */
export const gzipText = (text: string | Uint8Array): Buffer => ownedBytes(gzipSync(text, { level: 1 }));

/** The buffer chunks are written in: one for the process (a render runs start to end without awaiting). */
let scratch = Buffer.allocUnsafeSlow(2 * MEMBER_BYTES);
let writing = false;
const HEX_DIGITS = Buffer.from("0123456789abcdef");
/** Pieces up to this many bytes are copied in a loop (measured: faster than Buffer#copy below about 64). */
const SHORT = 64;

export class ChunkWriter {
  private length = 0;
  private done = false;

  constructor(
    private readonly onChunk: (bytes: Buffer) => void,
    private readonly chunkBytes = MEMBER_BYTES,
  ) {
    if (writing) throw new Error("a ChunkWriter is already writing: finish it first");
    writing = true;
  }

  /** Room for `bytes` more (the chunk is handed on first when it is full). */
  private room(bytes: number): void {
    if (this.length + bytes <= scratch.length) return;
    if (this.length >= this.chunkBytes) this.flush();
    if (this.length + bytes <= scratch.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * scratch.length, this.length + bytes));
    scratch.copy(grown, 0, 0, this.length);
    scratch = grown;
  }

  text(text: string): void {
    this.room(3 * text.length);
    this.length += scratch.write(text, this.length, "utf8");
  }

  bytes(bytes: Buffer, start: number, end: number): void {
    this.room(end - start);
    if (end - start > SHORT) {
      this.length += bytes.copy(scratch, this.length, start, end);
      return;
    }
    // Most pieces are a line's labels or head: copied here rather than through a native call each.
    let at = this.length;
    for (let i = start; i < end; i++) scratch[at++] = bytes[i] as number;
    this.length = at;
  }

  /** A number as the exposition writes it (formatValue); a non-negative safe integer digit by digit. */
  number(value: number, format: (value: number) => string): void {
    if (!(Number.isSafeInteger(value) && value >= 0)) {
      this.text(format(value));
      return;
    }
    this.room(16);
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    let at = this.length + digits;
    this.length = at;
    let rest = value;
    do {
      scratch[--at] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    } while (rest > 0);
  }

  /** `value` (an unsigned 32-bit number) as `digits` lowercase hex digits, leading zeros included. */
  hex(value: number, digits: number): void {
    this.room(digits);
    for (let k = digits - 1, rest = value; k >= 0; k--, rest = Math.floor(rest / 16))
      scratch[this.length + k] = HEX_DIGITS[rest % 16] as number;
    this.length += digits;
  }

  /** The end of a line: a full chunk is handed on here, so chunks hold whole lines. */
  line(): void {
    this.room(1);
    scratch[this.length++] = 0x0a;
    if (this.length >= this.chunkBytes) this.flush();
  }

  private flush(): void {
    this.onChunk(scratch.subarray(0, this.length));
    this.length = 0;
  }

  /** Hands on what is left (an empty chunk when nothing was written at all, if `always`). */
  finish(always = false): void {
    if (this.done) return;
    this.done = true;
    writing = false;
    if (this.length > 0 || always) this.flush();
  }
}

/** Gzip members of the text written, each of about `chunkBytes` before compression. */
export class GzipMembers {
  private readonly members: Buffer[] = [];
  readonly writer: ChunkWriter;

  constructor(chunkBytes = MEMBER_BYTES) {
    this.writer = new ChunkWriter((bytes) => this.members.push(gzipText(bytes)), chunkBytes);
  }

  /** The members (at least one, maybe of no text, so a body is always valid gzip). */
  finish(): Buffer[] {
    this.writer.finish(this.members.length === 0);
    return this.members;
  }
}

/** The text written, as one string (the exposition for `once` and tests). */
export function writtenText(write: (writer: ChunkWriter) => void): string {
  const chunks: Buffer[] = [];
  const writer = new ChunkWriter((bytes) => chunks.push(Buffer.from(bytes)));
  try {
    write(writer);
  } finally {
    writer.finish();
  }
  return Buffer.concat(chunks).toString("utf8");
}
