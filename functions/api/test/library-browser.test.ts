/**
 * The library in a real browser (Debian's chromium, driven by playwright-core), signed in with a
 * device token: filter the sessions, search as you type, open a hit at its entry, the session
 * page (tree, download, copy the pull command), make a share and watch its view count rise,
 * revoke it, revoke all; the phone layout; hostile text executes nothing. Screenshots go to docs/.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { line } from "@pisync/testing";
import { TOOL_XSS } from "@pisync/testing/hostile";
import { freePort } from "@pisync/testing/servers";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const docs = new URL("../../../docs/", import.meta.url).pathname;
const at = (day: string, minute: number) => `${day}T09:${String(minute).padStart(2, "0")}:00.000Z`;
const usage = (tokens: number) => ({
  input: tokens,
  output: 200,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: tokens + 200,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: tokens / 100_000 },
});

interface Demo {
  id: string;
  day: string;
  cwd: string;
  name: string;
  model: string;
  turns: Array<[string, string]>;
}

/** A session of user/assistant turns, the last user turn branching once (a tree to navigate). */
function demo(d: Demo): string {
  let out = line({ type: "session", version: 3, id: d.id, timestamp: at(d.day, 0), cwd: d.cwd });
  out += line({ type: "session_info", id: `${d.id}-n`, parentId: null, timestamp: at(d.day, 0), name: d.name });
  let parent = `${d.id}-n`;
  d.turns.forEach(([question, answer], i) => {
    const u = `${d.id}-u${i}`;
    const a = `${d.id}-a${i}`;
    out += line({
      type: "message",
      id: u,
      parentId: parent,
      timestamp: at(d.day, 2 * i + 1),
      message: { role: "user", content: question, timestamp: i },
    });
    out += line({
      type: "message",
      id: a,
      parentId: u,
      timestamp: at(d.day, 2 * i + 2),
      message: {
        role: "assistant",
        content: [{ type: "text", text: answer }],
        api: "anthropic-messages",
        provider: d.model.split("/")[0],
        model: d.model.split("/")[1],
        usage: usage(1000 * (i + 1)),
        stopReason: "stop",
        timestamp: i,
      },
    });
    parent = a;
  });
  // A second try of the first question: the tree has two branches.
  out += line({
    type: "message",
    id: `${d.id}-alt`,
    parentId: `${d.id}-n`,
    timestamp: at(d.day, 40),
    message: { role: "user", content: `${d.turns[0][0]} (asked again)`, timestamp: 40 },
  });
  return out;
}

const DEMOS: Demo[] = [
  {
    id: "login-race",
    day: "2026-02-03",
    cwd: "/home/dev/webapp",
    name: "Fix the flaky login test",
    model: "anthropic/claude-sonnet-4-5",
    turns: [
      ["The login test fails one run in ten. Why?", "It reads the session cookie before the redirect finishes."],
      ["Can you fix it?", "Waiting for the URL before reading the cookie fixes the race."],
      ["Run it 50 times to be sure.", "50 runs, 50 passes."],
    ],
  },
  {
    id: "s3-retry",
    day: "2026-01-20",
    cwd: "/home/dev/backup-service",
    name: "S3 retry with jitter",
    model: "openai/gpt-5",
    turns: [
      ["Uploads fail under load with SlowDown errors.", "S3 asks us to back off: add exponential retries with jitter."],
      ["Make the retry budget configurable.", "Added maxAttempts and a base delay to the client options."],
    ],
  },
  {
    id: "css-grid",
    day: "2025-12-11",
    cwd: "/home/dev/webapp",
    name: "Dashboard layout on phones",
    model: "anthropic/claude-sonnet-4-5",
    turns: [["The dashboard overflows on a phone.", "A grid with minmax columns folds it into one column."]],
  },
  {
    id: "release-notes",
    day: "2025-10-02",
    cwd: "/home/dev/docs",
    name: "Write the 2.0 release notes",
    model: "google/gemini-2.5-pro",
    turns: [["Draft the release notes from the changelog.", "Here is a draft grouped by feature."]],
  },
];

describe("the library in a browser", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;
  let signedIn: BrowserContext;

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}`, ...(init.headers ?? {}) },
    });

  async function upload(id: string, body: string) {
    const r = await api(`/v1/sessions/${id}`, { method: "PATCH", headers: { "Upload-Offset": "0" }, body });
    expect(r.status, await r.clone().text()).toBe(200);
  }

  /** Waits until the search index holds `word` (indexing follows appends in the background). */
  async function indexed(word: string) {
    for (let i = 0; i < 200; i++) {
      const r = await api(`/v1/search?q=${encodeURIComponent(word)}`);
      if (((await r.json()) as { sessions: unknown[] }).sessions.length) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${word} was never indexed`);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-library-browser-"));
    mkdirSync(docs, { recursive: true });
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    for (const d of DEMOS) await upload(d.id, demo(d));
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
    signedIn = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
      colorScheme: "light",
    });
    signedIn.setDefaultTimeout(10_000);
    await signedIn.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("filters the sessions, searches as you type, and opens a hit at its entry", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${server.url}/`);
    const titles = () => page.locator("#static-results a.title").allTextContents();
    await expect(titles()).resolves.toEqual(DEMOS.map((d) => d.name));
    await page.screenshot({ path: join(docs, "library-sessions.png"), fullPage: false });
    // Filters submit the form: the address holds them.
    await page.selectOption('select[name="cwd"]', "/home/dev/webapp");
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/cwd=/);
    await expect(titles()).resolves.toEqual(["Fix the flaky login test", "Dashboard layout on phones"]);
    await page.selectOption('select[name="model"]', "anthropic/claude-sonnet-4-5");
    await page.fill('input[name="from"]', "2026-01-01");
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/from=2026-01-01/);
    await expect(titles()).resolves.toEqual(["Fix the flaky login test"]);
    // Live search: results appear as you type, without leaving the page.
    await indexed("jitter");
    await page.goto(`${server.url}/`);
    const before = page.url();
    await page.locator("#library-q").pressSequentially("jitter", { delay: 30 });
    await page.locator("#live-results mark").first().waitFor();
    expect(page.url()).toBe(before);
    await expect(page.locator("#static-results").isHidden()).resolves.toBe(true);
    await expect(page.locator("#live-results .hit h2").allTextContents()).resolves.toEqual(["S3 retry with jitter"]);
    // A malformed query says what is wrong.
    await page.locator("#library-q").fill('"unclosed');
    await page.locator("#live-results .error").waitFor();
    // Without the script, the form submits and the server renders the same hits.
    await page.locator("#library-q").fill("jitter");
    await page.locator("#live-results mark").first().waitFor();
    await page.locator("#live-results ol.snippets li", { hasText: "assistant" }).locator("a").first().click();
    await page.waitForURL(/\/sessions\/s3-retry\?targetId=s3-retry-a0#e-s3-retry-a0$/);
    await page.locator("#e-s3-retry-a0.target").waitFor();
    await expect(page.locator("h1").textContent()).resolves.toBe("S3 retry with jitter");
    await page.close();
  });

  it("shows a session with its tree, downloads it and copies its pull command", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${server.url}/sessions/login-race?leaf=login-race-a2`);
    await page.locator("#tree .tree-row").first().waitFor();
    expect(await page.locator("#tree .tree-row").count()).toBeGreaterThanOrEqual(7);
    await page.screenshot({ path: join(docs, "library-session.png"), fullPage: false });
    // Another branch from the navigator.
    await page.locator("#tree .tree-row", { hasText: "asked again" }).first().click();
    await page.waitForURL(/leaf=login-race-alt/);
    await expect(page.locator("#entries").textContent()).resolves.toContain("(asked again)");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("a.download")]);
    expect(download.suggestedFilename()).toBe("login-race-generation-1.jsonl");
    await page.click('button[data-copy^="pisync pull"]');
    await page.locator('button[data-copy^="pisync pull"]', { hasText: "Copied" }).waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe("pisync pull login-race");
    await page.close();
  });

  it("makes a share, sees its view count rise, revokes it, then revokes all", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${server.url}/sessions/css-grid`);
    await page.click('a[href="/shares?session=css-grid"]');
    await page.waitForURL(/\/shares\?session=css-grid/);
    await page.selectOption('select[name="expires"]', "30");
    await page.click('.share-form button[type="submit"]');
    await page.waitForURL(/\/shares\?created=/);
    const url = await page.locator('input[aria-label="Share link"]').inputValue();
    expect(url).toContain("/s/");
    // Readers without the owner's credentials open it; each page view counts.
    const reader = await browser.newContext();
    const viewer = await reader.newPage();
    for (let i = 0; i < 2; i++) {
      await viewer.goto(url);
      await expect(viewer.locator("h1").textContent()).resolves.toBe("Dashboard layout on phones");
    }
    await page.goto(`${server.url}/shares`);
    const row = page.locator("table.shares tbody tr").first();
    await expect(row.locator("td.views").textContent()).resolves.toBe("2 views");
    await expect(row.locator(".status").textContent()).resolves.toBe("active");
    for (const id of ["login-race", "s3-retry"]) {
      await page.goto(`${server.url}/shares?session=${id}`);
      await page.click('.share-form button[type="submit"]');
      await page.waitForURL(/created=/);
    }
    await page.goto(`${server.url}/shares`);
    await page.screenshot({ path: join(docs, "library-shares.png"), fullPage: false });
    await page.locator("table.shares tbody tr", { hasText: "Dashboard layout" }).locator("button").click();
    await page.waitForURL(/revoked=1/);
    await expect(
      page.locator("table.shares tbody tr", { hasText: "Dashboard layout" }).locator(".status").textContent(),
    ).resolves.toBe("revoked");
    await viewer.goto(url);
    await expect(viewer.locator("h1").textContent()).resolves.toBe("This link is no longer available");
    await page.click(".revoke-all button");
    await page.waitForURL(/revoked=2/);
    await expect(page.locator("table.shares .status").allTextContents()).resolves.toEqual([
      "revoked",
      "revoked",
      "revoked",
    ]);
    await expect(page.locator(".revoke-all").count()).resolves.toBe(0);
    await reader.close();
    await page.close();
  });

  it("works on a phone (dark)", async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
      colorScheme: "dark",
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
    });
    const page = await phone.newPage();
    await page.goto(`${server.url}/`);
    // Nothing wider than the screen.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(docs, "library-phone.png"), fullPage: false });
    await page.goto(`${server.url}/shares`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await phone.close();
  });

  it("shows insights as charts with tables, on a desktop, dark, and on a phone, within the CSP", async () => {
    const range = "/insights?from=2025-10-01&to=2026-02-28&per=week";
    const refused: string[] = [];
    const page = await signedIn.newPage();
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    await page.goto(`${server.url}${range}`);
    // Time, model, project and machine; the demos call no tools, so that part has no chart.
    await expect(page.locator("svg.chart").count()).resolves.toBe(4);
    await expect(page.locator("#tools-h + .insights-pair").textContent()).resolves.toContain("No tool calls");
    // Each chart is an image with a name, its numbers in the table beside it.
    await expect(page.getByRole("img", { name: "Cost by model" }).count()).resolves.toBe(1);
    const models = await page.locator("table.insights-table").nth(1).locator("tbody th").allTextContents();
    expect(models).toEqual(["anthropic/claude-sonnet-4-5", "openai/gpt-5", "google/gemini-2.5-pro"]);
    // Bars are drawn with the stylesheet's colours (no inline style, nothing refused).
    const fill = await page
      .locator("svg.chart rect.bar")
      .first()
      .evaluate((el) => getComputedStyle(el).fill);
    expect(fill).not.toBe("none");
    await page.screenshot({ path: join(docs, "library-insights.png"), fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(docs, "library-insights-dark.png"), fullPage: false });
    expect(refused).toEqual([]);
    await page.close();

    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      colorScheme: "dark",
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
    });
    const small = await phone.newPage();
    await small.goto(`${server.url}${range}`);
    expect(await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await small.screenshot({ path: join(docs, "library-insights-phone.png"), fullPage: false });
    await phone.close();
  });

  it("hostile names, folders, messages and snippets execute nothing", async () => {
    for (const [i, x] of TOOL_XSS.entries()) {
      await upload(
        `xss${i}`,
        demo({
          id: `xss${i}`,
          day: "2024-01-01",
          cwd: `/w/${x}`,
          name: x,
          model: `anthropic/${x}`,
          turns: [[`hostile${i} ${x}`, x]],
        }),
      );
    }
    await indexed("hostile3");
    const page = await signedIn.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    for (const path of [
      "/",
      "/?q=hostile3",
      "/shares?session=xss1",
      "/sessions/xss0",
      "/sessions/xss6",
      "/insights?from=2023-06-01&to=2024-05-31",
    ]) {
      await page.goto(`${server.url}${path}`);
      await page.waitForLoadState("load");
      await expect(page.evaluate(() => (window as { __xss?: number }).__xss)).resolves.toBeUndefined();
    }
    await page.goto(`${server.url}/`);
    await page.locator("#library-q").fill("hostile3");
    await page.locator("#live-results mark").first().waitFor();
    await expect(page.locator("#live-results").textContent()).resolves.toContain(TOOL_XSS[3]);
    await expect(page.evaluate(() => (window as { __xss?: number }).__xss)).resolves.toBeUndefined();
    expect(dialogs).toEqual([]);
    await page.close();
  });
});
