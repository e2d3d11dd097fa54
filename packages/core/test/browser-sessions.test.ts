import { describe, expect, it } from "vitest";
import {
  BrowserSessions,
  csrfMatches,
  csrfTokenOf,
  Gone,
  NotFound,
  safeNextPath,
  Tokens,
  userAgentLabel,
} from "../src/index.js";
import { MemoryMetaStore } from "./memory-stores.js";

/** A clock the test moves by hand. */
function manualClock(start = "2026-03-01T10:00:00.000Z") {
  let now = Date.parse(start);
  return { clock: () => new Date(now), advance: (ms: number) => (now += ms) };
}

function setup() {
  const meta = new MemoryMetaStore();
  const time = manualClock();
  return { meta, time, sessions: new BrowserSessions(meta, time.clock), tokens: new Tokens(meta, time.clock) };
}

const CHROME_LINUX =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";

describe("sign-in links", () => {
  it("keep only a same-origin path as next", () => {
    expect(safeNextPath(undefined)).toBe("/");
    expect(safeNextPath("/sessions/abc?q=x#e1")).toBe("/sessions/abc?q=x#e1");
    for (const bad of [
      "//evil.example/x",
      "/\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "sessions",
      "/a\nb",
      "/a\\b",
      `/${"a".repeat(3000)}`,
    ]) {
      expect(() => safeNextPath(bad), bad).toThrow(expect.objectContaining({ code: "invalid_next" }));
    }
  });

  it("sign in once: a second redemption is refused, and the link is stored as a hash only", async () => {
    const { meta, sessions } = setup();
    const link = await sessions.createLoginLink("alice", "/sessions/abc");
    expect(link.secret).toMatch(/^psl_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(meta)).not.toContain(link.secret);
    const signedIn = await sessions.redeem(link.secret, CHROME_LINUX);
    expect(signedIn.next).toBe("/sessions/abc");
    expect(signedIn.record).toMatchObject({ userId: "alice", userAgent: "Chrome on Linux" });
    expect(signedIn.secret).toMatch(/^pss_/);
    expect(JSON.stringify(await meta.listBrowserSessions("alice"))).not.toContain(signedIn.secret);
    await expect(sessions.redeem(link.secret, CHROME_LINUX)).rejects.toBeInstanceOf(NotFound);
    expect(await meta.listBrowserSessions("alice")).toHaveLength(1);
  });

  it("expire after 60 seconds, and an expired link is used up too", async () => {
    const { sessions, time } = setup();
    const fresh = await sessions.createLoginLink("alice");
    time.advance(59_000);
    await expect(sessions.redeem(fresh.secret, undefined)).resolves.toMatchObject({ next: "/" });
    const late = await sessions.createLoginLink("alice");
    time.advance(60_000);
    await expect(sessions.redeem(late.secret, undefined)).rejects.toBeInstanceOf(Gone);
    await expect(sessions.redeem(late.secret, undefined)).rejects.toBeInstanceOf(NotFound);
  });

  it("refuse a malformed or unknown secret", async () => {
    const { sessions } = setup();
    await expect(sessions.redeem("nope", undefined)).rejects.toBeInstanceOf(NotFound);
    await expect(sessions.redeem(`psl_${"A".repeat(43)}`, undefined)).rejects.toBeInstanceOf(NotFound);
  });
});

describe("browser sessions", () => {
  async function signIn(env: ReturnType<typeof setup>, userId = "alice") {
    const { secret } = await env.sessions.createLoginLink(userId);
    return env.sessions.redeem(secret, CHROME_LINUX);
  }

  it("authenticate by the cookie's secret with a CSRF token bound to the session", async () => {
    const env = setup();
    const one = await signIn(env);
    const two = await signIn(env);
    const seen = await env.sessions.authenticate(one.secret);
    expect(seen?.record.id).toBe(one.record.id);
    expect(seen?.csrfToken).toBe(one.csrfToken);
    expect(one.csrfToken).not.toBe(two.csrfToken);
    expect(csrfMatches(one.secret, one.csrfToken)).toBe(true);
    expect(csrfMatches(one.secret, two.csrfToken)).toBe(false);
    expect(csrfMatches(one.secret, undefined)).toBe(false);
    expect(csrfMatches(one.secret, csrfTokenOf(one.secret).slice(1))).toBe(false);
    expect(await env.sessions.authenticate(undefined)).toBeUndefined();
    expect(await env.sessions.authenticate(`pss_${"A".repeat(43)}`)).toBeUndefined();
    expect(await env.sessions.authenticate("pst_not-a-browser")).toBeUndefined();
  });

  it("write the last use at most once a minute", async () => {
    const env = setup();
    const { secret } = await signIn(env);
    for (let i = 0; i < 10; i++) {
      env.time.advance(5_000);
      await env.sessions.authenticate(secret);
    }
    expect(env.meta.touches).toBe(0);
    env.time.advance(10_000);
    const touched = await env.sessions.authenticate(secret);
    expect(env.meta.touches).toBe(1);
    expect(touched?.record.lastUsedAt).toBe(env.time.clock().toISOString());
    await env.sessions.authenticate(secret);
    expect(env.meta.touches).toBe(1);
  });

  it("are refused and removed after 30 days idle; use keeps them alive", async () => {
    const env = setup();
    const kept = await signIn(env);
    const idle = await signIn(env);
    for (let day = 0; day < 40; day += 10) {
      env.time.advance(10 * 24 * 3600 * 1000);
      expect(await env.sessions.authenticate(kept.secret)).toBeDefined();
    }
    expect(await env.sessions.authenticate(idle.secret)).toBeUndefined();
    expect((await env.meta.listBrowserSessions("alice")).map((s) => s.id)).toEqual([kept.record.id]);
  });

  it("list with tokens, mark the current one, revoke one, sign out everywhere; tokens stay", async () => {
    const env = setup();
    const { record: token } = await env.tokens.create("alice", "laptop");
    await env.tokens.create("bob", "theirs");
    const mine = await signIn(env);
    const other = await signIn(env);
    const theirs = await signIn(env, "bob");
    const { devices } = await env.sessions.devices("alice", { browserId: mine.record.id });
    expect(devices.map((d) => [d.kind, d.name, d.current])).toEqual([
      ["browser", "Chrome on Linux", true],
      ["browser", "Chrome on Linux", false],
      ["token", "laptop", false],
    ]);
    expect((await env.sessions.devices("alice", { tokenId: token.id })).devices.filter((d) => d.current)).toEqual([
      expect.objectContaining({ kind: "token", id: token.id }),
    ]);
    expect(await env.sessions.revoke("alice", theirs.record.id)).toBe(false);
    expect(await env.sessions.revoke("alice", other.record.id)).toBe(true);
    expect(await env.sessions.authenticate(other.secret)).toBeUndefined();
    expect(await env.sessions.revokeAll("alice")).toBe(1);
    expect(await env.sessions.authenticate(mine.secret)).toBeUndefined();
    expect(await env.sessions.authenticate(theirs.secret)).toBeDefined();
    expect((await env.sessions.devices("alice", {})).devices.map((d) => d.kind)).toEqual(["token"]);
  });
});

describe("token last use", () => {
  it("is recorded on first use, then at most once a minute", async () => {
    const env = setup();
    const { token, record } = await env.tokens.create("alice", "laptop");
    expect(record.lastUsedAt).toBeUndefined();
    await env.tokens.authenticate(token);
    expect(env.meta.touches).toBe(1);
    env.time.advance(30_000);
    await env.tokens.authenticate(token);
    expect(env.meta.touches).toBe(1);
    env.time.advance(30_000);
    await env.tokens.authenticate(token);
    expect(env.meta.touches).toBe(2);
    expect((await env.tokens.list("alice"))[0]?.lastUsedAt).toBe(env.time.clock().toISOString());
  });
});

describe("browser labels", () => {
  it("name known browsers and cut anything else short and printable", () => {
    expect(userAgentLabel(CHROME_LINUX)).toBe("Chrome on Linux");
    expect(
      userAgentLabel(
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Safari/604.1",
      ),
    ).toBe("Safari on iOS");
    expect(userAgentLabel("Mozilla/5.0 (Windows NT 10.0; rv:128.0) Gecko/20100101 Firefox/128.0")).toBe(
      "Firefox on Windows",
    );
    expect(userAgentLabel(`\u001b[31m<script>${"x".repeat(100)}`)).toBe(`[31m<script>${"x".repeat(28)}`);
    expect(userAgentLabel(undefined)).toBe("unknown browser");
  });
});
