/**
 * Signing in without passwords, over HTTP on both stores: a token asks for a one-time link, the
 * link sets an HttpOnly, SameSite=Strict cookie and redirects; reused and expired links are
 * refused with a page and set nothing; changes from a browser session need this origin and the
 * CSRF token; the devices page lists and revokes; another user's ids answer 404 like missing ones.
 */
import { type ErrorCode, LoginLink } from "@pisync/protocol";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { userToken } from "./harness.js";

const ORIGIN = "http://pisync.test";
const HTML = { Accept: "text/html" };
const CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";

describeOnEveryStore("sign-in", (pair) => {
  let now = Date.parse("2026-06-01T00:00:00.000Z");
  let app: ReturnType<typeof createApp>;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    app = createApp({ stores: pair().stores, clock: () => new Date(now), log: () => {} });
    alice = await userToken(pair().stores, `alice-${Date.now()}`);
    bob = await userToken(pair().stores, `bob-${Date.now()}`);
  });

  const request = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}${path}`, init);

  async function loginLink(token: string, body: unknown = {}, base = ORIGIN, extra: Record<string, string> = {}) {
    return app.request(`${base}/v1/login-links`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...extra },
      body: JSON.stringify(body),
    });
  }

  /** Signs a browser in as the token's user; its cookie, CSRF token (from the devices page) and id. */
  async function signIn(token: string) {
    const link = LoginLink.parse(await (await loginLink(token)).json());
    const res = await app.request(link.url, { headers: { ...HTML, "User-Agent": CHROME } });
    expect(res.status).toBe(303);
    const cookie = /^pisync_session=(pss_[A-Za-z0-9_-]+);/.exec(res.headers.get("Set-Cookie") ?? "")?.[1] as string;
    const page = await (await request("/devices", { headers: { ...HTML, Cookie: `pisync_session=${cookie}` } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;
    const id = /data-kind="browser" data-id="([a-f0-9]+)" aria-current="true"/.exec(page)?.[1] as string;
    expect(cookie && csrf && id).toBeTruthy();
    return { cookie: `pisync_session=${cookie}`, csrf, id };
  }

  /** A same-origin form post from a signed-in browser. */
  function post(path: string, browser: { cookie: string; csrf?: string }, headers: Record<string, string> = {}) {
    return request(path, {
      method: "POST",
      headers: {
        Cookie: browser.cookie,
        Origin: ORIGIN,
        "Content-Type": "application/x-www-form-urlencoded",
        ...headers,
      },
      body: browser.csrf === undefined ? "" : new URLSearchParams({ csrf: browser.csrf }).toString(),
    });
  }

  async function refused(res: Response, status: number, code: ErrorCode) {
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ code });
  }

  it("a token gets a one-time link; opening it sets the session cookie and redirects to next", async () => {
    const res = await loginLink(alice, { next: "/sessions/abc?x=1" });
    expect(res.status).toBe(201);
    const link = LoginLink.parse(await res.json());
    expect(link.url).toMatch(/^http:\/\/pisync\.test\/login\/psl_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(link.expiresAt) - now).toBe(60_000);
    const opened = await app.request(link.url, { headers: HTML });
    expect(opened.status).toBe(303);
    expect(opened.headers.get("Location")).toBe("/sessions/abc?x=1");
    const cookie = opened.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^pisync_session=pss_[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
    expect(opened.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(opened.headers.get("Cache-Control")).toBe("private, no-store");
  });

  it("the cookie is Secure over HTTPS, also behind a proxy or function URL (X-Forwarded-Proto)", async () => {
    const direct = LoginLink.parse(await (await loginLink(alice, {}, "https://pisync.test")).json());
    expect(direct.url).toMatch(/^https:\/\/pisync\.test\/login\//);
    expect((await app.request(direct.url)).headers.get("Set-Cookie")).toContain("Secure");
    const proxied = LoginLink.parse(
      await (await loginLink(alice, {}, ORIGIN, { "X-Forwarded-Proto": "https" })).json(),
    );
    expect(proxied.url).toMatch(/^https:\/\/pisync\.test\/login\//);
    const res = await app.request(proxied.url.replace("https:", "http:"), {
      headers: { "X-Forwarded-Proto": "https" },
    });
    expect(res.headers.get("Set-Cookie")).toContain("Secure");
  });

  it("opened from another site, the link signs in only once confirmed by a POST from this server's page", async () => {
    const link = LoginLink.parse(await (await loginLink(alice, { next: '/?q=it\'s "quoted"' })).json());
    const res = await app.request(link.url, { headers: { ...HTML, "Sec-Fetch-Site": "cross-site" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Set-Cookie")).toBeNull();
    expect(res.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(res.headers.get("Content-Security-Policy")).toContain("form-action 'self'");
    expect(await res.text()).toContain(`<form method="post" action="${new URL(link.url).pathname}">`);
    const confirmed = await app.request(link.url, { method: "POST", headers: { Origin: ORIGIN } });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("Location")).toBe('/?q=it\'s "quoted"');
    expect(confirmed.headers.get("Set-Cookie")).toMatch(/^pisync_session=pss_.*HttpOnly.*SameSite=Strict/);
  });

  it("the devices page escapes what users and browsers wrote (token names, User-Agent)", async () => {
    const hostile = "<img src=x onerror=alert(1)>";
    await request("/v1/tokens", {
      method: "POST",
      headers: { Authorization: `Bearer ${alice}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: hostile }),
    });
    const link = LoginLink.parse(await (await loginLink(alice)).json());
    await app.request(link.url, { headers: { "User-Agent": `<script>alert(1)</script>` } });
    const page = await (await request("/devices", { headers: { ...HTML, Authorization: `Bearer ${alice}` } })).text();
    expect(page).not.toContain("<img src=x");
    expect(page).not.toContain("<script>alert");
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });

  it("a reused link gets a page that says so, status 404, and sets nothing", async () => {
    const link = LoginLink.parse(await (await loginLink(alice)).json());
    expect((await app.request(link.url)).status).toBe(303);
    const again = await app.request(link.url, { headers: HTML });
    expect(again.status).toBe(404);
    expect(again.headers.get("Set-Cookie")).toBeNull();
    expect(await again.text()).toContain("already used");
    const json = await app.request(link.url);
    await refused(json, 404, "not_found");
  });

  it("an expired link gets a page that says so, status 410, and sets nothing", async () => {
    const link = LoginLink.parse(await (await loginLink(alice)).json());
    now += 61_000;
    const late = await app.request(link.url, { headers: HTML });
    expect(late.status).toBe(410);
    expect(late.headers.get("Set-Cookie")).toBeNull();
    expect(late.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(await late.text()).toContain("expired");
  });

  it("refuses a next that leaves this server, and a request without a token", async () => {
    for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
      await refused(await loginLink(alice, { next }), 400, "invalid_next");
    }
    await refused(await loginLink(alice, { next: 5 }), 400, "bad_body");
    await refused(await request("/v1/login-links", { method: "POST", body: "{}" }), 401, "unauthorized");
  });

  it("signed out: a browser gets the sign-in hint (401), an API client 401 JSON", async () => {
    const page = await request("/devices", { headers: HTML });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain("pisync open");
    expect(page.headers.get("Content-Security-Policy")).toContain("form-action 'self'");
    await refused(await request("/devices"), 401, "unauthorized");
    await refused(
      await request("/devices", { headers: { Cookie: `pisync_session=pss_${"A".repeat(43)}` } }),
      401,
      "unauthorized",
    );
    await refused(await post("/logout-all", { cookie: "pisync_session=nope", csrf: "x" }), 401, "unauthorized");
  });

  it("the devices page lists browser sessions and tokens with last use; the current one is marked", async () => {
    const browser = await signIn(alice);
    const page = await (await request("/devices", { headers: { ...HTML, Cookie: browser.cookie } })).text();
    expect(page).toContain("Chrome on Linux");
    expect(page).toContain("this browser");
    expect(page).toMatch(/data-kind="token"/);
    expect(page).toContain("Sign out everywhere");
    expect(page).toContain("Tokens keep working");
    // A bearer token reads the page too, and is marked as the current one.
    const withToken = await (
      await request("/devices", { headers: { ...HTML, Authorization: `Bearer ${alice}` } })
    ).text();
    expect(withToken).toContain("this token");
  });

  it("a change from another origin, or without the CSRF token, is refused with 403 and changes nothing", async () => {
    const browser = await signIn(alice);
    const other = await signIn(alice);
    const revoke = `/devices/sessions/${other.id}/revoke`;
    await refused(await post(revoke, browser, { Origin: "http://evil.example" }), 403, "csrf_rejected");
    await refused(await post(revoke, browser, { Origin: "null" }), 403, "csrf_rejected");
    await refused(await post(revoke, { cookie: browser.cookie }), 403, "csrf_rejected");
    await refused(await post(revoke, { cookie: browser.cookie, csrf: other.csrf }), 403, "csrf_rejected");
    await refused(
      await post(revoke, { cookie: browser.cookie, csrf: `${browser.csrf.slice(1)}A` }),
      403,
      "csrf_rejected",
    );
    // Neither Origin nor Referer: refused too.
    const bare = await request(revoke, {
      method: "POST",
      headers: { Cookie: browser.cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: `csrf=${browser.csrf}`,
    });
    await refused(bare, 403, "csrf_rejected");
    await refused(
      await post(revoke, browser, { Origin: "", Referer: "http://evil.example/page" }),
      403,
      "csrf_rejected",
    );
    const page = await (await request("/devices", { headers: { ...HTML, Cookie: other.cookie } })).text();
    expect(page).toContain(other.id);
    // The same change, from this origin (by Referer, or with the header token), goes through.
    const byReferer = await post(revoke, browser, { Origin: "", Referer: `${ORIGIN}/devices` });
    expect(byReferer.status).toBe(303);
    expect(byReferer.headers.get("Location")).toBe("/devices");
    expect((await request("/devices", { headers: { Cookie: other.cookie } })).status).toBe(401);
    const third = await signIn(alice);
    const byHeader = await request(`/devices/sessions/${third.id}/revoke`, {
      method: "POST",
      headers: { Cookie: browser.cookie, Origin: ORIGIN, "X-CSRF-Token": browser.csrf },
    });
    expect(byHeader.status).toBe(303);
  });

  it("revokes a token; sign out everywhere ends every browser session and keeps tokens", async () => {
    const spare = await userToken(pair().stores, "spare-owner");
    const own = LoginLink.parse(await (await loginLink(alice)).json());
    expect(own.url).toBeTruthy();
    const browser = await signIn(alice);
    const second = await signIn(alice);
    const tokenPage = await (
      await request("/devices", { headers: { ...HTML, Authorization: `Bearer ${alice}` } })
    ).text();
    const aliceToken = /data-kind="token" data-id="([a-f0-9]+)" aria-current="true"/.exec(tokenPage)?.[1] as string;
    // Another user's token id answers 404 like a missing one, and stays.
    const spareId = /data-kind="token" data-id="([a-f0-9]+)"/.exec(
      await (await request("/devices", { headers: { ...HTML, Authorization: `Bearer ${spare}` } })).text(),
    )?.[1] as string;
    await refused(await post(`/devices/tokens/${spareId}/revoke`, browser), 404, "not_found");
    await refused(await post("/devices/tokens/000000000000/revoke", browser), 404, "not_found");
    await refused(await post("/devices/tokens/not-an-id/revoke", browser), 404, "not_found");
    expect((await request("/v1/tokens", { headers: { Authorization: `Bearer ${spare}` } })).status).toBe(200);
    // Revoking a token of mine: it stops working at once.
    const extra = await userTokenFor(alice);
    const extraId = (
      await (await request("/v1/tokens", { headers: { Authorization: `Bearer ${extra}` } })).json()
    ).tokens.find((t: { current: boolean }) => t.current).id as string;
    expect((await post(`/devices/tokens/${extraId}/revoke`, browser)).status).toBe(303);
    await refused(await request("/v1/tokens", { headers: { Authorization: `Bearer ${extra}` } }), 401, "unauthorized");
    // Sign out everywhere.
    const out = await post("/logout-all", browser);
    expect(out.status).toBe(303);
    expect(out.headers.get("Location")).toBe("/");
    expect(out.headers.get("Set-Cookie")).toMatch(/^pisync_session=;.*Max-Age=0/);
    for (const b of [browser, second])
      expect((await request("/devices", { headers: { Cookie: b.cookie } })).status).toBe(401);
    const left = await (await request("/devices", { headers: { ...HTML, Authorization: `Bearer ${alice}` } })).text();
    expect(left).toContain(aliceToken);
    expect(left).toContain("No browser is signed in.");
  });

  it("another user's browser session answers 404 like a missing one, and stays signed in", async () => {
    const mine = await signIn(alice);
    const theirs = await signIn(bob);
    await refused(await post(`/devices/sessions/${theirs.id}/revoke`, mine), 404, "not_found");
    await refused(await post("/devices/sessions/000000000000/revoke", mine), 404, "not_found");
    expect((await request("/devices", { headers: { Cookie: theirs.cookie } })).status).toBe(200);
    expect(await (await request("/devices", { headers: { ...HTML, Cookie: mine.cookie } })).text()).not.toContain(
      theirs.id,
    );
  });

  it("sign out ends this browser session only; signing out the current browser from the list too", async () => {
    const one = await signIn(alice);
    const two = await signIn(alice);
    const out = await post("/logout", one);
    expect(out.status).toBe(303);
    expect((await request("/devices", { headers: { Cookie: one.cookie } })).status).toBe(401);
    expect((await request("/devices", { headers: { Cookie: two.cookie } })).status).toBe(200);
    const self = await post(`/devices/sessions/${two.id}/revoke`, two);
    expect(self.headers.get("Location")).toBe("/");
    expect(self.headers.get("Set-Cookie")).toMatch(/^pisync_session=;/);
    expect((await request("/devices", { headers: { Cookie: two.cookie } })).status).toBe(401);
  });

  it("a browser session idle for 30 days is refused", async () => {
    const browser = await signIn(alice);
    now += 29 * 24 * 3600 * 1000;
    expect((await request("/devices", { headers: { Cookie: browser.cookie } })).status).toBe(200);
    now += 30 * 24 * 3600 * 1000;
    expect((await request("/devices", { headers: { Cookie: browser.cookie } })).status).toBe(401);
  });

  /** A second token of the user `token` belongs to. */
  async function userTokenFor(token: string): Promise<string> {
    const res = await request("/v1/tokens", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "extra" }),
    });
    return ((await res.json()) as { token: string }).token;
  }
});
