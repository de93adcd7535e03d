/** Byte sizes: a number of bytes, or text such as 512KiB, 32MiB, 1GiB (or decimal KB, MB, GB). */
const UNIT_BYTES: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
};

export function parseByteSize(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value > 0 ? value : undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/.exec(value.trim());
  if (!m) return undefined;
  const bytes = Math.floor(Number(m[1]) * (UNIT_BYTES[m[2] ?? "B"] as number));
  return bytes > 0 ? bytes : undefined;
}

/** Parse a size that was already validated by the config schema. */
export function byteSize(value: string | number): number {
  const bytes = parseByteSize(value);
  if (bytes === undefined) throw new Error(`not a byte size: ${JSON.stringify(value)}`);
  return bytes;
}
