/**
 * A log page's JSON, as the bytes that came (UTF-8), checked against the JSON grammar without building
 * any of its values, and the places of what a read needs first: the top-level members, each record of
 * `logs` and each record's `timestamp`. A read builds only the records it has to look at (most of a
 * page was read before), so a page costs its bytes, outside the V8 heap, and a few small arrays,
 * instead of its text and an object per record.
 *
 * The check accepts exactly what JSON.parse accepts of the bytes as text (a test holds the two
 * together): bytes that are no valid UTF-8 become U+FFFD in the text, which a string may hold and
 * nothing else may, as any byte from 0x80 up here. Where a key is given twice, the last one counts, as
 * with JSON.parse.
 */

/** Where the values of a log page are: byte offsets, ends exclusive. */
export interface LogPageSpans {
  /** Each top-level member's value: [start, end). */
  members: Map<string, readonly [number, number]>;
  /**
   * The records of `logs` when it is a list: four numbers per record, the record's start and end and
   * its `timestamp` value's start and end (-1, -1 when the record is no object or has none).
   */
  records?: Int32Array;
}

export class JsonSyntaxError extends Error {}

const OBJECT = 1;
const ARRAY = 2;

/** Scan a log page; undefined when it is JSON but not an object (the caller decodes it whole). */
export function scanLogPage(bytes: Buffer): LogPageSpans | undefined {
  const s = new Scanner(bytes);
  s.ws();
  if (s.peek() !== 0x7b) {
    s.value();
    s.end();
    return undefined;
  }
  const members = new Map<string, readonly [number, number]>();
  let records: Int32Array | undefined;
  s.pos++;
  s.ws();
  if (s.peek() === 0x7d) s.pos++;
  else
    for (;;) {
      const key = s.key();
      const start = s.pos;
      if (key === "logs") records = s.peek() === 0x5b ? s.records() : (s.value(), undefined);
      else s.value();
      members.set(key, [start, s.pos]);
      if (s.close(0x7d)) break;
    }
  s.end();
  return records ? { members, records } : { members };
}

class Scanner {
  pos = 0;
  constructor(private readonly text: Buffer) {}

  /** The byte at the position; NaN past the end (no comparison holds for it). */
  peek(): number {
    return this.pos < this.text.length ? (this.text[this.pos] as number) : Number.NaN;
  }

  fail(): never {
    throw new JsonSyntaxError(`not JSON at offset ${this.pos}`);
  }

  ws(): void {
    const t = this.text;
    let c = t[this.pos];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t[++this.pos];
  }

  /** Only whitespace is left. */
  end(): void {
    this.ws();
    if (this.pos !== this.text.length) this.fail();
  }

  /** After a member or element: a comma (false) or the closing bracket (true). */
  close(closer: number): boolean {
    this.ws();
    const c = this.peek();
    this.pos++;
    if (c === 0x2c) {
      this.ws();
      return false;
    }
    if (c !== closer) this.fail();
    return true;
  }

  /** A member's key and colon; its value's first character follows. */
  key(): string {
    const start = this.pos;
    const escaped = this.colon();
    return escaped
      ? (JSON.parse(this.text.toString("utf8", start, this.keyEnd)) as string)
      : this.text.toString("utf8", start + 1, this.keyEnd - 1);
  }

  /** A member's key is `word` (no string is made of it: a page's records have thousands of keys). */
  keyIs(word: string): boolean {
    const start = this.pos;
    if (this.colon()) return JSON.parse(this.text.toString("utf8", start, this.keyEnd)) === word;
    return this.keyEnd - start - 2 === word.length && startsWith(this.text, word, start + 1);
  }

  /** Where the last key read ends (after its closing quote). */
  private keyEnd = 0;

  /** A key, its colon and the whitespace after it; true when the key holds an escape. */
  private colon(): boolean {
    const escaped = this.string();
    this.keyEnd = this.pos;
    this.ws();
    if (this.peek() !== 0x3a) this.fail();
    this.pos++;
    this.ws();
    return escaped;
  }

  /** `logs` as a list: each record's span and its timestamp's. */
  records(): Int32Array {
    let out = new Int32Array(4 * 256);
    let n = 0;
    this.pos++;
    this.ws();
    if (this.peek() === 0x5d) {
      this.pos++;
      return out.subarray(0, 0);
    }
    for (;;) {
      if (4 * n + 4 > out.length) {
        const grown = new Int32Array(out.length * 2);
        grown.set(out);
        out = grown;
      }
      const start = this.pos;
      let tsStart = -1;
      let tsEnd = -1;
      if (this.peek() === 0x7b) {
        this.pos++;
        this.ws();
        if (this.peek() === 0x7d) this.pos++;
        else
          for (;;) {
            const timestamp = this.keyIs("timestamp");
            const at = this.pos;
            this.value();
            if (timestamp) [tsStart, tsEnd] = [at, this.pos];
            if (this.close(0x7d)) break;
          }
      } else this.value();
      out[4 * n] = start;
      out[4 * n + 1] = this.pos;
      out[4 * n + 2] = tsStart;
      out[4 * n + 3] = tsEnd;
      n++;
      if (this.close(0x5d)) return out.subarray(0, 4 * n);
    }
  }

  /** One value of any kind, checked; nesting is followed with a stack, not recursion (any depth). */
  value(): void {
    const first = this.peek();
    if (first !== 0x7b && first !== 0x5b) {
      this.scalar(first);
      return;
    }
    const stack: number[] = [];
    for (;;) {
      // A value starts here.
      const c = this.peek();
      if (c === 0x7b || c === 0x5b) {
        this.pos++;
        this.ws();
        if (this.peek() === c + 2) this.pos++;
        else {
          stack.push(c === 0x7b ? OBJECT : ARRAY);
          if (c === 0x7b) this.colon();
          continue;
        }
      } else this.scalar(c);
      // After a value: close containers until one has a next member or element.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) return;
        if (!this.close(top === OBJECT ? 0x7d : 0x5d)) {
          if (top === OBJECT) this.colon();
          break;
        }
        stack.pop();
      }
    }
  }

  /** A string, number, true, false or null starting with `c`. */
  private scalar(c: number): void {
    if (c === 0x22) this.string();
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else this.literal();
  }

  /** A string; true when it holds an escape. */
  string(): boolean {
    const t = this.text;
    if (t[this.pos] !== 0x22) this.fail();
    let escaped = false;
    let i = this.pos + 1;
    for (;;) {
      const c = byteAt(t, i);
      // Not the quote, the backslash or a control character: as it is (bytes from 0x80 are UTF-8).
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
        i++;
        continue;
      }
      if (c === 0x22) break;
      if (c === 0x5c) {
        escaped = true;
        const e = byteAt(t, i + 1);
        if (e === 0x75) {
          for (let k = i + 2; k < i + 6; k++) if (!isHex(byteAt(t, k))) this.failAt(k);
          i += 6;
          continue;
        }
        if (!isEscape(e)) this.failAt(i + 1);
        i += 2;
        continue;
      }
      // A control character, or the end of the bytes (NaN).
      this.failAt(i);
    }
    this.pos = i + 1;
    return escaped;
  }

  private failAt(i: number): never {
    this.pos = i;
    return this.fail();
  }

  /** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(): void {
    const t = this.text;
    let i = this.pos;
    if (t[i] === 0x2d) i++;
    if (t[i] === 0x30) i++;
    else if (isNonZeroDigit(byteAt(t, i))) i = digits(t, i);
    else this.failAt(i);
    if (t[i] === 0x2e) {
      if (!isDigit(byteAt(t, i + 1))) this.failAt(i + 1);
      i = digits(t, i + 1);
    }
    const e = t[i];
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = t[i];
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(byteAt(t, i))) this.failAt(i);
      i = digits(t, i);
    }
    this.pos = i;
  }

  private literal(): void {
    for (const word of LITERALS) {
      if (startsWith(this.text, word, this.pos)) {
        this.pos += word.length;
        return;
      }
    }
    this.fail();
  }
}

const LITERALS = ["true", "false", "null"];

/** The byte at `i`, NaN past the end (no comparison holds for it). */
const byteAt = (t: Buffer, i: number): number => t[i] ?? Number.NaN;

/** Whether the bytes at `at` are the ASCII `word`. */
function startsWith(t: Buffer, word: string, at: number): boolean {
  for (let k = 0; k < word.length; k++) if (t[at + k] !== word.charCodeAt(k)) return false;
  return true;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isNonZeroDigit = (c: number): boolean => c >= 0x31 && c <= 0x39;
const isHex = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** " \ / b f n r t */
const isEscape = (c: number): boolean =>
  c === 0x22 ||
  c === 0x5c ||
  c === 0x2f ||
  c === 0x62 ||
  c === 0x66 ||
  c === 0x6e ||
  c === 0x72 ||
  c === 0x74;

function digits(t: Buffer, from: number): number {
  let i = from;
  while (isDigit(byteAt(t, i))) i++;
  return i;
}
