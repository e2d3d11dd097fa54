/**
 * Every kind of tool block on one page, in real Chromium (Debian's, driven by playwright-core):
 * the hostile blocks execute nothing, a collapsed diff opens without JavaScript, and the blocks
 * fit a phone's width. Set TOOLS_PREVIEW_DIR to keep the page and light/dark screenshots there.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { TOOL_XSS, xssPairs } from "@pisync/testing/hostile";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { escapeHtml, renderBashExecution, renderToolBlock, STYLE_CSS, TOOLS_CSS } from "../src/index.js";
import type { ToolCallPart, ToolResultMessage } from "../src/tools/index.js";
import recorded from "./tools-recorded.json" with { type: "json" };

const keep = process.env.TOOLS_PREVIEW_DIR;
const dir = keep ?? mkdtempSync(join(tmpdir(), "pisync-tools-preview-"));

/** The preview page: a section per pi version's recorded blocks, then made-up and hostile ones. */
function previewPage(): string {
  const sections: string[] = [];
  for (const [version, calls] of Object.entries(
    recorded as Record<string, { call: ToolCallPart; result: ToolResultMessage }[]>,
  )) {
    sections.push(
      `<h2>pi ${escapeHtml(version)}</h2>`,
      ...calls.map(({ call, result }) => renderToolBlock(call, result)),
    );
  }
  const long = Array.from({ length: 120 }, (_, i) => `  const v${i} = compute(${i}); // step ${i}`).join("\n");
  sections.push(
    "<h2>More shapes</h2>",
    renderToolBlock(
      {
        name: "edit",
        arguments: { path: "src/long.ts", oldText: long, newText: long.replace(/step (\d)/g, "phase $1") },
      },
      {
        role: "toolResult",
        toolName: "edit",
        content: [{ type: "text", text: "Successfully replaced text in src/long.ts." }],
        isError: false,
      },
    ),
    renderToolBlock(
      { name: "grep", arguments: { pattern: "TODO", path: "src", context: 1 } },
      {
        role: "toolResult",
        toolName: "grep",
        content: [
          {
            type: "text",
            text: "src/a.ts-11- function a() {\nsrc/a.ts:12:   // TODO: cache\nsrc/a.ts-13- }\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]",
          },
        ],
      },
    ),
    renderToolBlock(
      { name: "find", arguments: { pattern: "*.ts" } },
      {
        role: "toolResult",
        toolName: "find",
        content: [{ type: "text", text: Array.from({ length: 40 }, (_, i) => `src/file-${i}.ts`).join("\n") }],
      },
    ),
    renderToolBlock(
      { name: "web_search", arguments: { query: "pi session format", limit: 3 } },
      {
        role: "toolResult",
        toolName: "web_search",
        content: [{ type: "text", text: "1. docs/session-format.md" }],
        durationMs: 1234,
      },
    ),
    renderToolBlock({ name: "bash", arguments: { command: "npm test" } }, undefined),
    renderBashExecution({
      role: "bashExecution",
      command: "git status --short",
      output: " M src/app.ts\n",
      exitCode: 0,
      cancelled: false,
      truncated: false,
    }),
    renderBashExecution({
      role: "bashExecution",
      command: "make deploy",
      output: "deploying…\n",
      exitCode: undefined,
      cancelled: true,
      truncated: false,
      excludeFromContext: true,
    }),
    "<h2>Hostile</h2>",
    ...TOOL_XSS.flatMap((x) => xssPairs(x).map(({ call, result }) => renderToolBlock(call, result))),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Tool blocks</title><style>${STYLE_CSS}${TOOLS_CSS}</style></head><body>${sections.join("\n")}</body></html>`;
}

describe("tool blocks in Chromium", () => {
  let browser: Browser;
  const file = join(dir, "tools-preview.html");

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, previewPage());
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  });

  it("executes none of the hostile blocks' payloads; a long diff opens without script; light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const page = await browser.newPage({
        colorScheme,
        viewport: { width: 1100, height: 900 },
        javaScriptEnabled: true,
      });
      const dialogs: string[] = [];
      page.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await page.goto(pathToFileURL(file).href);
      await page.waitForLoadState("load");
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
      expect(dialogs).toEqual([]);
      expect(await page.locator("script, iframe, svg, math, [onerror], [onload]").count()).toBe(0);
      const diff = page.locator('.tool[data-tool="edit"] details').first();
      expect(await diff.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      await diff.locator("summary").click();
      expect(await diff.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      expect(await diff.locator(".dl.add").first().isVisible()).toBe(true);
      if (keep) await page.screenshot({ path: join(dir, `tools-${colorScheme}.png`), fullPage: true });
      await page.close();
    }
  });

  it("fits a phone's width: long lines scroll inside their block, not the page", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(pathToFileURL(file).href);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    if (keep) await page.screenshot({ path: join(dir, "tools-phone.png"), fullPage: false });
    await page.close();
  });
});
