/**
 * Merged branches in the library's tree, in a real browser (Debian's chromium, driven by
 * playwright-core): on a session two devices wrote, each branch tip shows the device it came
 * from (escaped: names are user input; readable in dark mode and on a phone); a session one
 * device wrote shows none; the public share page of the same session never shows device names.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { line } from "@pisync/testing";
import { freePort } from "@pisync/testing/servers";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const docs = new URL("../../../docs/", import.meta.url).pathname;
const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();
const user = (id: string, parentId: string | null, content: string, s: number) =>
  line({ type: "message", id, parentId, timestamp: ts(s), message: { role: "user", content, timestamp: s } });
const LAPTOP = "Laptop-7Q";
const HOSTILE = `Desk <img src=x onerror="window.pwned=1"> & "box"`;

describe("the library's tree: the device of each merged branch", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;
  let laptop: string;
  let desktop: string;

  const api = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  async function append(token: string, id: string, body: string) {
    const head = await api(token, `/v1/sessions/${id}`, { method: "HEAD" });
    const offset = head.status === 200 ? (head.headers.get("Upload-Offset") ?? "0") : "0";
    const r = await api(token, `/v1/sessions/${id}`, { method: "PATCH", headers: { "Upload-Offset": offset }, body });
    expect(r.status, await r.clone().text()).toBe(200);
  }
  async function tokenNamed(name: string) {
    const r = await api(server.token, "/v1/tokens", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name }),
    });
    expect(r.status).toBe(201);
    return ((await r.json()) as { token: string }).token;
  }
  /** The owner's session page, its tree drawn (on a phone, its fold opened). */
  async function openTree(page: Page, id: string) {
    await page.goto(`${server.url}/sessions/${id}`);
    await page.waitForSelector("body[data-tree-ready]", { timeout: 30_000 });
    const fold = page.locator("details.tree-fold:not([open]) > summary");
    if (await fold.isVisible()) await fold.click();
    await page.locator("#tree .tree-row").first().waitFor();
  }
  const chipOf = (page: Page, id: string) => page.locator(`#tree .tree-row[data-id="${id}"] .device`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-devices-browser-"));
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    laptop = await tokenNamed(LAPTOP);
    desktop = await tokenNamed(HOSTILE);
    // Merged: the common prefix and the laptop's branch, then the desktop's lines the cloud lacked.
    const header = line({ type: "session", version: 3, id: "merged", timestamp: ts(0), cwd: "/w" });
    await append(
      laptop,
      "merged",
      header + user("u1", null, "Plan the release", 1) + user("u2", "u1", "Laptop: write the notes", 2),
    );
    await append(desktop, "merged", user("u3", "u1", "Desktop: tag the build", 3) + user("u4", "u3", "and push it", 4));
    // For the docs' picture: plain names.
    const desk = await tokenNamed("Desktop");
    const release = line({ type: "session", version: 3, id: "release", timestamp: ts(0), cwd: "/home/dev/app" });
    await append(
      laptop,
      "release",
      release +
        user("r1", null, "Plan the 2.0 release", 1) +
        user("r2", "r1", "Write the release notes from the changelog", 2) +
        user("r3", "r2", "Group them by feature", 5),
    );
    await append(
      desk,
      "release",
      user("r4", "r1", "Tag the build and push it", 3) + user("r5", "r4", "Run the smoke tests on the tag", 4),
    );
    // One device, two branches.
    const solo = line({ type: "session", version: 3, id: "solo", timestamp: ts(0), cwd: "/w" });
    await append(laptop, "solo", solo + user("s1", null, "Start", 1) + user("s2", "s1", "one way", 2));
    await append(laptop, "solo", user("s3", "s1", "the other way", 3));
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

  it("labels each branch tip with its device, escaped and read out, and nothing else", async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
    });
    const page = await context.newPage();
    await openTree(page, "merged");
    expect(await page.locator("#tree .device").count()).toBe(2);
    await expect(chipOf(page, "u2").textContent()).resolves.toBe(`from device ${LAPTOP}`);
    await expect(chipOf(page, "u4").textContent()).resolves.toBe(`from device ${HOSTILE}`);
    // Only the tips: the desktop's first line is not one.
    expect(await chipOf(page, "u3").count()).toBe(0);
    // The hostile name is text: no element was made of it, nothing ran.
    expect(await page.locator("#tree img").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    // Read out with the row ("from device …"), shown without the words.
    const hidden = chipOf(page, "u2").locator(".visually-hidden");
    expect(await hidden.textContent()).toBe("from device ");
    expect((await hidden.boundingBox())?.width ?? 0).toBeLessThanOrEqual(1);
    // Searching the tree finds the machine.
    await page.fill("#tree-search", "laptop-7q");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.getAttribute("data-searching") === "0");
    await expect(
      page.locator("#tree .tree-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id"))),
    ).resolves.toContain("u2");
    await openTree(page, "release");
    expect(await page.locator("#tree .device").allTextContents()).toEqual([
      `from device ${LAPTOP}`,
      "from device Desktop",
    ]);
    await page.screenshot({ path: join(docs, "library-merged-tree.png"), fullPage: false });

    await openTree(page, "solo");
    expect(await page.locator("#tree .tree-row").count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator("#tree .device").count()).toBe(0);
    await context.close();
  }, 120_000);

  it("without the script, the branch list names each tip's device (and a one-device session's does not)", async () => {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/sessions/merged`);
    const tips = page.locator("nav.branches li");
    expect(await tips.count()).toBe(2);
    // Tips newest first: the desktop's, then the laptop's.
    expect(await page.locator("nav.branches .device").allTextContents()).toEqual([
      `from device ${HOSTILE}`,
      `from device ${LAPTOP}`,
    ]);
    expect(await page.locator("nav.branches img").count()).toBe(0);
    await page.goto(`${server.url}/sessions/solo`);
    expect(await page.locator("nav.branches li").count()).toBe(2);
    expect(await page.locator("nav.branches .device").count()).toBe(0);
    await context.close();
  }, 120_000);

  it("the chip stays readable in dark mode on a phone, inside its row", async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      colorScheme: "dark",
      extraHTTPHeaders: { Authorization: `Bearer ${server.token}` },
    });
    const page = await context.newPage();
    await openTree(page, "merged");
    const chip = chipOf(page, "u4");
    await chip.waitFor();
    const {
      color,
      background,
      page: pageBackground,
    } = await chip.evaluate((el) => ({
      color: getComputedStyle(el).color,
      background: getComputedStyle(el).backgroundColor,
      page: getComputedStyle(document.body).backgroundColor,
    }));
    const luminance = (rgb: string) => {
      const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).map(Number);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    // Dark mode: a dark page, a dark chip, light text on it.
    expect(luminance(pageBackground)).toBeLessThan(60);
    expect(luminance(background)).toBeLessThan(80);
    expect(luminance(color) - luminance(background)).toBeGreaterThan(120);
    const row = await page.locator('#tree .tree-row[data-id="u4"]').boundingBox();
    const box = await chip.boundingBox();
    if (!row || !box) throw new Error("not drawn");
    expect(box.width).toBeGreaterThan(20);
    expect(box.x + box.width).toBeLessThanOrEqual(row.x + row.width + 1);
    // The preview keeps room beside it.
    const text = await page.locator('#tree .tree-row[data-id="u4"] .tree-text').boundingBox();
    expect(text?.width ?? 0).toBeGreaterThan(20);
    await context.close();
  }, 120_000);

  it("the share page of the same session shows no device names", async () => {
    const made = await api(server.token, "/v1/sessions/merged/shares", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(made.status).toBe(201);
    const { url } = (await made.json()) as { url: string };
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForSelector("body[data-tree-ready]", { timeout: 30_000 });
    expect(await page.locator("#tree .tree-row").count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator(".device").count()).toBe(0);
    const tree = await page.evaluate(() => fetch(`${document.body.dataset.base}/tree`).then((r) => r.text()));
    for (const text of [await page.content(), tree]) {
      expect(text).not.toContain(LAPTOP);
      expect(text).not.toContain("Desk <img");
      expect(text).not.toContain("Desk &lt;img");
      expect(text).not.toContain('"devices"');
    }
    expect(JSON.parse(tree)).not.toHaveProperty("devices");
    await context.close();
  }, 120_000);
});
