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
