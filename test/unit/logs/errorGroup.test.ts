import { describe, expect, it } from "vitest";
import { errorGroupFingerprint, normalisedError } from "../../../src/logs/errorGroup.js";

describe("PHP error groups: what varies between occurrences is taken out", () => {
  it.each([
    [
      "values, line numbers and sizes",
      ['PHP Warning:  Undefined array key "page" in /www/a.php on line 12', "/www/a.php"],
      ['PHP Warning:  Undefined array key "id" in /www/a.php on line 14', "/www/a.php"],
    ],
    [
      "a release directory in the path",
      [
        "PHP Fatal error:  Allowed memory size of 268435456 bytes exhausted (tried to allocate 20480 bytes) in /www/releases/20261129/x.php on line 3",
        "/www/releases/20261129/x.php",
      ],
      [
        "PHP Fatal error:  Allowed memory size of 268435456 bytes exhausted (tried to allocate 65536 bytes) in /www/releases/20261130/x.php on line 9",
        "/www/releases/20261130/x.php",
      ],
    ],
    [
      "a stack trace and the file:line form",
      [
        "PHP Fatal error:  Uncaught RuntimeException: timed out after 30 seconds in /www/p.php:12\nStack trace:\n#0 /www/a.php(3): f()\n#1 {main}",
        "/www/p.php",
      ],
      [
        "PHP Fatal error:  Uncaught RuntimeException: timed out after 45 seconds in /www/p.php:19\nStack trace:\n#0 /www/b.php(8): g()",
        "/www/p.php",
      ],
    ],
    [
      "hex addresses and single quotes",
      ["PHP Warning:  Object 0x7f3a9c0012ab of class 'Foo' could not be converted", "/www/o.php"],
      ["PHP Warning:  Object 0x7f3a9c00ffee of class 'Bar' could not be converted", "/www/o.php"],
    ],
  ])("one group: %s", (_what, [m1, f1], [m2, f2]) => {
    expect(errorGroupFingerprint(m1 as string, f1)).toBe(errorGroupFingerprint(m2 as string, f2));
  });

  it.each([
    [
      "another message",
      ['PHP Warning:  Undefined array key "page" in /www/a.php on line 12', "/www/a.php"],
      ["PHP Warning:  Undefined variable $page in /www/a.php on line 12", "/www/a.php"],
    ],
    [
      "another file",
      ["PHP Fatal error:  Uncaught Error: Call to undefined function foo() in /www/a.php:3", "/www/a.php"],
      ["PHP Fatal error:  Uncaught Error: Call to undefined function foo() in /www/b.php:3", "/www/b.php"],
    ],
    [
      "another severity word",
      ["PHP Warning:  Division by zero", "/www/a.php"],
      ["PHP Fatal error:  Division by zero", "/www/a.php"],
    ],
  ])("two groups: %s", (_what, [m1, f1], [m2, f2]) => {
    expect(errorGroupFingerprint(m1 as string, f1)).not.toBe(errorGroupFingerprint(m2 as string, f2));
  });

  it("the normalised text and the fingerprint's form", () => {
    expect(
      normalisedError('PHP Warning:  Undefined array key "page" in /www/a.php on line 12', "/www/v2/a.php"),
    ).toBe("PHP Warning: Undefined array key ? in /www/a.php on line N|/www/vN/a.php");
    expect(errorGroupFingerprint("x", null)).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("PHP error groups: the edges of the text", () => {
  it.each([
    ["a number of any length stays a number", "allocate 20480 bytes", "allocate 134217728 bytes", true],
    ["a hash with letters and digits", "session 5f2a9c0d1e7b failed", "session 0a1b2c3d4e5f failed", true],
    ["an unclosed quote is kept as written", "unexpected 'x", "unexpected 'y", false],
    ["a stack trace without a newline before it is text", "x Stack trace: a", "x Stack trace: b", false],
    ["the text past 4,096 characters", `${"a".repeat(4096)}1`, `${"a".repeat(4096)}2`, true],
  ])("%s", (_what, a, b, same) => {
    expect(errorGroupFingerprint(a, "/f.php") === errorGroupFingerprint(b, "/f.php")).toBe(same);
  });

  it("an empty message and no file still have a group", () => {
    expect(normalisedError("", undefined)).toBe("|");
  });
});
