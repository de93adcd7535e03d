/**
 * A protobuf wire-format writer into one growing, reused buffer. Length-delimited fields reserve one
 * byte for their length and move their content when the length needs more, the same choice the
 * OpenTelemetry JS serializer makes, so the bytes are identical to what it writes.
 */
const TWO_32 = 4294967296;

export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialSize = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(initialSize);
  }

  reset(): void {
    this.pos = 0;
  }

  /** The bytes written so far (a view: copy before the next reset). */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  ensure(n: number): void {
    const needed = this.pos + n;
    if (needed <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 127) {
        buf[this.pos++] = (v & 127) | 128;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    // 64-bit two's complement, as int64 fields are written.
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = Math.floor(abs / TWO_32) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      buf[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low & 127;
  }

  fixed64(low: number, high: number): void {
    this.ensure(8);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** Epoch milliseconds as fixed64 nanoseconds (exact for whole and fractional milliseconds). */
  fixed64TimeMs(ms: number): void {
    const seconds = Math.floor(ms / 1000);
    const nanos = Math.round((ms - seconds * 1000) * 1e6);
    // seconds * 1e9 + nanos, split into 32-bit halves without losing precision: seconds is split at
    // 2^16 so every partial product stays below 2^53.
    const fromLow = (seconds % 65536) * 1e9; // < 2^46
    const fromHigh = Math.floor(seconds / 65536) * 1e9; // counts 2^16 times over
    const sumLow = (fromLow % TWO_32) + (fromHigh % 65536) * 65536 + nanos;
    const low = sumLow % TWO_32;
    const high = Math.floor(fromLow / TWO_32) + Math.floor(fromHigh / 65536) + Math.floor(sumLow / TWO_32);
    this.fixed64(low, high);
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  string(text: string): void {
    const len = text.length;
    // At most 3 bytes per UTF-16 unit: below 43 units the length fits one varint byte, so the bytes
    // go straight in after it; longer text is measured first.
    if (len < 43) {
      this.ensure(1 + 3 * len);
      const at = this.pos++;
      const written = this.buf.write(text, this.pos, "utf8");
      this.buf[at] = written;
      this.pos += written;
      return;
    }
    const bytes = Buffer.byteLength(text, "utf8");
    this.varint(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(text, this.pos, bytes, "utf8");
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Starts a length-delimited field's content; pass the result to `end`. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the content started at `at`, moving the content when it needs more bytes. */
  end(at: number): void {
    const length = this.pos - at - 1;
    const size = length < 128 ? 1 : length < 16384 ? 2 : length < 2097152 ? 3 : length < 268435456 ? 4 : 5;
    if (size > 1) {
      this.ensure(size - 1);
      this.buf.copyWithin(at + size, at + 1, this.pos);
      this.pos += size - 1;
    }
    let v = length;
    let p = at;
    while (v > 127) {
      this.buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[p] = v;
  }
}
