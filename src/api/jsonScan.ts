/**
 * A log page's JSON text checked against the JSON grammar without building any of its values, and
 * the places of what a read needs first: the top-level members, each record of `logs` and each
 * record's `timestamp`. A read builds only the records it has to look at (most of a page was read
 * before), so a page costs its text and a few small arrays instead of an object per record.
 *
 * The check accepts exactly what JSON.parse accepts (a test holds the two together); where a key is
 * given twice, the last one counts, as with JSON.parse.
 */

/** Where the values of a log page's text are: offsets into the text, ends exclusive. */
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

/** Scan a log page's text; undefined when it is JSON but not an object (the caller decodes it whole). */
export function scanLogPage(text: string): LogPageSpans | undefined {
  const s = new Scanner(text);
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
  constructor(private readonly text: string) {}

  peek(): number {
    return this.text.charCodeAt(this.pos);
  }

  fail(): never {
    throw new JsonSyntaxError(`not JSON at offset ${this.pos}`);
  }

  ws(): void {
    const t = this.text;
    let c = t.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++this.pos);
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
    const text = this.text.slice(start, this.keyEnd);
    return escaped ? (JSON.parse(text) as string) : text.slice(1, -1);
  }

  /** A member's key is `word` (no string is made of it: a page's records have thousands of keys). */
  keyIs(word: string): boolean {
    const start = this.pos;
    if (this.colon()) return JSON.parse(this.text.slice(start, this.keyEnd)) === word;
    return this.keyEnd - start - 2 === word.length && this.text.startsWith(word, start + 1);
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
    if (t.charCodeAt(this.pos) !== 0x22) this.fail();
    let escaped = false;
    let i = this.pos + 1;
    for (;;) {
      // A run of plain characters at once (irregexp's machine code beats a loop over charCodeAt).
      PLAIN.lastIndex = i;
      PLAIN.test(t);
      i = PLAIN.lastIndex;
      const c = t.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) {
        escaped = true;
        const e = t.charCodeAt(i + 1);
        if (e === 0x75) {
          for (let k = i + 2; k < i + 6; k++) if (!isHex(t.charCodeAt(k))) this.failAt(k);
          i += 6;
          continue;
        }
        if (!isEscape(e)) this.failAt(i + 1);
        i += 2;
        continue;
      }
      // Control characters (and the end of the text: NaN) are not allowed in a string.
      if (!(c >= 0x20)) this.failAt(i);
      i++;
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
    if (t.charCodeAt(i) === 0x2d) i++;
    if (t.charCodeAt(i) === 0x30) i++;
    else if (isNonZeroDigit(t.charCodeAt(i))) i = digits(t, i);
    else this.failAt(i);
    if (t.charCodeAt(i) === 0x2e) {
      if (!isDigit(t.charCodeAt(i + 1))) this.failAt(i + 1);
      i = digits(t, i + 1);
    }
    const e = t.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = t.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(t.charCodeAt(i))) this.failAt(i);
      i = digits(t, i);
    }
    this.pos = i;
  }

  private literal(): void {
    for (const word of LITERALS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return;
      }
    }
    this.fail();
  }
}

const LITERALS = ["true", "false", "null"];
/** Characters a string may hold as they are: not the quote, the backslash or a control character. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON strings may not hold
const PLAIN = /[^"\\\u0000-\u001f]*/y;

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

function digits(t: string, from: number): number {
  let i = from;
  while (isDigit(t.charCodeAt(i))) i++;
  return i;
}
