/**
 * The library's whole flow in a real browser (Debian's chromium, driven by playwright-core),
 * signed in by the session cookie only: `pisync open QUERY --print` → the link lands signed in on
 * the search → live search → a hit opened at its entry → the session page (tree, generations,
 * pull command) → a share made on the shares page, its views counted, revoked, revoke all →
 * a session deleted → sign out → the sign-in hint. Every change goes through the pages' forms; no request carries a
 * bearer token. A second user signed in beside the first finds nothing of theirs.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokens } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { assistantMessage, line, userMessage } from "@pisync/testing";
import { buildCli, cliPath, machine } from "@pisync/testing/cli";
import { freePort } from "@pisync/testing/servers";
import { type Browser, type BrowserContext, chromium, type Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const docs = new URL("../../../docs/", import.meta.url).pathname;

/** A session of `turns` user/assistant pairs on `day`, each a minute after the last. */
function conversation(id: string, day: string, name: string, turns: Array<[string, string]>): string {
  const at = (minute: number) => new Date(Date.parse(`${day}T08:00:00.000Z`) + minute * 60_000).toISOString();
  let out = line({ type: "session", version: 3, id, timestamp: at(0), cwd: `/home/dev/${id}` });
  out += line({ type: "session_info", id: `${id}-n`, parentId: null, timestamp: at(0), name });
  let parent = `${id}-n`;
  turns.forEach(([question, answer], i) => {
    out += line({
      type: "message",
      id: `${id}-u${i}`,
      parentId: parent,
      timestamp: at(2 * i + 1),
      message: userMessage(question, i),
    });
    out += line({
      type: "message",
      id: `${id}-a${i}`,
      parentId: `${id}-u${i}`,
      timestamp: at(2 * i + 2),
      message: assistantMessage(answer, { timestamp: i }),
    });
    parent = `${id}-a${i}`;
  });
  return out;
}

/** A long session whose one mention of "jitter" sits deep in it (turn 20 of 40). */
const filler = (i: number): [string, string] => [
  `Step ${i}: read the upload logs of node ${i}.`,
  `Node ${i} shows the same SlowDown answers from the bucket, nothing new.`,
];
const RETRY_TURNS = Array.from({ length: 40 }, (_, i): [string, string] =>
  i === 20
    ? ["What should the client do about SlowDown?", "Retry with exponential backoff and full jitter, capped at 20 s."]
    : filler(i),
);
const RETRY_V1 = conversation("s3-retry", "2026-03-02", "S3 retry with jitter", RETRY_TURNS);
/** The same session rewritten on another machine: a second generation. */
const RETRY_V2 = conversation("s3-retry", "2026-03-02", "S3 retry with jitter", [
  ...RETRY_TURNS,
  ["Ship it.", "Merged and deployed."],
]);
const LOGIN = conversation("login-race", "2026-03-01", "Fix the flaky login test", [
  ["The login test fails one run in ten.", "The cookie is read before the redirect finishes."],
]);
const GRID = conversation("css-grid", "2026-02-27", "Dashboard layout on phones", [
  ["The dashboard overflows on a phone.", "A grid with minmax columns folds it into one column."],
]);
/** Another user's session that matches the same search. */
const BOBS = conversation("bob-audio", "2026-03-03", "Audio jitter on the podcast rig", [
  ["The recording has jitter.", "The USB hub drops frames: move the interface to its own port."],
]);

describe("the library's whole flow in a browser, signed in by cookie", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;
  let bobToken: string;
  let ada: ReturnType<typeof machine>;
  let bob: ReturnType<typeof machine>;

  const api = (path: string, init: RequestInit = {}, token = server.token) =>
    fetch(`${server.url}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });

  async function upload(id: string, body: string, method: "PATCH" | "PUT", token = server.token) {
    const headers: Record<string, string> = method === "PATCH" ? { "Upload-Offset": "0" } : {};
    const r = await api(`/v1/sessions/${id}`, { method, headers, body }, token);
    expect(r.status, await r.clone().text()).toBe(200);
  }

  /** Waits until `token`'s search finds `q` in session `id` (indexing follows appends in the background). */
  async function indexed(q: string, id: string, token = server.token) {
    for (let i = 0; i < 200; i++) {
      const r = await api(`/v1/search?q=${encodeURIComponent(q)}`, {}, token);
      const found = (await r.json()) as { sessions: Array<{ sessionId: string }> };
      if (found.sessions.some((s) => s.sessionId === id)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${q} was never indexed in ${id}`);
  }

  /** `pisync open --print [ARG]` on a machine: the one-time link (run without blocking: the server is in this process). */
  function openLink(on: ReturnType<typeof machine>, ...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, [cliPath, "open", "--print", ...args], { env: on.env }, (error, stdout, stderr) =>
        error ? reject(new Error(`pisync open failed: ${stderr}`)) : resolve(stdout.trim()),
      );
    });
  }

  /** A browser context that records every request it makes (to check what it sent). */
  async function browserContext(): Promise<{ context: BrowserContext; requests: Request[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light" });
    context.setDefaultTimeout(10_000);
    const requests: Request[] = [];
    context.on("request", (r) => requests.push(r));
    return { context, requests };
  }

  const sessionCookie = async (context: BrowserContext) =>
    (await context.cookies(server.url)).find((cookie) => cookie.name === "pisync_session");

  beforeAll(async () => {
    buildCli();
    dir = mkdtempSync(join(tmpdir(), "pisync-library-flow-"));
    mkdirSync(docs, { recursive: true });
    // The second user's token, made in the store before the server opens it.
    const stores = embeddedStores(dir);
    bobToken = (await new Tokens(stores.meta).create("bob", "bob's laptop")).token;
    stores.close();
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    await upload("s3-retry", RETRY_V1, "PATCH");
    await upload("s3-retry", RETRY_V2, "PUT");
    await upload("login-race", LOGIN, "PATCH");
    await upload("css-grid", GRID, "PATCH");
    await upload("bob-audio", BOBS, "PATCH", bobToken);
    await indexed("jitter", "s3-retry");
    await indexed("cookie", "login-race");
    await indexed("jitter", "bob-audio", bobToken);
    ada = machine(server.url, server.token);
    bob = machine(server.url, bobToken);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await ada?.cleanup();
    await bob?.cleanup();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("pisync open QUERY → search → a hit at its entry → session → share, views, revoke, revoke all → delete → sign out", async () => {
    const { context, requests } = await browserContext();
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = await context.newPage();

    // The link signs in and lands on the search for the query.
    const link = await openLink(ada, "jitter");
    expect(link).toMatch(new RegExp(`^${server.url}/login/psl_`));
    const landed = await page.goto(link);
    expect(landed?.status()).toBe(200);
    expect(page.url()).toBe(`${server.url}/?q=jitter`);
    expect(await sessionCookie(context)).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    await expect(page.locator("#library-q").inputValue()).resolves.toBe("jitter");
    await expect(page.locator("#static-results .hit h2").allTextContents()).resolves.toEqual(["S3 retry with jitter"]);
    await expect(page.locator("#static-results .hit mark").first().textContent()).resolves.toBe("jitter");
    await page.screenshot({ path: join(docs, "library-search.png"), fullPage: false });

    // Live results as you type, without leaving the page.
    const searchBox = page.locator("#library-q");
    await searchBox.fill("");
    await searchBox.pressSequentially("cookie", { delay: 20 });
    await page.locator("#live-results .hit", { hasText: "Fix the flaky login test" }).waitFor();
    expect(page.url()).toBe(`${server.url}/?q=jitter`);
    await expect(page.locator("#static-results").isHidden()).resolves.toBe(true);
    await expect(page.locator("#live-results .hit h2").allTextContents()).resolves.toEqual([
      "Fix the flaky login test",
    ]);
    await searchBox.fill("backoff jitter");
    await page.locator("#live-results .hit", { hasText: "S3 retry with jitter" }).waitFor();
    await expect(page.locator("#live-results .hit h2").allTextContents()).resolves.toEqual(["S3 retry with jitter"]);

    // The hit opens the session at its entry: that entry is the target, scrolled into view.
    await page.locator("#live-results ol.snippets li", { hasText: "assistant" }).locator("a").first().click();
    await page.waitForURL(`${server.url}/sessions/s3-retry?targetId=s3-retry-a20#e-s3-retry-a20`);
    const target = page.locator("#e-s3-retry-a20.target");
    await target.waitFor();
    await expect(target.textContent()).resolves.toContain("full jitter");
    await expect(page.locator("h1").textContent()).resolves.toBe("S3 retry with jitter");
    const seen = await target.evaluate((el) => {
      const box = el.getBoundingClientRect();
      return { top: box.top, bottom: box.bottom, height: window.innerHeight, scrolled: window.scrollY };
    });
    expect(seen.scrolled).toBeGreaterThan(0); // deep in a long session: the page moved to it
    expect(seen.top).toBeGreaterThanOrEqual(0);
    expect(seen.top).toBeLessThan(seen.height);

    // The session page: its tree, every generation to download, the pull command to copy.
    await page.locator("#tree .tree-row").first().waitFor();
    // The navigator holds the whole tree (the name and 41 turns), drawing the rows in view.
    await expect(page.locator("#tree .tree-status").textContent()).resolves.toMatch(/ of 83 entries$/);
    await expect(page.locator("#tree .tree-row.current").textContent()).resolves.toContain("full jitter");
    const [current] = await Promise.all([page.waitForEvent("download"), page.click("a.download")]);
    expect(current.suggestedFilename()).toBe("s3-retry-generation-2.jsonl");
    expect(readFileSync(await current.path(), "utf8")).toBe(RETRY_V2);
    await page.locator("details.generations summary").click();
    const [first] = await Promise.all([page.waitForEvent("download"), page.click('a:text-is("generation 1")')]);
    expect(first.suggestedFilename()).toBe("s3-retry-generation-1.jsonl");
    expect(readFileSync(await first.path(), "utf8")).toBe(RETRY_V1);
    await page.click('button[data-copy="pisync pull s3-retry"]');
    await page.locator('button[data-copy="pisync pull s3-retry"]', { hasText: "Copied" }).waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe("pisync pull s3-retry");

    // A share made on the shares page; a reader without any credentials opens it twice.
    await page.goto(`${server.url}/shares`);
    await page.locator("details.new-share summary").click();
    await page.selectOption('.share-form select[name="session"]', "s3-retry");
    await page.selectOption('.share-form select[name="expires"]', "30");
    await page.click('.share-form button[type="submit"]');
    await page.waitForURL(/\/shares\?created=/);
    const shareUrl = await page.locator("#created-url").inputValue();
    expect(shareUrl).toMatch(new RegExp(`^${server.url}/s/`));
    const reader = await browser.newContext();
    const readerPage = await reader.newPage();
    for (let i = 0; i < 2; i++) {
      expect((await readerPage.goto(shareUrl))?.status()).toBe(200);
      await expect(readerPage.locator("h1").textContent()).resolves.toBe("S3 retry with jitter");
    }
    await page.goto(`${server.url}/shares`);
    const row = page.locator("table.shares tbody tr", { hasText: "S3 retry with jitter" });
    await expect(row.locator("td.views").textContent()).resolves.toBe("2 views");
    await expect(row.locator("td").nth(5).locator("time").count()).resolves.toBe(1); // last viewed: a time
    await expect(row.locator(".status").textContent()).resolves.toBe("active");

    // Revoke it: the reader's link is dead.
    await row.locator("button", { hasText: "Revoke" }).click();
    await page.waitForURL(/\/shares\?revoked=1$/);
    await expect(row.locator(".status").textContent()).resolves.toBe("revoked");
    expect((await readerPage.goto(shareUrl))?.status()).toBe(410);
    await expect(readerPage.locator("h1").textContent()).resolves.toBe("This link is no longer available");

    // Two more links, then revoke all.
    for (const id of ["login-race", "css-grid"]) {
      await page.goto(`${server.url}/shares?session=${id}`);
      await page.click('.share-form button[type="submit"]');
      await page.waitForURL(/created=/);
    }
    await expect(page.locator("table.shares .status").allTextContents()).resolves.toEqual(
      expect.arrayContaining(["active", "active", "revoked"]),
    );
    await page.click(".revoke-all button");
    await page.waitForURL(/\/shares\?revoked=2$/);
    await expect(page.locator("table.shares .status").allTextContents()).resolves.toEqual([
      "revoked",
      "revoked",
      "revoked",
    ]);
    await expect(page.locator(".revoke-all").count()).resolves.toBe(0);
    const left = (await (await api("/v1/shares")).json()) as { shares: Array<{ status: string }> };
    expect(left.shares.map((s) => s.status)).toEqual(["revoked", "revoked", "revoked"]);

    // Delete a session: only once its id is typed.
    await page.goto(`${server.url}/sessions/css-grid`);
    await page.click("a.danger");
    await page.waitForURL(`${server.url}/sessions/css-grid/delete`);
    await page.fill('input[name="confirm"]', "css");
    await page.click('form button[type="submit"].danger');
    await expect(page.locator('p[role="alert"]').textContent()).resolves.toContain("nothing was deleted");
    expect((await api("/v1/sessions/css-grid")).status).toBe(200);
    await page.fill('input[name="confirm"]', "css-grid");
    await page.click('form button[type="submit"].danger');
    await page.waitForURL(`${server.url}/`);
    await expect(page.locator("#static-results a.title").allTextContents()).resolves.toEqual([
      "S3 retry with jitter",
      "Fix the flaky login test",
    ]);
    expect((await api("/v1/sessions/css-grid")).status).toBe(404);

    // Sign out: the cookie is gone, and so is the session behind it.
    const cookie = await sessionCookie(context);
    await page.locator("form.sign-out button").click();
    await page.waitForURL(`${server.url}/`);
    expect(await sessionCookie(context)).toBeUndefined();
    const signedOut = await page.goto(`${server.url}/`);
    expect(signedOut?.status()).toBe(401);
    await expect(page.locator("h1").textContent()).resolves.toBe("Sign in");
    await expect(page.locator("main").textContent()).resolves.toContain("pisync open");
    await expect(page.locator("nav.library-nav").count()).resolves.toBe(0);
    const replay = await browser.newContext();
    await replay.addCookies([{ ...(cookie as NonNullable<typeof cookie>) }]);
    expect((await (await replay.newPage()).goto(`${server.url}/shares`))?.status()).toBe(401);

    // What the browser sent: never a bearer token; every change a form POST from this origin
    // carrying the CSRF field; the live search a plain GET.
    const sent = await Promise.all(requests.map(async (r) => ({ r, headers: await r.allHeaders() })));
    expect(sent.filter(({ headers }) => "authorization" in headers)).toEqual([]);
    const posts = sent.filter(({ r }) => r.method() === "POST");
    expect(posts.map(({ r }) => new URL(r.url()).pathname)).toEqual([
      "/shares",
      expect.stringMatching(/^\/shares\/[^/]+\/revoke$/),
      "/shares",
      "/shares",
      "/shares/revoke-all",
      "/sessions/css-grid/delete",
      "/sessions/css-grid/delete",
      "/logout",
    ]);
    for (const { r, headers } of posts) {
      expect(headers.origin).toBe(server.url);
      expect(headers["content-type"]).toContain("application/x-www-form-urlencoded");
      expect(new URLSearchParams(r.postData() ?? "").get("csrf")).toMatch(/\S{20,}/);
    }
    const live = sent.filter(({ r }) => new URL(r.url()).pathname === "/library/search");
    expect(live.length).toBeGreaterThan(0);
    for (const { r, headers } of live) {
      expect(r.method()).toBe("GET");
      expect("x-csrf-token" in headers).toBe(false);
    }
    await Promise.all([context.close(), reader.close(), replay.close()]);
  }, 90_000);

  it("pisync open ID lands on that session; a second user signed in beside the first finds nothing of theirs", async () => {
    // Ada's live share, made with her token, and a browser of hers signed in at one session.
    const made = await api("/v1/sessions/login-race/shares", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({}),
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const share = (await made.json()) as { id: string };
    const adas = await browserContext();
    const adaPage = await adas.context.newPage();
    await adaPage.goto(await openLink(ada, "login-race"));
    expect(adaPage.url()).toBe(`${server.url}/sessions/login-race`);
    await expect(adaPage.locator("h1").textContent()).resolves.toBe("Fix the flaky login test");

    // Bob asks for Ada's session id: he has none by that id, so he lands on a search for it,
    // which finds nothing of hers (her own search for it finds her session by its folder).
    const hers = (await (await api("/v1/search?q=s3-retry")).json()) as { sessions: Array<{ sessionId: string }> };
    expect(hers.sessions.map((s) => s.sessionId)).toEqual(["s3-retry"]);
    const bobs = await browserContext();
    const page = await bobs.context.newPage();
    expect((await page.goto(await openLink(bob, "s3-retry")))?.status()).toBe(200);
    expect(page.url()).toBe(`${server.url}/?q=s3-retry`);
    await expect(page.locator("#static-results").textContent()).resolves.toBe("Nothing matches this search.");

    // Ada's session page and its downloads answer exactly as a missing session's.
    for (const path of ["/sessions/s3-retry", "/sessions/s3-retry/raw?generation=1", "/sessions/s3-retry/raw"]) {
      const theirs = await page.goto(`${server.url}${path}`);
      const body = await theirs?.text();
      const missing = await page.goto(`${server.url}${path.replace("s3-retry", "no-such-session")}`);
      expect(theirs?.status(), path).toBe(404);
      expect(missing?.status(), path).toBe(404);
      expect(body).toBe(await missing?.text());
    }
    // Revoking Ada's share through a form of Bob's page (his CSRF token, this origin): 404, as a made-up id.
    const revoke = async (id: string) => {
      await page.goto(`${server.url}/`);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST"),
        page.evaluate((action) => {
          const form = document.createElement("form");
          form.method = "post";
          form.action = action;
          const csrf = document.querySelector<HTMLInputElement>('form.sign-out input[name="csrf"]');
          if (csrf) form.append(csrf.cloneNode());
          document.body.append(form);
          form.submit();
        }, `/shares/${id}/revoke`),
      ]);
      return { status: answer.status(), text: await answer.text() };
    };
    const theirShare = await revoke(share.id);
    expect(theirShare.status).toBe(404);
    expect(theirShare).toEqual(await revoke("AAAAAAAAAAAAAAAAAAAAAA"));
    const adaShares = (await (await api("/v1/shares")).json()) as { shares: Array<{ id: string; status: string }> };
    expect(adaShares.shares.find((s) => s.id === share.id)?.status).toBe("active");
    // Nor does his shares page list it.
    await page.goto(`${server.url}/shares`);
    await expect(page.locator(`tr[data-share="${share.id}"]`).count()).resolves.toBe(0);

    // His search, served and live, shows his session only, though Ada's match too.
    await page.goto(`${server.url}/?q=jitter`);
    await expect(page.locator("#static-results .hit h2").allTextContents()).resolves.toEqual([
      "Audio jitter on the podcast rig",
    ]);
    await page.locator("#library-q").fill("jitter");
    await page.locator("#live-results .hit").first().waitFor();
    await expect(page.locator("#live-results .hit h2").allTextContents()).resolves.toEqual([
      "Audio jitter on the podcast rig",
    ]);
    await page.locator("#library-q").fill("backoff");
    await page.locator("#live-results .empty").waitFor();
    // The list itself: his one session.
    await page.goto(`${server.url}/`);
    await expect(page.locator("#static-results a.title").allTextContents()).resolves.toEqual([
      "Audio jitter on the podcast rig",
    ]);

    // Ada, meanwhile, still reads her session.
    expect((await adaPage.goto(`${server.url}/sessions/s3-retry`))?.status()).toBe(200);
    for (const { requests } of [adas, bobs]) {
      const headers = await Promise.all(requests.map((r) => r.allHeaders()));
      expect(headers.filter((h) => "authorization" in h)).toEqual([]);
    }
    await Promise.all([adas.context.close(), bobs.context.close()]);
  });
});
