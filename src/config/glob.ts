/** Glob patterns (`*` any run, `?` one character) as anchored regular expressions. */
export function globToRegExp(pattern: string, flags = ""): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`, flags);
}
