/**
 * The share page in a real browser (Debian's chromium, driven by playwright-core): open a
 * share, expand a tool call, switch branch, see a live update arrive; screenshots at phone
 * and desktop widths go to docs/. And a corpus of XSS payloads in every field of a session
 * executes nothing.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@pisync/testing/servers";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const docs = new URL("../../../docs/", import.meta.url).pathname;
const line = (entry: Record<string, unknown>) => `${JSON.stringify(entry)}\n`;
const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();
const usage = {
  input: 1200,
  output: 300,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 1500,
  cost: { input: 0.0036, output: 0.0045, cacheRead: 0, cacheWrite: 0, total: 0.0081 },
};
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

function assistant(id: string, parentId: string, s: number, content: unknown[], model = "claude-sonnet-4-5") {
  return line({
    type: "message",
    id,
    parentId,
    timestamp: ts(s),
    message: {
      role: "assistant",
      content,
      api: "anthropic-messages",
      provider: "anthropic",
      model,
      usage,
      stopReason: "toolUse",
      timestamp: s,
    },
  });
}

function demoSession(id: string) {
  return (
    line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/home/dev/webapp" }) +
    line({ type: "session_info", id: "n0", parentId: null, timestamp: ts(1), name: "Fix the flaky login test" }) +
    line({
      type: "message",
      id: "u1",
      parentId: "n0",
      timestamp: ts(2),
      message: {
        role: "user",
        content: "The **login test** fails one run in ten. Can you find out why?",
        timestamp: 2,
      },
    }) +
    assistant("a1", "u1", 3, [
      { type: "thinking", thinking: "The test probably races the session cookie. Let me read it first." },
      { type: "text", text: "Let me look at the test first." },
      { type: "toolCall", id: "call_1", name: "read", arguments: { path: "test/login.test.ts" } },
    ]) +
    line({
      type: "message",
      id: "t1",
      parentId: "a1",
      timestamp: ts(4),
      message: {
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "read",
        content: [
          {
            type: "text",
            text: "it('logs in', async () => {\n  await page.click('#login');\n  expect(await cookie()).toBeDefined();\n});",
          },
        ],
        isError: false,
        timestamp: 4,
      },
    }) +
    assistant("a2", "t1", 5, [
      {
        type: "text",
        text: "The test reads the cookie before the redirect finishes:\n\n```ts\nawait page.click('#login');\nawait page.waitForURL('/home');\nexpect(await cookie()).toBeDefined();\n```\n\nWaiting for the URL fixes the race.",
      },
    ]) +
    line({
      type: "message",
      id: "b1",
      parentId: "t1",
      timestamp: ts(6),
      message: { role: "user", content: "Another idea: add a retry instead?", timestamp: 6 },
    }) +
    line({
      type: "message",
      id: "u2",
      parentId: "a2",
      timestamp: ts(7),
      message: {
        role: "user",
        content: [
          { type: "text", text: "Here is the screenshot of the failure." },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
        timestamp: 7,
      },
    }) +
    line({
      type: "message",
      id: "x1",
      parentId: "u2",
      timestamp: ts(8),
      message: {
        role: "bashExecution",
        command: "npm test -- login",
        output: "✓ logs in (312 ms)\n1 passed",
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: 8,
      },
    })
  );
}

const XSS = [
  "<script>window.__xss=1</script>",
  '<img src=x onerror="window.__xss=1">',
  '"><svg onload=window.__xss=1>',
  "javascript:window.__xss=1",
  "[click me](javascript:window.__xss=1)",
  '<iframe src="javascript:window.__xss=1"></iframe>',
  "' onmouseover='window.__xss=1' x='",
  "</title><script>window.__xss=1</script>",
  '<a href="data:text/html,<script>window.__xss=1</script>">x</a>',
  '![x](x" onerror="window.__xss=1)',
  "```html\n</code></pre><script>window.__xss=1</script>\n```",
  "<style>body{background:url(javascript:window.__xss=1)}</style>",
];

/** A session with a payload in every field a person or the page reads. */
function hostileSession(id: string) {
  const x = (i: number) => XSS[i % XSS.length];
  const svg = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__xss=1"><script>window.__xss=1</script></svg>',
  ).toString("base64");
  let out = line({ type: "session", version: 3, id, timestamp: ts(0), cwd: `/tmp/${x(0)}` });
  out += line({ type: "session_info", id: "s0", parentId: null, timestamp: ts(1), name: x(7) });
  out += line({ type: "model_change", id: "m0", parentId: "s0", timestamp: ts(2), provider: x(1), modelId: x(2) });
  let parent = "m0";
  XSS.forEach((payload, i) => {
    const n = `h${i}`;
    out += line({
      type: "message",
      id: `${n}u`,
      parentId: parent,
      timestamp: ts(3 + i),
      message: { role: "user", content: payload, timestamp: i },
    });
    out += assistant(
      `${n}a`,
      `${n}u`,
      3 + i,
      [
        { type: "thinking", thinking: payload },
        { type: "text", text: payload },
        { type: "toolCall", id: `c${i}`, name: payload, arguments: { command: payload } },
        { type: "image", data: svg, mimeType: "image/svg+xml" },
      ],
      payload,
    );
    out += line({
      type: "message",
      id: `${n}t`,
      parentId: `${n}a`,
      timestamp: ts(3 + i),
      message: {
        role: "toolResult",
        toolCallId: `c${i}`,
        toolName: payload,
        content: [
          { type: "text", text: payload },
          { type: "image", data: PNG, mimeType: payload },
        ],
        isError: false,
        timestamp: i,
      },
    });
    out += line({
      type: "custom_message",
      id: `${n}c`,
      parentId: `${n}t`,
      timestamp: ts(3 + i),
      customType: payload,
      content: payload,
      display: true,
    });
    out += line({
      type: "label",
      id: `${n}l`,
      parentId: `${n}c`,
      timestamp: ts(3 + i),
      targetId: `${n}u`,
      label: payload,
    });
    out += line({
      type: "message",
      id: `${n}b`,
      parentId: `${n}l`,
      timestamp: ts(3 + i),
      message: {
        role: "bashExecution",
        command: payload,
        output: payload,
        exitCode: 1,
        cancelled: false,
        truncated: false,
        timestamp: i,
      },
    });
    out += line({
      type: "branch_summary",
      id: `${n}s`,
      parentId: `${n}b`,
      timestamp: ts(3 + i),
      fromId: "x",
      summary: payload,
    });
    parent = `${n}s`;
  });
  // An entry id that tries to break out of its attribute.
  out += line({
    type: "message",
    id: `"><script>window.__xss=1</script>`,
    parentId: parent,
    timestamp: ts(40),
    message: { role: "user", content: "last", timestamp: 40 },
  });
  return out;
}

describe("the share page in a browser", () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  let dir: string;

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}`, ...(init.headers ?? {}) },
    });

  async function upload(id: string, body: string) {
    const r = await api(`/v1/sessions/${id}`, { method: "PATCH", headers: { "Upload-Offset": "0" }, body });
    expect(r.status, await r.clone().text()).toBe(200);
  }

  async function share(id: string, body: Record<string, unknown> = {}) {
    const r = await api(`/v1/sessions/${id}/shares`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    return ((await r.json()) as { url: string }).url;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-browser-"));
    server = await startNodeServer({ port: await freePort(), host: "127.0.0.1", dataDir: dir, log: () => {} });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("opens a share, expands a tool call, switches branch, and sees a live update arrive", async () => {
    await upload("demo", demoSession("demo"));
    const url = await share("demo");
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    await expect(page.locator("h1").textContent()).resolves.toContain("Fix the flaky login test");
    const toolCall = page.locator("details.tool-call").first();
    expect(await toolCall.getAttribute("open")).toBeNull();
    await toolCall.locator("summary").click();
    expect(await toolCall.getAttribute("open")).not.toBeNull();
    await expect(page.locator("img.shot").count()).resolves.toBe(1);
    mkdirSync(docs, { recursive: true });
    await page.screenshot({ path: join(docs, "share-desktop.png"), fullPage: true });

    // Live: a new line arrives while the page is open.
    const length = Number((await api("/v1/sessions/demo", { method: "HEAD" })).headers.get("Upload-Offset"));
    const next = line({
      type: "message",
      id: "u3",
      parentId: "x1",
      timestamp: ts(9),
      message: { role: "user", content: "Great, it passes now. Thanks!", timestamp: 9 },
    });
    expect(
      (await api("/v1/sessions/demo", { method: "PATCH", headers: { "Upload-Offset": String(length) }, body: next }))
        .status,
    ).toBe(200);
    await page.waitForSelector("#e-u3", { timeout: 15_000 });

    // Another branch, from the switcher.
    await page.locator("nav.branches summary").click();
    await page.locator("nav.branches a", { hasText: "retry instead" }).click();
    await page.waitForSelector("#e-b1");
    expect(await page.locator("#e-u2").count()).toBe(0);
    await page.close();

    const phone = await browser.newPage({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
    });
    await phone.goto(url);
    await phone.screenshot({ path: join(docs, "share-phone.png"), fullPage: false });
    await phone.close();
  }, 90_000);

  it("executes none of the XSS payloads placed in every field", async () => {
    await upload("hostile", hostileSession("hostile"));
    const url = await share("hostile", { maskSecrets: false });
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(url);
    // Open every collapsed block and hover everything, then look for any sign of execution.
    for (const summary of await page.locator("summary").all()) await summary.click();
    for (const node of (await page.locator("main *").all()).slice(0, 400))
      await node.hover({ force: true, timeout: 1000 }).catch(() => {});
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);
    // Only our own script is on the page; no injected element carries a handler or a javascript: URL.
    expect(await page.locator("script").count()).toBe(1);
    expect(await page.locator("iframe, object, embed, svg, style").count()).toBe(0);
    const handlers = await page.evaluate(
      () =>
        Array.from(document.querySelectorAll("*")).filter((el) =>
          Array.from(el.attributes).some((a) => a.name.startsWith("on") || /^\s*javascript:/i.test(a.value)),
        ).length,
    );
    expect(handlers).toBe(0);
    // Images are raster data: URLs only (the SVG ones are not shown).
    const sources = await page.locator("img").evaluateAll((imgs) => imgs.map((i) => i.getAttribute("src") ?? ""));
    for (const src of sources) expect(src).toMatch(/^data:image\/(png|jpeg|gif|webp);base64,/);
    // The page text still shows the payloads, as text.
    expect(await page.locator("main").textContent()).toContain("<script>window.__xss=1</script>");
    await page.close();
  }, 90_000);
});
