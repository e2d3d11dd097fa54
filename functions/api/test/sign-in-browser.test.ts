/**
 * Signing in, in a real browser (Debian's chromium, driven by playwright-core): a
 * `pisync open --print` link signs the browser in (HttpOnly, SameSite=Strict cookie), the
 * devices page lists it, a token is revoked, "Sign out everywhere" signs it out; a reused or
 * expired link is refused; a form posted from another origin's page is refused and changes
 * nothing. Screenshots of the devices page (desktop) and the sign-in page (phone) go to docs/.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Tokens } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { buildCli, cliPath, machine } from "@pisync/testing/cli";
import { freePort } from "@pisync/testing/servers";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";

const docs = new URL("../../../docs/", import.meta.url).pathname;

describe("signing in, in a browser", () => {
  let browser: Browser;
  let dir: string;
  let stores: ReturnType<typeof embeddedStores>;
  let server: ReturnType<typeof serve>;
  let other: Server;
  let origin: string;
  let otherOrigin: string;
  let token: string;
  let cli: ReturnType<typeof machine>;
  /** The server's clock runs this far ahead of the real one (to expire a link). */
  let skew = 0;

  const api = (path: string, bearer = token) =>
    fetch(`${origin}${path}`, { headers: { Authorization: `Bearer ${bearer}` } });
  /** `pisync open --print [ARG]`: the one-time link the CLI prints (run without blocking: the server is in this process). */
  function openLink(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, [cliPath, "open", "--print", ...args], { env: cli.env }, (error, stdout, stderr) =>
        error ? reject(new Error(`pisync open failed: ${stderr}`)) : resolve(stdout.trim()),
      );
    });
  }
  const sessionCookie = async (context: BrowserContext) =>
    (await context.cookies(origin)).find((cookie) => cookie.name === "pisync_session");

  beforeAll(async () => {
    buildCli();
    dir = mkdtempSync(join(tmpdir(), "pisync-sign-in-browser-"));
    stores = embeddedStores(dir);
    const app = createApp({ stores, clock: () => new Date(Date.now() + skew), log: () => {} });
    const port = await freePort();
    server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, () => resolve(s));
    });
    origin = `http://127.0.0.1:${port}`;
    token = (await new Tokens(stores.meta).create("ada", "this laptop")).token;
    cli = machine(origin, token);
    // Another origin's page (same host, another port): it posts a form to the library.
    other = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      res.setHeader("Content-Type", "text/html");
      res.end(`<!doctype html><form method="post" action="${origin}${url.searchParams.get("action")}">
<input type="hidden" name="csrf" value="${url.searchParams.get("csrf")}"><button id="go">Win a prize</button></form>
<a id="link" href="${url.searchParams.get("href")}">sign in</a>`);
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
    mkdirSync(docs, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await new Promise((resolve) => other?.close(resolve));
    await cli?.cleanup();
    stores?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("pisync open → signed in → devices → revoke a token → sign out everywhere → signed out", async () => {
    const old = await new Tokens(stores.meta).create("ada", "old desktop");
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const link = await openLink();
    const landed = await page.goto(link);
    expect(new URL(page.url()).pathname).toBe("/");
    expect(landed?.status()).toBe(200);
    const cookie = await sessionCookie(context);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/", secure: false });
    expect(cookie?.value).toMatch(/^pss_/);
    // Scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).toBe("");

    expect((await page.goto(`${origin}/devices`))?.status()).toBe(200);
    const current = page.locator('tr[data-kind="browser"][aria-current="true"]');
    await expect(current.textContent()).resolves.toContain("this browser");
    await expect(current.textContent()).resolves.toContain("Chrome on Linux");
    await expect(page.locator('tr[data-kind="token"]').count()).resolves.toBe(2);
    await page.screenshot({ path: join(docs, "library-devices.png"), fullPage: true });

    // Revoke the old desktop's token: it stops working, this browser stays signed in.
    await page.locator(`tr[data-id="${old.record.id}"] button`).click();
    await page.waitForURL(`${origin}/devices`);
    await expect(page.locator('tr[data-kind="token"]').count()).resolves.toBe(1);
    expect((await api("/v1/tokens", old.token)).status).toBe(401);
    expect((await api("/v1/tokens")).status).toBe(200);

    // Sign out everywhere: this browser and another one are signed out; the token keeps working.
    const second = await browser.newContext();
    await (await second.newPage()).goto(await openLink());
    expect(await sessionCookie(second)).toBeDefined();
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.waitForURL(`${origin}/`);
    expect(await sessionCookie(context)).toBeUndefined();
    const after = await page.goto(`${origin}/devices`);
    expect(after?.status()).toBe(401);
    await expect(page.textContent("body")).resolves.toContain("pisync open");
    const secondPage = await second.newPage();
    expect((await secondPage.goto(`${origin}/devices`))?.status()).toBe(401);
    expect((await api("/v1/tokens")).status).toBe(200);
    await context.close();
    await second.close();
  });

  it("a link opened from another site's page signs in only when confirmed, then lands on its page", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const res = await fetch(`${origin}/v1/login-links`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ next: "/devices" }),
    });
    const { url } = (await res.json()) as { url: string };
    // localhost is another site than the 127.0.0.1 page the link is on: the navigation is
    // cross-site. It signs nothing in by itself (login CSRF); the person confirms on our page,
    // and the SameSite=Strict cookie must then reach the page the 303 leads to.
    await page.goto(`${otherOrigin}/?href=${encodeURIComponent(url.replace("127.0.0.1", "localhost"))}`);
    await page.click("#link");
    await page.waitForSelector("form[action^='/login/'] button");
    expect((await context.cookies()).some((cookie) => cookie.name === "pisync_session")).toBe(false);
    const [landed] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === "/devices"),
      page.click("form[action^='/login/'] button"),
    ]);
    expect(landed.status()).toBe(200);
    await expect(landed.text()).resolves.toContain("this browser");
    await context.close();
  });

  it("a reused link is refused, and an expired one; neither signs the browser in", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const link = await openLink();
    await page.goto(link);
    const other = await browser.newContext();
    const reused = await (await other.newPage()).goto(link);
    expect(reused?.status()).toBe(404);
    await expect(reused?.text()).resolves.toContain("already used");
    expect(await sessionCookie(other)).toBeUndefined();

    const late = await openLink();
    skew += 61_000;
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const phonePage = await phone.newPage();
    const expired = await phonePage.goto(late);
    expect(expired?.status()).toBe(410);
    await expect(phonePage.textContent("body")).resolves.toContain("expired");
    expect(await sessionCookie(phone)).toBeUndefined();
    await phonePage.goto(`${origin}/devices`);
    await expect(phonePage.textContent("body")).resolves.toContain("pisync open");
    await phonePage.screenshot({ path: join(docs, "library-signin-phone.png"), fullPage: false });
    await Promise.all([context.close(), other.close(), phone.close()]);
  });

  it("a form posted from another origin's page is refused with 403 and changes nothing", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(await openLink());
    await page.goto(`${origin}/devices`);
    // Even with the right CSRF token (say it leaked), the Origin is not this server's.
    const csrf = await page.locator('form[action="/logout-all"] input[name="csrf"]').inputValue();
    const before = await stores.meta.listBrowserSessions("ada");
    await page.goto(`${otherOrigin}/?action=/logout-all&csrf=${encodeURIComponent(csrf)}`);
    const [answer] = await Promise.all([page.waitForResponse(`${origin}/logout-all`), page.click("#go")]);
    expect(answer.status()).toBe(403);
    expect(await answer.json()).toMatchObject({ code: "csrf_rejected" });
    expect(await stores.meta.listBrowserSessions("ada")).toEqual(before);
    expect((await page.goto(`${origin}/devices`))?.status()).toBe(200);
    await context.close();
  });
});
