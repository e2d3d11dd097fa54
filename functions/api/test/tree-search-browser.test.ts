/**
 * The share page's tree in a real browser (Debian's chromium, driven by playwright-core): its
 * search reads the whole text of every entry (masked) on the server, not the previews, and a
 * label chip stays readable beside a long preview.
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
const user = (id: string, parentId: string | null, content: string) =>
  line({ type: "message", id, parentId, timestamp: ts(1), message: { role: "user", content, timestamp: 1 } });

describe("the share page's tree in a browser", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}`, ...(init.headers ?? {}) },
    });

  async function share(id: string, body: string) {
    const put = await api(`/v1/sessions/${id}`, { method: "PATCH", headers: { "Upload-Offset": "0" }, body });
    expect(put.status, await put.clone().text()).toBe(200);
    const r = await api(`/v1/sessions/${id}/shares`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    return ((await r.json()) as { url: string }).url;
  }

  /** Rows the tree shows now, from its status line (only the rows in view are drawn). */
  const status = async (page: Page) => (await page.locator(".tree-status").textContent()) ?? "";
  /** Types a search and waits for the server's last page of matches. */
  const searchFor = async (page: Page, q: string) => {
    await page.fill("#tree-search", q);
    await page.waitForFunction(
      (asked) => {
        const el = document.querySelector(".tree-status");
        return el?.getAttribute("data-query") === asked && el.getAttribute("data-searching") === "0";
      },
      q.toLowerCase(),
      { timeout: 60_000 },
    );
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-tree-"));
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("search reads the whole text of every entry (masked) in a 20,000-entry share, on the server", async () => {
    const secret = `ghp_${"Q7w8E9r0T1".repeat(3)}zyxwvu`;
    let body = line({ type: "session", version: 3, id: "big", timestamp: ts(0), cwd: "/w" });
    for (let i = 0; i < 20_000; i++) {
      const parent = i === 0 ? null : i % 50 === 0 ? `n${i - 25}` : `n${i - 1}`;
      // Every 1,500th entry is a long message with its word at the end, far past any preview.
      const long = i % 1500 === 7;
      const text = long
        ? `${"a long paragraph about the cart service ".repeat(60)} zebra`
        : `step ${i} of the big task`;
      body += user(`n${i}`, parent, i === 3 ? `deploy with ${secret} tonight` : text);
    }
    const url = await share("big", body);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await page.waitForSelector("body[data-tree-ready]", { timeout: 60_000 });
    const t0 = Date.now();
    await searchFor(page, "zebra");
    const first = Date.now() - t0;
    expect(await status(page)).toBe("14 of 20,000 entries match");
    // Again (the text is kept per version of the session): the answer is fast.
    await page.fill("#tree-search", "");
    const t1 = Date.now();
    await page.fill("#tree-search", "ZEBRA");
    await page.waitForFunction(
      () => document.querySelector(".tree-status")?.textContent === "14 of 20,000 entries match",
    );
    const again = Date.now() - t1;
    // A match opens its entry.
    await page.locator(".tree-row").first().click();
    // The click loads the 20,000-entry page again (at that leaf): as long as its first load may take.
    await page.waitForSelector("#e-n7", { timeout: 60_000 });
    // Masked text is what is searched: the credential is not found, its mask is.
    await searchFor(page, secret.slice(0, 16));
    expect(await status(page)).toBe("0 of 20,000 entries match");
    await searchFor(page, "masked: github-token");
    expect(await status(page)).toBe("1 of 20,000 entries match");
    console.log(
      `full-text tree search, 20,000 entries: first answer ${first} ms (text made and masked), next ${again} ms`,
    );
    await page.close();
  }, 180_000);

  it("a label chip beside a long preview keeps its text in view", async () => {
    const long = "a preview that runs on well past the width of the tree pane ".repeat(4);
    const url = await share(
      "labels",
      line({ type: "session", version: 3, id: "labels", timestamp: ts(0), cwd: "/w" }) +
        user("u1", null, long) +
        user("u2", "u1", "short") +
        line({ type: "label", id: "l1", parentId: "u2", timestamp: ts(2), targetId: "u1", label: "checkpoint" }),
    );
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await page.waitForSelector("body[data-tree-ready]");
    const chip = page.locator('.tree-row[data-id="u1"] .label');
    const [row, box] = await Promise.all([page.locator('.tree-row[data-id="u1"]').boundingBox(), chip.boundingBox()]);
    expect(row && box).toBeTruthy();
    if (!row || !box) return;
    // Inside the row, wide enough for its word, and its text not cut away.
    expect(box.x + box.width).toBeLessThanOrEqual(row.x + row.width + 0.5);
    expect(box.width).toBeGreaterThan(40);
    expect(await chip.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    await page.close();
  }, 60_000);
});
