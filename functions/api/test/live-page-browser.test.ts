/**
 * The live session page in a real browser (Debian's chromium, driven by playwright-core): as
 * entries arrive, the header's counts (messages, tool calls, tokens and cost, last entry) and
 * the tree follow them without a reload, keeping the tree's search; on the owner's page and on
 * a share link alike.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { line } from "@pisync/testing";
import { freePort } from "@pisync/testing/servers";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();
const user = (id: string, parentId: string | null, content: string, s: number) =>
  line({ type: "message", id, parentId, timestamp: ts(s), message: { role: "user", content, timestamp: s } });
const assistant = (id: string, parentId: string, content: string, s: number, tokens: number, cost: number) =>
  line({
    type: "message",
    id,
    parentId,
    timestamp: ts(s),
    message: {
      role: "assistant",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: content }],
      usage: {
        input: tokens,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: tokens,
        cost: { input: cost, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
      },
      timestamp: s,
    },
  });

describe("the live session page", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}`, ...(init.headers ?? {}) },
    });
  async function append(id: string, body: string) {
    const head = await api(`/v1/sessions/${id}`, { method: "HEAD" });
    const offset = head.status === 200 ? (head.headers.get("Upload-Offset") ?? "0") : "0";
    const r = await api(`/v1/sessions/${id}`, { method: "PATCH", headers: { "Upload-Offset": offset }, body });
    expect(r.status, await r.clone().text()).toBe(200);
  }
  /** A session with two branches (so the page draws its tree). */
  async function session(id: string) {
    await append(
      id,
      line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/w" }) +
        user("u1", null, "Plan the release", 1) +
        assistant("a1", "u1", "Here is a plan", 2, 1000, 0.5) +
        user("b1", "u1", "Or retry instead", 3) +
        user("u2", "a1", "Write the notes", 4),
    );
  }
  const fact = (page: Page, name: string) => page.locator(`[data-fact="${name}"]`).textContent();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-live-browser-"));
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** New entries on the default branch: a user message and a costly reply. */
  async function moreArrive(id: string) {
    await append(id, user("u3", "u2", "Great, ship it", 9) + assistant("a3", "u3", "Shipped", 10, 2500, 1.25));
  }

  /** The page follows: the entries, then the header's counts and the tree. */
  async function followed(page: Page) {
    await page.waitForSelector("#e-a3", { timeout: 20_000 });
    await page.waitForFunction(() => document.body.dataset.treeEntries === "6", undefined, { timeout: 20_000 });
    await expect(fact(page, "messages")).resolves.toBe("5 messages");
    await expect(fact(page, "totals")).resolves.toBe("3,500 tokens · $1.75");
    await expect(page.locator('[data-fact="last"] time').getAttribute("datetime")).resolves.toBe(ts(10));
    await expect(page.locator('[data-fact="last"] time').textContent()).resolves.toBe(
      `${ts(10).slice(0, 16).replace("T", " ")} UTC`,
    );
  }

  it("on the owner's page, the header's counts and the tree follow new entries, the tree's search kept", async () => {
    await session("live-own");
    const context = await browser.newContext({
      viewport: { width: 1400, height: 900 },
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/sessions/live-own`);
    await page.waitForSelector("body[data-tree-ready]");
    await expect(fact(page, "messages")).resolves.toBe("3 messages");
    await expect(fact(page, "totals")).resolves.toBe("1,000 tokens · $0.5000");
    // A search that matches nothing yet: once the entries arrive, the new one matches it.
    await page.fill("#tree-search", "ship it");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.textContent?.startsWith("0 of 4"));
    await moreArrive("live-own");
    await followed(page);
    await expect(page.locator("#tree-search").inputValue()).resolves.toBe("ship it");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.textContent?.startsWith("1 of 6"));
    await expect(page.locator('#tree .tree-row[data-id="u3"]').count()).resolves.toBe(1);
    // The new tip is the branch shown.
    await page.fill("#tree-search", "");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.textContent?.startsWith("6 of 6"));
    await expect(page.locator("#tree .tree-row.current").getAttribute("data-id")).resolves.toBe("a3");
    await context.close();
  }, 60_000);

  it("on a share link too", async () => {
    await session("live-shared");
    const made = await api("/v1/sessions/live-shared/shares", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    const { url } = (await made.json()) as { url: string };
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await page.waitForSelector("body[data-tree-ready]");
    await expect(fact(page, "tool-calls")).resolves.toBe("0 tool calls");
    await moreArrive("live-shared");
    await followed(page);
    await page.close();
  }, 60_000);
});
