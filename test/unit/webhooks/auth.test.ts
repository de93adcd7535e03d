import { describe, expect, it } from "vitest";
import { presentedToken, queryOf, WebhookAuth } from "../../../src/webhooks/auth.js";

const TOKEN = "<webhook-token>-0123456789abcdef";

describe("webhook token", () => {
  const auth = new WebhookAuth(TOKEN);

  it("accepts the token as ?token= or as a Bearer header", () => {
    expect(auth.check(undefined, `/webhook?token=${encodeURIComponent(TOKEN)}`)).toBe("ok");
    expect(auth.check(`Bearer ${TOKEN}`, "/webhook")).toBe("ok");
    expect(auth.check(`bearer ${TOKEN}`, "/webhook")).toBe("ok");
  });

  it("refuses a wrong token, one differing only in length, and none", () => {
    expect(auth.check(undefined, "/webhook?token=nope")).toBe("wrong");
    expect(auth.check(undefined, `/webhook?token=${encodeURIComponent(TOKEN)}x`)).toBe("wrong");
    expect(auth.check(undefined, `/webhook?token=${encodeURIComponent(TOKEN.slice(0, -1))}`)).toBe("wrong");
    expect(auth.check(`Bearer ${TOKEN.toUpperCase()}`, "/webhook")).toBe("wrong");
    expect(auth.check(undefined, "/webhook")).toBe("missing");
    expect(auth.check(undefined, "/webhook?token=")).toBe("missing");
  });

  it("a Bearer header is the token presented, even when the query has another", () => {
    expect(auth.check("Bearer wrong", `/webhook?token=${encodeURIComponent(TOKEN)}`)).toBe("wrong");
  });

  it("an Authorization header of another scheme leaves the query token to decide", () => {
    expect(presentedToken("Basic dXNlcjpwYXNz", "token=abc")).toBe("abc");
    expect(auth.check("Basic dXNlcjpwYXNz", `/webhook?a=1&token=${encodeURIComponent(TOKEN)}`)).toBe("ok");
  });

  it("reads the query of a request target", () => {
    expect(queryOf("/webhook?token=a&b=c")).toBe("token=a&b=c");
    expect(queryOf("/webhook")).toBe("");
    expect(queryOf(undefined)).toBe("");
  });
});
