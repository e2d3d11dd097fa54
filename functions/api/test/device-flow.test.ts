/**
 * Signing a machine in from the browser (RFC 8628's shape), over HTTP on both stores: a code
 * pair without a credential; polls answer `authorization_pending`, `slow_down` when too soon,
 * `expired_token` after 15 minutes or once used, `access_denied` after a denial; the `/device`
 * page (signed in, CSRF) approves, and the next poll gets a token of the approver's, named after
 * the machine, once. Guessing codes is refused after ten misses. Also the devices page's new
 * token (shown once) and renames, on the page and over `PATCH /v1/tokens/:id`, for their owner only.
 */
import { GUESS_LIMIT } from "@pisync/core/device-codes";
import { DeviceCode, DeviceToken, type ErrorCode, LoginLink } from "@pisync/protocol";
import { describeOnEveryStore } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { userToken } from "./harness.js";

const ORIGIN = "http://pisync.test";
const HTML = { Accept: "text/html" };
const JSON_TYPE = { "Content-Type": "application/json" };

describeOnEveryStore("device sign-in", (pair) => {
  let now = Date.parse("2026-06-01T00:00:00.000Z");
  let app: ReturnType<typeof createApp>;
  let alice: string;
  let bob: string;
  let aliceId: string;

  beforeAll(async () => {
    app = createApp({ stores: pair().stores, clock: () => new Date(now), log: () => {} });
    aliceId = `alice-${Date.now()}`;
    alice = await userToken(pair().stores, aliceId);
    bob = await userToken(pair().stores, `bob-${Date.now()}`);
  });

  const request = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}${path}`, init);
  const later = (seconds: number) => {
    now += seconds * 1000;
  };

  async function start(name?: string) {
    const res = await request("/v1/device/code", {
      method: "POST",
      headers: JSON_TYPE,
      body: JSON.stringify(name === undefined ? {} : { name }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    return DeviceCode.parse(await res.json());
  }

  const poll = (deviceCode: string) =>
    request("/v1/device/token", {
      method: "POST",
      headers: JSON_TYPE,
      body: JSON.stringify({ device_code: deviceCode }),
    });

  async function refused(res: Response, status: number, code: ErrorCode) {
    const body = await res.json();
    expect({ status: res.status, code: body.code }, body.error).toEqual({ status, code });
    return body as { interval?: number };
  }

  async function signIn(token: string) {
    const link = LoginLink.parse(
      await (
        await request("/v1/login-links", {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, ...JSON_TYPE },
          body: "{}",
        })
      ).json(),
    );
    const res = await app.request(link.url, { headers: HTML });
    const cookie = /^pisync_session=(pss_[A-Za-z0-9_-]+);/.exec(res.headers.get("Set-Cookie") ?? "")?.[1] as string;
    const page = await (await request("/devices", { headers: { ...HTML, Cookie: `pisync_session=${cookie}` } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;
    expect(cookie && csrf).toBeTruthy();
    return { cookie: `pisync_session=${cookie}`, csrf };
  }

  const form = (path: string, browser: { cookie: string; csrf: string }, fields: Record<string, string>) =>
    request(path, {
      method: "POST",
      headers: { ...HTML, Cookie: browser.cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: browser.csrf, ...fields }).toString(),
    });

  it("starts without a credential and says where to approve", async () => {
    const started = await start("laptop.example");
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.verification_uri).toBe(`${ORIGIN}/device`);
    expect(started.verification_uri_complete).toBe(`${ORIGIN}/device?code=${started.user_code}`);
    expect(started).toMatchObject({ expires_in: 900, interval: 5 });
    await refused(
      await request("/v1/device/code", { method: "POST", headers: JSON_TYPE, body: "nope" }),
      400,
      "bad_json",
    );
    await refused(
      await request("/v1/device/code", { method: "POST", headers: JSON_TYPE, body: JSON.stringify({ name: 7 }) }),
      400,
      "bad_body",
    );
  });

  it("answers pending, then slow_down to a poll that came too soon (the interval grows)", async () => {
    const { device_code } = await start("pending-box");
    await refused(await poll(device_code), 400, "authorization_pending");
    later(1);
    expect(await refused(await poll(device_code), 400, "slow_down")).toMatchObject({ interval: 10 });
    later(6);
    expect(await refused(await poll(device_code), 400, "slow_down")).toMatchObject({ interval: 15 });
    later(16);
    expect(await refused(await poll(device_code), 400, "authorization_pending")).toMatchObject({ interval: 15 });
    // Another code of the same user code: its last character changed (to one it is not already).
    const other = `${device_code.slice(0, -1)}${device_code.endsWith("A") ? "E" : "A"}`;
    await refused(await poll(other), 400, "expired_token");
    await refused(await poll("pdc_nothing"), 400, "expired_token");
  });

  it("expires after 15 minutes: neither the page nor a poll takes it", async () => {
    const { device_code, user_code } = await start("slow-box");
    const browser = await signIn(alice);
    later(15 * 60);
    expect((await request(`/device?code=${user_code}`, { headers: { ...HTML, Cookie: browser.cookie } })).status).toBe(
      404,
    );
    await refused(await poll(device_code), 400, "expired_token");
    await refused(await poll(device_code), 400, "expired_token");
  });

  it("a denied code answers access_denied, then is gone", async () => {
    const { device_code, user_code } = await start("denied-box");
    const browser = await signIn(alice);
    const res = await form("/device/deny", browser, { code: user_code.toLowerCase() });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Denied");
    later(6);
    await refused(await poll(device_code), 400, "access_denied");
    later(6);
    await refused(await poll(device_code), 400, "expired_token");
  });

  it("approved on /device, the next poll gets a working token of the approver's, named after the machine, once", async () => {
    const { device_code, user_code, verification_uri_complete } = await start("build-server-7");
    const browser = await signIn(alice);
    const confirm = await request(
      new URL(verification_uri_complete).pathname + new URL(verification_uri_complete).search,
      {
        headers: { ...HTML, Cookie: browser.cookie },
      },
    );
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain("build-server-7");
    expect(page).toContain('action="/device/approve"');
    // Without the page's CSRF token, or from another origin, nothing is approved.
    expect((await form("/device/approve", { ...browser, csrf: "forged" }, { code: user_code })).status).toBe(403);
    const elsewhere = await request("/device/approve", {
      method: "POST",
      headers: {
        Cookie: browser.cookie,
        Origin: "https://evil.test",
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ csrf: browser.csrf, code: user_code }).toString(),
    });
    expect(elsewhere.status).toBe(403);
    later(6);
    await refused(await poll(device_code), 400, "authorization_pending");
    const approved = await form("/device/approve", browser, { code: user_code.replace("-", " ") });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("Approved");
    // Approving twice finds nothing waiting.
    expect((await form("/device/approve", browser, { code: user_code })).status).toBe(404);
    later(6);
    const res = await poll(device_code);
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const got = DeviceToken.parse(await res.json());
    expect(got).toMatchObject({ name: "build-server-7" });
    // The token is alice's: it lists alice's tokens and sees itself by that name.
    const list = await request("/v1/tokens", { headers: { Authorization: `Bearer ${got.token}` } });
    expect(list.status).toBe(200);
    const { tokens } = (await list.json()) as { tokens: { id: string; name: string; current: boolean }[] };
    expect(tokens.find((t) => t.current)).toMatchObject({ id: got.id, name: "build-server-7" });
    const aliceTokens = (await (
      await request("/v1/tokens", { headers: { Authorization: `Bearer ${alice}` } })
    ).json()) as { tokens: { id: string }[] };
    expect(aliceTokens.tokens.map((t) => t.id)).toContain(got.id);
    const bobTokens = (await (await request("/v1/tokens", { headers: { Authorization: `Bearer ${bob}` } })).json()) as {
      tokens: { id: string }[];
    };
    expect(bobTokens.tokens.map((t) => t.id)).not.toContain(got.id);
    // One-time: the device code is spent.
    later(6);
    await refused(await poll(device_code), 400, "expired_token");
  });

  it("the page needs a signed-in browser; it refuses a guesser after ten misses", async () => {
    const { user_code } = await start("guessed-box");
    const signedOut = await request(`/device?code=${user_code}`, { headers: HTML });
    expect(signedOut.status).toBe(401);
    const guesser = await signIn(bob);
    for (let i = 0; i < GUESS_LIMIT; i++) {
      const miss = await request(`/device?code=BBBB-BBB${"BCDFGHJKLMNP"[i]}`, {
        headers: { ...HTML, Cookie: guesser.cookie },
      });
      expect(miss.status).toBe(404);
    }
    const blocked = await request(`/device?code=${user_code}`, { headers: { ...HTML, Cookie: guesser.cookie } });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await form("/device/approve", guesser, { code: user_code })).status).toBe(429);
    // Another user is not held back by bob's misses.
    const owner = await signIn(alice);
    expect((await request(`/device?code=${user_code}`, { headers: { ...HTML, Cookie: owner.cookie } })).status).toBe(
      200,
    );
    later(11 * 60);
  });

  it("escapes the machine's name on the page", async () => {
    const { user_code } = await start('<img src=x onerror="alert(1)">');
    const browser = await signIn(alice);
    const page = await (
      await request(`/device?code=${user_code}`, { headers: { ...HTML, Cookie: browser.cookie } })
    ).text();
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("&lt;img src=x");
  });

  it("/devices makes a token shown once, and renames tokens for their owner only", async () => {
    const browser = await signIn(alice);
    const made = await form("/devices/tokens", browser, { name: "  desk  " });
    expect(made.status).toBe(200);
    expect(made.headers.get("Cache-Control")).toBe("no-store");
    const page = await made.text();
    const token = /class="minted-token" readonly value="(pst_[A-Za-z0-9_-]+)"/.exec(page)?.[1] as string;
    expect(token).toBeTruthy();
    const listed = (await (await request("/v1/tokens", { headers: { Authorization: `Bearer ${token}` } })).json()) as {
      tokens: { id: string; name: string; current: boolean }[];
    };
    const mine = listed.tokens.find((t) => t.current) as { id: string; name: string };
    expect(mine.name).toBe("desk");
    // Shown once: the page drawn again does not have it.
    expect(await (await request("/devices", { headers: { ...HTML, Cookie: browser.cookie } })).text()).not.toContain(
      token,
    );
    expect((await form("/devices/tokens", browser, { name: "   " })).status).toBe(400);

    const renamed = await form(`/devices/tokens/${mine.id}/rename`, browser, { name: "desk upstairs" });
    expect(renamed.status).toBe(303);
    const bobBrowser = await signIn(bob);
    expect((await form(`/devices/tokens/${mine.id}/rename`, bobBrowser, { name: "mine now" })).status).toBe(404);
    const patch = (as: string, body: unknown) =>
      request(`/v1/tokens/${mine.id}`, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${as}`, ...JSON_TYPE },
        body: JSON.stringify(body),
      });
    await refused(await patch(bob, { name: "mine now" }), 404, "not_found");
    await refused(await patch(token, { name: "" }), 400, "bad_body");
    const ok = await patch(token, { name: "desk, renamed" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: mine.id, name: "desk, renamed" });
    const after = (await (await request("/v1/tokens", { headers: { Authorization: `Bearer ${alice}` } })).json()) as {
      tokens: { id: string; name: string }[];
    };
    expect(after.tokens.find((t) => t.id === mine.id)?.name).toBe("desk, renamed");
    await refused(
      await request("/v1/tokens/not-an-id!", {
        method: "PATCH",
        headers: { Authorization: `Bearer ${token}`, ...JSON_TYPE },
        body: JSON.stringify({ name: "x" }),
      }),
      404,
      "not_found",
    );
  });
});
