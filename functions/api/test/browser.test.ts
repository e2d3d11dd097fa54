/**
 * The share page in a real browser (Debian's chromium, driven by playwright-core): open a
 * share, expand a tool call, switch branch, see a live update arrive; screenshots at phone
 * and desktop widths go to docs/. And a corpus of XSS payloads in every field of a session
 * executes nothing.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { line } from "@pisync/testing";
import { TOOL_XSS, xssPairs } from "@pisync/testing/hostile";
import { freePort } from "@pisync/testing/servers";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const docs = new URL("../../../docs/", import.meta.url).pathname;
/** A timestamp `s` seconds after 09:00 on 2026-01-01 (the screenshots show a morning's work). */
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

const user = (id: string, parentId: string | null, s: number, content: string) =>
  line({ type: "message", id, parentId, timestamp: ts(s), message: { role: "user", content, timestamp: s } });
const toolResult = (id: string, parentId: string, s: number, callId: string, toolName: string, text: string) =>
  line({
    type: "message",
    id,
    parentId,
    timestamp: ts(s),
    message: {
      role: "toolResult",
      toolCallId: callId,
      toolName,
      content: [{ type: "text", text }],
      isError: false,
      timestamp: s,
    },
  });

/** A pi 1.x session with a system prompt, an edit, two branches, a label and a context edit. */
function treeSession(id: string) {
  return (
    line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/home/dev/api" }) +
    line({
      type: "message",
      id: "s1",
      parentId: null,
      timestamp: ts(1),
      message: {
        role: "system",
        content: "You are pi, a coding agent. Be brief.",
        toolsAdded: [
          { name: "read", description: "Read a file", parameters: {} },
          { name: "edit", description: "Edit a file", parameters: {} },
        ],
        timestamp: 1,
      },
    }) +
    user("u1", "s1", 2, "Rename the port variable in server.ts") +
    assistant("a1", "u1", 3, [
      { type: "thinking", thinking: "A one-line change in server.ts." },
      {
        type: "toolCall",
        id: "call_e",
        name: "edit",
        arguments: { path: "src/server.ts", oldText: "const p = 8080;", newText: "const port = 8080;" },
      },
    ]) +
    toolResult("t1", "a1", 4, "call_e", "edit", "Successfully replaced text in src/server.ts.") +
    assistant("a2", "t1", 5, [{ type: "text", text: "Renamed `p` to `port`." }]) +
    user("u2", "a2", 6, "Now add a health check route") +
    assistant("a3", "u2", 7, [{ type: "text", text: "Added `GET /health`." }]) +
    user("v2", "a2", 8, "Actually, revert the rename instead") +
    assistant("v3", "v2", 9, [{ type: "text", text: "Reverted." }]) +
    line({ type: "label", id: "l1", parentId: "v3", timestamp: ts(10), targetId: "u1", label: "start here" }) +
    line({ type: "context_edit", id: "ce1", parentId: "l1", timestamp: ts(11), targetId: "t1", replacement: null }) +
    user("v4", "ce1", 12, "Thanks, that is all")
  );
}

/** A chain of `count` user messages (m0 … m<count-1>). */
function longSession(id: string, count: number) {
  let out = line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/w" });
  for (let i = 0; i < count; i++) out += user(`m${i}`, i ? `m${i - 1}` : null, 1, `message number ${i}`);
  return out;
}

/** `count` entries in a tree that branches every 50 entries (a long agent session, retried often). */
function bigTree(id: string, count: number) {
  let out = line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/w" });
  for (let i = 0; i < count; i++) {
    const parent = i === 0 ? null : i % 50 === 0 ? `n${i - 25}` : `n${i - 1}`;
    out += user(`n${i}`, parent, 1, `step ${i} of the big task`);
  }
  return out;
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
  // Tool calls of every kind (read, write, edit, bash, grep, find, ls, an unknown tool) with a
  // payload in every field a tool block shows, each call followed by its result.
  TOOL_XSS.forEach((payload, i) => {
    const pairs = xssPairs(payload).map(({ call, result }, j) => {
      const id = call?.id ?? `x${i}-${j}`;
      return { call: call && { ...call, type: "toolCall", id }, result: result && { ...result, toolCallId: id } };
    });
    const calls = pairs.flatMap(({ call }) => (call ? [call] : []));
    out += assistant(`x${i}a`, parent, 50 + i, calls);
    parent = `x${i}a`;
    pairs.forEach(({ result }, j) => {
      if (!result) return;
      out += line({ type: "message", id: `x${i}r${j}`, parentId: parent, timestamp: ts(50 + i), message: result });
      parent = `x${i}r${j}`;
    });
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
    // A tool call and its result are one block: the path, then the excerpt (short: shown whole).
    const toolCall = page.locator('.tool[data-tool="read"]').first();
    await expect(toolCall.locator(".tool-path").first().textContent()).resolves.toContain("test/login.test.ts");
    await expect(toolCall.locator(".output").first().isVisible()).resolves.toBe(true);
    // `O` hides tool output and shows it again.
    await page.keyboard.press("o");
    await expect(toolCall.locator(".output").first().isVisible()).resolves.toBe(false);
    await page.keyboard.press("o");
    await expect(toolCall.locator(".output").first().isVisible()).resolves.toBe(true);
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

  /** Rows the tree navigator shows now (it draws only those in view: read its status line). */
  const shownRows = async (page: import("playwright-core").Page) =>
    Number(((await page.locator(".tree-status").textContent()) ?? "").split(" of ")[0].replace(/,/g, ""));

  it("the tree: filters, search, and a match opens its branch; pi 1.x system prompt and context edit", async () => {
    await upload("tree", treeSession("tree"));
    const url = await share("tree");
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await page.waitForSelector("body[data-tree-ready]");
    // 12 entries: the system prompt, 4 user, 4 assistant (one only calls a tool), 1 tool result, 1 label, 1 context edit.
    const counts: Record<string, number> = {};
    for (const filter of ["default", "no-tools", "user", "labeled", "all"]) {
      await page.click(`.tree-filters button[data-filter="${filter}"]`);
      counts[filter] = await shownRows(page);
    }
    expect(counts).toEqual({ default: 11, "no-tools": 9, user: 4, labeled: 1, all: 12 });
    await page.click('.tree-filters button[data-filter="labeled"]');
    await expect(page.locator(".tree-row .label").first().textContent()).resolves.toBe("start here");
    // pi's connectors where the tree branches; the shown branch is highlighted.
    await page.click('.tree-filters button[data-filter="all"]');
    const prefixes = await page.locator(".tree-prefix").allTextContents();
    expect(prefixes.some((p) => p.includes("├─"))).toBe(true);
    expect(prefixes.some((p) => p.includes("└─"))).toBe(true);
    expect(await page.locator(".tree-row.current").getAttribute("data-id")).toBe("v4");
    expect(await page.locator('.tree-row.on-path[data-id="u2"]').count()).toBe(0);
    // The system prompt and its tools, collapsed; the context edit marks the entry it removes.
    await expect(page.locator("details.system summary").textContent()).resolves.toContain("2 tools: read, edit");
    expect(await page.locator("details.system").getAttribute("open")).toBeNull();
    await expect(page.locator("#e-ce1").textContent()).resolves.toContain("removed from what the model sees");
    expect(await page.locator("#e-a1 .edited, #e-t1 .edited").count()).toBeGreaterThan(0);
    // A tool result shown with its call has no card of its own: its anchor and marks are on the block.
    expect(await page.locator("#e-t1.paired-result .tool").count()).toBe(1);
    expect(await page.locator("#e-t1.paired-result .edited").count()).toBe(1);
    expect(await page.locator("main").textContent()).not.toContain("The result of the tool call above");
    // The edit call is one block (with its result): the path and a diff of removed and added lines.
    const edit = page.locator('.tool[data-tool="edit"]').first();
    await expect(edit.locator(".tool-path").first().textContent()).resolves.toContain("src/server.ts");
    expect(await edit.locator(".dl.del").count()).toBeGreaterThan(0);
    expect(await edit.locator(".dl.add").count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(docs, "share-tree-desktop.png"), fullPage: false });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(docs, "share-tree-desktop-dark.png"), fullPage: false });
    await page.emulateMedia({ colorScheme: "light" });
    // Search, then open the match: its branch is shown.
    await page.fill("#tree-search", "health check");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.textContent?.startsWith("1 of"));
    await page.locator(".tree-row").first().click();
    await page.waitForURL(/leaf=u2/);
    await page.waitForSelector("#e-u2");
    expect(await page.locator("#e-v2").count()).toBe(0);
    // A link to that tool result (pi's #<id> form) lands on the block it is shown in.
    await page.goto(`${url}?leaf=v4#t1`);
    await page.waitForSelector("#e-t1.paired-result.target");
    const block = await page.locator("#e-t1").boundingBox();
    expect(block && block.y >= -2 && block.y < 900).toBe(true);
    await page.close();
  }, 90_000);

  it("permalinks open the window holding an entry; earlier and later windows load in place", async () => {
    await upload("long", longSession("long", 400));
    const url = await share("long");
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // pi's own parameters: leafId and targetId.
    await page.goto(`${url}?leafId=m399&targetId=m100#e-m100`);
    await page.waitForSelector("#e-m100.target");
    const box = await page.locator("#e-m100").boundingBox();
    expect(box && box.y >= -2 && box.y < 800).toBe(true);
    expect(await page.locator("#e-m399").count()).toBe(0);
    // Earlier entries arrive above without moving what the reader looks at.
    const before = (await page.locator("#e-m100").boundingBox())?.y ?? 0;
    // (a dispatched click: a pointer click would first scroll the link into view)
    await page.locator(".more.earlier a").dispatchEvent("click");
    await page.waitForSelector("#e-m0");
    const after = (await page.locator("#e-m100").boundingBox())?.y ?? 0;
    expect(Math.abs(after - before)).toBeLessThan(3);
    expect(await page.locator(".more.earlier").count()).toBe(0);
    // And later ones below, until the end of the branch.
    while ((await page.locator(".more.later a").count()) > 0) {
      const n = await page.locator("#entries .entry").count();
      await page.locator(".more.later a").click();
      await page.waitForFunction((count) => document.querySelectorAll("#entries .entry").length > count, n);
    }
    expect(await page.locator("#entries .entry").count()).toBe(400);
    // An old-style link without the prefix, to an entry outside the first window.
    await page.goto(`${url}#m10`);
    await page.waitForSelector("#e-m10.target");
    expect(page.url()).toContain("targetId=m10");
    // The copy-link control gives a link that opens the same place.
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.locator("#e-m10 .permalink").click();
    expect(page.url()).toContain("targetId=m10#e-m10");
    await page.close();
  }, 90_000);

  it("keys: T thinking, O tool output, / search, j/k user messages; phone layout; light and dark", async () => {
    await upload("keys", treeSession("keys"));
    const url = await share("keys");
    const page = await browser.newPage({ viewport: { width: 1280, height: 700 } });
    await page.goto(url);
    await page.waitForSelector("body[data-tree-ready]");
    expect(await page.locator("details.thinking[open]").count()).toBe(0);
    await page.keyboard.press("t");
    expect(await page.locator("details.thinking[open]").count()).toBe(await page.locator("details.thinking").count());
    await page.keyboard.press("t");
    expect(await page.locator("details.thinking[open]").count()).toBe(0);
    const outputShown = () => page.locator(".tool .output").first().isVisible();
    await expect(outputShown()).resolves.toBe(true);
    await page.keyboard.press("o");
    await expect(outputShown()).resolves.toBe(false);
    await page.keyboard.press("o");
    await expect(outputShown()).resolves.toBe(true);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.keyboard.press("j");
    expect(await page.locator(".entry.focused").getAttribute("data-id")).toBe("u1");
    await page.keyboard.press("j");
    expect(await page.locator(".entry.focused").getAttribute("data-id")).toBe("v2");
    await page.keyboard.press("k");
    expect(await page.locator(".entry.focused").getAttribute("data-id")).toBe("u1");
    await page.keyboard.press("/");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("tree-search");
    await page.close();

    for (const scheme of ["light", "dark"] as const) {
      const phone = await browser.newPage({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        colorScheme: scheme,
      });
      await phone.goto(url);
      await phone.waitForSelector("body[data-tree-ready]");
      // The tree folds away on a phone; nothing is wider than the screen.
      expect(await phone.locator("details.tree-fold").getAttribute("open")).toBeNull();
      expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await phone.screenshot({ path: join(docs, `share-phone-${scheme}.png`), fullPage: false });
      await phone.locator("details.tree-fold summary").click();
      await phone.screenshot({ path: join(docs, `share-phone-tree-${scheme}.png`), fullPage: false });
      await phone.close();
    }
  }, 90_000);

  it("a tree of 20,000 entries is interactive (time reported, not asserted)", async () => {
    await upload("big", bigTree("big", 20_000));
    const url = await share("big", { maskSecrets: false });
    /** A reader opens the link in a new page: when its tree was asked for, arrived and was ready (Performance API). */
    const visit = async () => {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(url);
      await page.waitForSelector("body[data-tree-ready]", { timeout: 30_000 });
      const figures = await page.evaluate(() => {
        const trees = performance
          .getEntriesByType("resource")
          .filter((e) => new URL(e.name).pathname.endsWith("/tree")) as PerformanceResourceTiming[];
        const navigation = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        return {
          trees: trees.map((e) => ({ start: Math.round(e.startTime), end: Math.round(e.responseEnd) })),
          parsed: Math.round(navigation.domInteractive),
          loaded: Number(document.body.dataset.treeLoaded),
          ready: Number(document.body.dataset.treeReady),
        };
      });
      // The tree is asked for once, while the page still parses (the script takes the preloaded answer).
      expect(figures.trees).toHaveLength(1);
      const { trees, parsed, loaded, ready } = figures;
      const said = `interactive ${ready} ms after navigation start (page parsed at ${parsed} ms; the tree requested at ${trees[0].start} ms, received by ${trees[0].end} ms, parsed by ${loaded} ms, drawn in ${ready - loaded} ms)`;
      return { page, said };
    };
    // The first reader's visit builds the session's index and tree on the server; the next reader's finds them made.
    const first = await visit();
    await first.page.close();
    const { page, said } = await visit();
    expect(await shownRows(page)).toBe(20_000);
    // Only the rows in view exist.
    expect(await page.locator(".tree-row").count()).toBeLessThan(200);
    const t0 = await page.evaluate(() => performance.now());
    await page.fill("#tree-search", "step 19999 ");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.textContent?.startsWith("1 of"));
    const searched = (await page.evaluate(() => performance.now())) - t0;
    await page.locator(".tree-row").first().click();
    await page.waitForSelector("#e-n19999");
    console.log(
      `20,000-entry tree, first reader: ${first.said}; next reader: ${said}; a search answered in ${Math.round(searched)} ms`,
    );
    await page.close();
  }, 120_000);

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
    await page.waitForSelector("body[data-tree-ready]");
    // Load every earlier window, so that every entry of the path is on the page.
    const earlier = page.locator(".more.earlier a");
    while ((await earlier.count()) > 0) {
      const before = await earlier.getAttribute("data-before");
      await earlier.click();
      await page.waitForFunction((b) => document.querySelector(`.more.earlier a[data-before="${b}"]`) === null, before);
    }
    // Every kind of tool block is there, with the payloads of its fields.
    const kinds = await page.locator(".tool").evaluateAll((blocks) => blocks.map((b) => b.getAttribute("data-tool")));
    const builtIn = ["read", "write", "edit", "bash", "grep", "find", "ls"];
    for (const kind of builtIn) expect(kinds).toContain(kind);
    expect(kinds.some((kind) => !builtIn.includes(kind ?? ""))).toBe(true);
    const shown = (await page.locator("main").textContent()) ?? "";
    for (const payload of TOOL_XSS) expect(shown).toContain(`${payload}.js`);
    // The tree shows the payloads (previews, labels) as text, in every filter and in search.
    for (const filter of ["all", "labeled", "user", "no-tools", "default"]) {
      await page.click(`.tree-filters button[data-filter="${filter}"]`);
      for (const row of (await page.locator(".tree-row").all()).slice(0, 40))
        await row.hover({ force: true, timeout: 1000 }).catch(() => {});
    }
    await page.fill("#tree-search", "<script>");
    await page.waitForFunction(() => document.querySelector(".tree-status")?.textContent?.endsWith("match"));
    expect(await page.locator(".tree-row").first().textContent()).toContain("<script>");
    await page.fill("#tree-search", "");
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
