/**
 * Every oh-my-pi entry kind and message role, rho's loop notices and attachments, and images
 * kept as blobs: shown as such on the page and in the Markdown, session text escaped.
 */
import { describe, expect, it } from "vitest";
import { entriesMarkdown, type PageEntry, renderEntries } from "../src/index.js";

const HOSTILE = "<script>window.__xss=1</script>";
const hash = "a".repeat(64);
let n = 0;
const entry = (type: string, fields: Record<string, unknown>): PageEntry => {
  const id = `e${++n}`;
  return { id, type, timestamp: "2026-01-01T00:00:00.000Z", entry: { type, id, parentId: null, ...fields } };
};
const message = (message: Record<string, unknown>) => entry("message", { message });

const entries: PageEntry[] = [
  message({ role: "developer", content: [{ type: "text", text: `developer note ${HOSTILE}` }] }),
  message({
    role: "pythonExecution",
    code: "print(6 * 7)",
    output: "42",
    exitCode: 0,
    cancelled: false,
    truncated: false,
  }),
  message({ role: "hookMessage", customType: "my-hook", content: "hook said hi", display: true }),
  message({ role: "fileMention", files: [{ path: "src/app.ts", content: "export {}", lineCount: 1 }] }),
  entry("session_init", {
    systemPrompt: "You are a scout.",
    task: "find the bug",
    tools: ["read", "grep"],
    agent: "scout",
  }),
  entry("mode_change", { mode: "plan" }),
  entry("service_tier_change", { serviceTier: { openai: "flex" } }),
  entry("reset_boundary", {}),
  entry("ttsr_injection", { injectedRules: ["no-console"] }),
  entry("credential_pin", { provider: "anthropic", hash: "PINHASH0123456789" }),
  entry("title_change", { title: "Fix the CI", source: "user" }),
  entry("custom_message", { customType: "rho.notice", content: "compacted the context", display: true }),
  entry("custom_message", { customType: "operator.error", content: "the model timed out", display: true }),
  entry("custom_message", { customType: "rho.aside", content: "by the way", display: true }),
  message({
    role: "user",
    content: [
      { type: "text", text: "look at this" },
      {
        type: "text",
        text: '<attachment name="photo.jpg" type="image/jpeg" path="/sdcard/photo.jpg">\nA photo, 2.1 MB\n</attachment>',
      },
      { type: "image", mimeType: "image/png", data: `blob:sha256:${hash}` },
    ],
    attachments: [
      {
        kind: "image",
        name: "photo.jpg",
        path: "/sdcard/photo.jpg",
        mimeType: "image/jpeg",
        about: "2.1 MB, taken today",
      },
    ],
  }),
];

describe("omp's kinds and rho's notices on the page", () => {
  const html = renderEntries({ entries, labels: new Map(), blobs: "/s/TOKEN/blobs/" });

  it("shows each kind as such", () => {
    expect(html).toContain("Developer");
    expect(html).toContain("Python");
    expect(html).toMatch(/print[\s\S]*6[\s\S]*42/);
    expect(html).toContain("my-hook");
    expect(html).toContain("Files mentioned");
    expect(html).toContain("src/app.ts");
    expect(html).toContain("Session started as scout");
    expect(html).toContain("Mode → plan");
    expect(html).toContain("Service tier →");
    expect(html).toContain("/clear");
    expect(html).toContain("Rules injected: no-console");
    expect(html).toContain("Credential pinned for anthropic");
    expect(html).toContain("Renamed “Fix the CI”");
    expect(html).toMatch(/class="notice notice-notice"/);
    expect(html).toMatch(/class="notice notice-error"/);
    expect(html).toMatch(/class="notice notice-aside"/);
    expect(html).toContain('class="attachments"');
    expect(html).toContain("photo.jpg");
    expect(html).toContain("/sdcard/photo.jpg");
    expect(html).toContain(`src="/s/TOKEN/blobs/${hash}"`);
  });

  it("escapes session text and never shows a credential pin's hash", () => {
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toContain("PINHASH");
  });

  it("names a blob image without a place to load it from", () => {
    const plain = renderEntries({ entries: entries.slice(-1), labels: new Map() });
    expect(plain).toContain("[image not shown: image/png]");
  });
});

describe("omp's kinds and rho's notices in the Markdown", () => {
  const md = entriesMarkdown(entries, "https://pisync.example/s/TOKEN/blobs/");

  it("writes each kind as such", () => {
    for (const text of [
      "## Developer",
      "## Python",
      "print(6 * 7)",
      "## ` my-hook `",
      "## Files mentioned",
      "## Session started as ` scout `",
      "_Mode: ` plan `_",
      "_/clear",
      "_Rules injected: ` no-console `_",
      "_Credential pinned for ` anthropic ` (hidden)_",
      "_Renamed: ` Fix the CI `_",
      "**Notice:**\n\n```markdown\ncompacted the context\n```",
      "**Error:**\n\n```markdown\nthe model timed out\n```",
      "**Aside:**\n\n```markdown\nby the way\n```",
      "**Attachments**",
      "photo.jpg",
      `![image](https://pisync.example/s/TOKEN/blobs/${hash})`,
    ]) {
      expect(md, text).toContain(text);
    }
    expect(md).not.toContain("PINHASH");
  });
});
