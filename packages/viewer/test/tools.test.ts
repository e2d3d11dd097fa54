/**
 * Tool blocks rendered from what pi 0.73.1 and pi 1.6.0 really store (tools-recorded.json, made
 * by running their built-in tools), from the format fixtures' sessions, and from hostile input.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inRepoCorpus } from "@pisync/testing/fixtures";
import { oddPairs, TOOL_XSS, xssPairs } from "@pisync/testing/hostile";
import { describe, expect, it } from "vitest";
import { PAGE_BUDGET_CHARS, renderBashExecution, renderToolBlock, TOOLS_CSS, withBudget } from "../src/index.js";
import type { ToolCallPart, ToolResultMessage } from "../src/tools/index.js";
import { byClass, elements, elementText, textOf, unsafeParts } from "./tools-html.js";
import recorded from "./tools-recorded.json" with { type: "json" };

/** The text of a stored result's first part. */
const resultText = (result: ToolResultMessage | undefined) =>
  String(((result?.content ?? []) as { text?: string }[])[0]?.text);

interface Recorded {
  call: ToolCallPart & { name: string; arguments: Record<string, unknown> };
  result: ToolResultMessage;
}
const VERSIONS = Object.entries(recorded as unknown as Record<string, Recorded[]>);

/** The recorded pair of a version whose call matches. */
function pair(calls: Recorded[], name: string, match: (args: Record<string, unknown>) => boolean): Recorded {
  const found = calls.find((c) => c.call.name === name && match(c.call.arguments));
  if (!found) throw new Error(`no recorded ${name} call matches`);
  return found;
}

type Element = ReturnType<typeof elements>[number];

/** The child elements of an element that have a class. */
const childrenWith = (el: Element, cls: string) =>
  el.childNodes.filter(
    (c): c is Element => "tagName" in c && c.attrs.some((a) => a.name === "class" && a.value.split(" ").includes(cls)),
  );

/** Each code line of a diff as shown: its kind, old number and new number. */
function numbered(html: string): [string, string, string][] {
  return elements(html)
    .filter((el) => el.attrs.some((a) => a.name === "class" && /^dl (add|del|ctx)$/.test(a.value)))
    .map((el) => {
      const [oldNo, newNo] = childrenWith(el, "ln").map(elementText);
      return [el.attrs[0].value.slice(3), oldNo, newNo];
    });
}

describe.each(VERSIONS)("blocks from what pi %s stores", (_version, calls) => {
  it("edit: the stored diff with old and new line numbers, highlighted in the file's language", () => {
    const { call, result } = pair(calls, "edit", (a) => JSON.stringify(a).includes("the sum"));
    const html = renderToolBlock(call, result);
    expect(unsafeParts(html)).toEqual([]);
    expect(html).toContain('data-tool="edit"');
    expect(textOf(html)).toContain("src/app.ts");
    expect(byClass(html, "failed")).toHaveLength(0);
    // Both pi's display diff (0.73.1) and 1.x's unified patch give the same numbered lines.
    const lines = numbered(html);
    expect(lines.filter(([k]) => k === "add").map(([, , n]) => n)).toEqual(["2", "7"]);
    expect(lines.filter(([k]) => k === "del").map(([, o]) => o)).toEqual(["6"]);
    expect(lines.find(([k, o]) => k === "ctx" && o === "7")?.[2]).toBe("8");
    expect(byClass(html, "hljs-keyword").length).toBeGreaterThan(0);
    expect(textOf(html)).toContain("+2 −1");
    // The success sentence repeats the diff: not shown.
    expect(textOf(html)).not.toContain("Successfully replaced");
  });

  it("edit whose patch is empty: the stored display diff is shown, not +0 −0", () => {
    const { call, result } = pair(calls, "edit", (a) => JSON.stringify(a).includes("the sum"));
    const details = result.details as Record<string, unknown>;
    const display = typeof details.diff === "string" ? details.diff : undefined;
    // pi 0.73.1 stores only the display diff; 1.x both: each is tried with an empty patch beside it.
    const diff = display ?? "-1 old line\n+1 new line";
    const html = renderToolBlock(call, { ...result, details: { ...details, patch: "", diff } });
    expect(textOf(html)).not.toContain("+0 −0");
    expect(numbered(html).filter(([k]) => k === "add").length).toBeGreaterThan(0);
  });

  it("edit that failed: marked, the change asked for shown as not applied, and the error", () => {
    const { call, result } = pair(calls, "edit", (a) => JSON.stringify(a).includes("not in the file"));
    const html = renderToolBlock(call, result);
    expect(unsafeParts(html)).toEqual([]);
    expect(byClass(html, "tool")[0].attrs.find((a) => a.name === "class")?.value).toBe("tool failed");
    expect(textOf(html)).toContain("not applied");
    expect(byClass(html, "del").map(elementText).join("")).toContain("not in the file");
    expect(textOf(html)).toContain("Could not find the exact text");
  });

  it("write: the path, size and content, highlighted by its extension", () => {
    const { call, result } = pair(calls, "write", () => true);
    const html = renderToolBlock(call, result);
    expect(unsafeParts(html)).toEqual([]);
    expect(textOf(html)).toContain("src/hello.py");
    expect(textOf(html)).toContain("2 lines · 31 B");
    expect(textOf(html)).toContain("print('<hi>')");
    expect(byClass(html, "hljs-keyword").map(elementText)).toContain("def");
  });

  it("read: the path, the range asked for, the excerpt, pi's continuation note as a mark", () => {
    const { call, result } = pair(calls, "read", (a) => a.offset === 2);
    const html = renderToolBlock(call, result);
    expect(textOf(html)).toContain("lines 2–4");
    const out = byClass(html, "output").map(elementText).join("");
    expect(out).toContain("return a + b;");
    expect(out).not.toContain("more lines in file");
    expect(byClass(html, "mark").map(elementText)).toContain("5 more lines in file. Use offset=5 to continue.");
  });

  it("read of an image: the image, as a raster data: URL", () => {
    const { call, result } = pair(calls, "read", (a) => a.path === "logo.png");
    const html = renderToolBlock(call, result);
    expect(unsafeParts(html)).toEqual([]);
    const img = elements(html).filter((e) => e.tagName === "img");
    expect(img).toHaveLength(1);
    expect(img[0].attrs.find((a) => a.name === "src")?.value).toMatch(/^data:image\/png;base64,iVBOR/);
  });

  it("read of a missing file: marked as an error with pi's message", () => {
    const { call, result } = pair(calls, "read", (a) => a.path === "missing.ts");
    const html = renderToolBlock(call, result);
    expect(byClass(html, "err").map(elementText)).toContain("error");
    expect(byClass(html, "error-text").map(elementText).join("")).toContain("ENOENT");
  });

  it("bash: the command and output in a terminal, exit 0", () => {
    const { call, result } = pair(calls, "bash", (a) => String(a.command).startsWith("echo hello"));
    const html = renderToolBlock(call, result);
    expect(elementText(byClass(html, "command")[0])).toContain("echo hello; echo warn >&2");
    expect(elementText(byClass(html, "terminal")[0])).toBe("hello\nwarn");
    expect(byClass(html, "ok").map(elementText)).toEqual(["exit 0"]);
  });

  it("bash with a non-zero exit: the code read back from pi's status line, which leaves the output", () => {
    const { call, result } = pair(calls, "bash", (a) => String(a.command).includes("exit 3"));
    const html = renderToolBlock(call, result);
    expect(byClass(html, "err").map(elementText)).toEqual(["error", "exit 3"]);
    expect(elementText(byClass(html, "terminal")[0]).trim()).toBe("partial");
  });

  it("bash truncated by pi: marked with its line counts, collapsed with its size, the tail previewed", () => {
    const { call, result } = pair(calls, "bash", (a) => String(a.command).startsWith("seq"));
    const html = renderToolBlock(call, result);
    const marks = byClass(html, "mark").map(elementText);
    expect(marks.some((m) => /^truncated: last 2,000 lines of 2,10[01]$/.test(m))).toBe(true);
    expect(marks).toContain("full output: /home/dev/.cache/pi-bash-1.log");
    const summary = elements(html).find((e) => e.tagName === "summary");
    expect(summary && elementText(summary)).toMatch(/^output: (1,999|2,000) lines · 8\.\d KB$/);
    const preview = elementText(byClass(html, "preview")[0]);
    expect(preview).toContain("2100");
    expect(preview).not.toContain("\n102\n");
    expect(textOf(html)).not.toContain("[Showing lines");
  });

  it("bash that timed out", () => {
    const { call, result } = pair(calls, "bash", (a) => a.timeout === 1);
    const html = renderToolBlock(call, result);
    expect(byClass(html, "err").map(elementText)).toContain("timed out");
    expect(textOf(html)).toContain("timeout 1 s");
  });

  it("ls: a list, folders marked", () => {
    const { call, result } = pair(calls, "ls", () => true);
    const html = renderToolBlock(call, result);
    const items = elements(html).filter((e) => e.tagName === "li");
    expect(items.map(elementText)).toEqual(["logo.png", "src/"]);
    expect(byClass(html, "dir").map(elementText)).toEqual(["src/"]);
  });
});

/** Every tool call of the format fixtures with its result (matched by id), from the JSONL itself. */
function fixturePairs(): { file: string; call: ToolCallPart; result?: ToolResultMessage }[] {
  const root = inRepoCorpus;
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
  const out: { file: string; call: ToolCallPart; result?: ToolResultMessage }[] = [];
  for (const file of files) {
    const messages = readFileSync(join(root, file), "utf8")
      .split("\n")
      .flatMap((line) => {
        try {
          const message = JSON.parse(line)?.message;
          return message && typeof message === "object" ? [message] : [];
        } catch {
          return [];
        }
      });
    const results = new Map(messages.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, m]));
    for (const m of messages) {
      if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
      for (const part of m.content)
        if (part?.type === "toolCall") out.push({ file, call: part, result: results.get(part.id) });
    }
  }
  return out;
}

describe("blocks from the format fixtures' sessions", () => {
  const pairs = fixturePairs();

  /** The first fixture pair that matches (the fixtures hold one of each). */
  const first = (match: (p: (typeof pairs)[number]) => unknown) => {
    const found = pairs.find(match);
    if (!found) throw new Error("no fixture pair matches");
    return found;
  };

  it("render every tool call of every fixture with its result, as safe markup", () => {
    expect(pairs.length).toBeGreaterThan(100);
    for (const { file, call, result } of pairs) {
      const html = renderToolBlock(call, result);
      expect(unsafeParts(html), `${file} ${String(call.id)}`).toEqual([]);
      expect(html).toContain(`data-tool="${call.name}"`);
    }
  });

  it("grep: each match split into path, line and text", () => {
    const { call, result } = first((p) => p.call.name === "grep" && p.result?.isError === false);
    const html = renderToolBlock(call, result);
    const match = byClass(html, "match")[0];
    const [path] = childrenWith(match, "tool-path").map(elementText);
    const [line] = childrenWith(match, "ln").map(elementText);
    const [text] = childrenWith(match, "text").map(elementText);
    expect(`${path}:${line}: ${text}`).toBe(resultText(result).split("\n")[0]);
    expect(line).toMatch(/^\d+$/);
  });

  it("find: the pattern, and the files listed", () => {
    const { call, result } = first((p) => p.call.name === "find" && p.result);
    const html = renderToolBlock(call, result);
    const items = elements(html).filter((e) => e.tagName === "li");
    expect(items.map(elementText)).toEqual(resultText(result).split("\n"));
    expect(byClass(html, "pattern").map(elementText)).toEqual([(call.arguments as { pattern: string }).pattern]);
  });

  it("edit with a hand-made unified hunk: numbered from its header", () => {
    const { call, result } = first((p) => p.call.name === "edit" && p.result?.details);
    const html = renderToolBlock(call, result);
    const diff = String((result?.details as { diff?: string } | undefined)?.diff);
    const [, oldStart, newStart] = /^@@ -(\d+),\d+ \+(\d+)/.exec(diff) ?? [];
    const lines = numbered(html);
    expect(lines.find(([k]) => k === "del")?.[1]).toBe(oldStart);
    expect(lines.find(([k]) => k === "add")?.[2]).toBe(newStart);
  });

  it("pi 1.x's nested calls: listed under the block", () => {
    const file = join(inRepoCorpus, "pi-1.6.0/system-prompts.jsonl");
    const result = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line).message)
      .find((m) => m && "nestedCalls" in m);
    const html = renderToolBlock(undefined, result);
    expect(textOf(html)).toContain("nested calls: 1");
    expect(textOf(html)).toContain('✓ read { "path": "a.ts" } 3 ms');
  });
});

describe("the block's parts", () => {
  it("edit with the older oldText/newText arguments and no result: the change asked for", () => {
    const html = renderToolBlock(
      {
        type: "toolCall",
        id: "c1",
        name: "edit",
        arguments: { path: "a.rs", oldText: "let a = 1;\nlet b = 2;", newText: "let a = 1;\nlet b = 3;" },
      },
      undefined,
    );
    expect(textOf(html)).toContain("no result");
    expect(textOf(html)).toContain("asked for");
    expect(byClass(html, "del").map(elementText).join("")).toContain("let b = 2;");
    expect(byClass(html, "add").map(elementText).join("")).toContain("let b = 3;");
    expect(byClass(html, "ctx").map(elementText).join("")).toContain("let a = 1;");
  });

  it("edit with edits as a JSON string (as some models send them): each edit shown", () => {
    const edits = JSON.stringify([
      { oldText: "a", newText: "b" },
      { oldText: "c", newText: "d" },
    ]);
    const html = renderToolBlock({ name: "edit", arguments: { path: "x.txt", edits } }, undefined);
    expect(byClass(html, "hunk").map(elementText)).toEqual(["edit 1 of 2", "edit 2 of 2"]);
  });

  it("edit texts too large to diff: shown whole, removed then added, not diffed", () => {
    const oldText = Array.from({ length: 40_000 }, (_, i) => `line ${i}`).join("\n");
    const newText = Array.from({ length: 40_000 }, (_, i) => `line ${i * 7}`).join("\n");
    const html = renderToolBlock({ name: "edit", arguments: { path: "big.ts", oldText, newText } }, undefined);
    // 16 KB of each side, the old then the new: no diff is computed.
    const dels = byClass(html, "del").map(elementText);
    expect(dels[0]).toBe("-line 0");
    expect(dels.length).toBeGreaterThan(1000);
    expect(byClass(html, "add").map(elementText)[1]).toBe("+line 7");
    expect(textOf(html)).toMatch(/diff: 2,000 lines/);
  });

  it("bash output with terminal colours: shown without the control sequences", () => {
    const html = renderToolBlock(
      { name: "bash", arguments: { command: "npm test" } },
      {
        role: "toolResult",
        toolName: "bash",
        content: [{ type: "text", text: "\x1b[32m✓ passed\x1b[0m \x1b]8;;https://x\x07link\x1b]8;;\x07" }],
      },
    );
    expect(elementText(byClass(html, "terminal")[0])).toBe("✓ passed link");
  });

  it("a result whose call is not on the path: named from the result, said so", () => {
    const html = renderToolBlock(undefined, {
      role: "toolResult",
      toolCallId: "c9",
      toolName: "bash",
      content: [{ type: "text", text: "done" }],
      isError: false,
    });
    expect(html).toContain('data-tool="bash"');
    expect(textOf(html)).toContain("call not shown");
    expect(textOf(html)).toContain("done");
  });

  it("an unknown tool: arguments pretty-printed as JSON, text output", () => {
    const html = renderToolBlock(
      { name: "web_search", arguments: { query: "pi sessions", max: 3 } },
      { role: "toolResult", toolName: "web_search", content: [{ type: "text", text: "3 results" }], isError: false },
    );
    expect(textOf(html)).toContain('{\n  "query": "pi sessions",\n  "max": 3\n}');
    expect(textOf(html)).toContain("3 results");
    expect(byClass(html, "hljs-attr").length).toBeGreaterThan(0);
  });

  it("long outputs collapse behind their size; short ones do not", () => {
    const long = Array.from({ length: 50 }, (_, i) => `row ${i}`).join("\n");
    const html = renderToolBlock(
      { name: "mcp_tool", arguments: {} },
      { role: "toolResult", toolName: "mcp_tool", content: [{ type: "text", text: long }] },
    );
    expect(elementText(elements(html).find((e) => e.tagName === "summary") ?? elements("<p></p>")[0])).toBe(
      "output: 50 lines · 339 B",
    );
    expect(elementText(byClass(html, "preview")[0])).toContain("… 44 more lines");
    const short = renderToolBlock({ name: "mcp_tool" }, { role: "toolResult", content: "one line" });
    expect(elements(short).some((e) => e.tagName === "details")).toBe(false);
  });

  it("grep's closing notes become marks; an empty answer is said", () => {
    const html = renderToolBlock(
      { name: "grep", arguments: { pattern: "TODO", limit: 1 } },
      {
        role: "toolResult",
        toolName: "grep",
        content: [
          {
            type: "text",
            text: "a.ts:3: // TODO\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]",
          },
        ],
      },
    );
    expect(byClass(html, "mark").map(elementText)).toContain(
      "1 matches limit reached. Use limit=2 for more, or refine pattern",
    );
    expect(elements(html).filter((e) => e.tagName === "li")).toHaveLength(1);
    const none = renderToolBlock(
      { name: "find", arguments: { pattern: "*.x" } },
      { role: "toolResult", content: [{ type: "text", text: "No files found matching pattern" }] },
    );
    expect(textOf(none)).toContain("No files found matching pattern");
  });

  it("the user's own !command: exit code, cancel, truncation, not sent to the model", () => {
    const ok = renderBashExecution({
      role: "bashExecution",
      command: "git status",
      output: "clean\n",
      exitCode: 0,
      cancelled: false,
      truncated: false,
    });
    expect(byClass(ok, "ok").map(elementText)).toEqual(["exit 0"]);
    expect(byClass(ok, "failed")).toHaveLength(0);
    const bad = renderBashExecution({
      role: "bashExecution",
      command: "make",
      output: "",
      exitCode: 2,
      cancelled: false,
      truncated: true,
      fullOutputPath: "/var/log/x",
      excludeFromContext: true,
    });
    expect(byClass(bad, "mark").map(elementText)).toEqual([
      "error",
      "exit 2",
      "truncated",
      "full output: /var/log/x",
      "not sent to the model",
    ]);
    expect(textOf(bad)).toContain("(no output)");
    const cancelled = renderBashExecution({
      role: "bashExecution",
      command: "sleep 9",
      output: "",
      exitCode: undefined,
      cancelled: true,
    });
    expect(byClass(cancelled, "warn").map(elementText)).toEqual(["cancelled"]);
  });

  it("highlighting stays within the page's budget: past it, code is escaped text", () => {
    const { call, result } = pair(VERSIONS[1][1], "edit", (a) => JSON.stringify(a).includes("the sum"));
    const html = withBudget(0, () => renderToolBlock(call, result));
    expect(byClass(html, "hljs-keyword")).toHaveLength(0);
    expect(textOf(html)).toContain('console.log(add(x, y), "<b>");');
  });

  it("the stylesheet covers light, dark and print", () => {
    expect(TOOLS_CSS).toContain("prefers-color-scheme: dark");
    expect(TOOLS_CSS).toContain("@media print");
  });
});

describe("hostile tool calls", () => {
  it.each(TOOL_XSS)("payload %s: shown as text in every field, never as markup", (x) => {
    for (const { label, call, result } of xssPairs(x)) {
      const html = renderToolBlock(call, result);
      expect(unsafeParts(html), label).toEqual([]);
      expect(html, label).not.toMatch(/<(script|iframe|svg|style|math|a)[\s>]|<img src=x/i);
    }
    // The payload is shown, as text, where the reader looks for it.
    expect(textOf(renderToolBlock({ name: "bash", arguments: { command: x } }, undefined))).toContain(x);
    expect(textOf(renderToolBlock({ name: x, arguments: {} }, undefined))).toContain(x);
    // The name as an attribute keeps only letters, digits, `_`, `-` and `.`: never markup, never a URL.
    const attr = /data-tool="([^"]*)"/.exec(renderToolBlock({ name: x }, undefined))?.[1];
    expect(attr).toMatch(/^[A-Za-z0-9_.-]+$/);
    expect(attr).toBe(x.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64));
  });

  it("a non-raster image is named, not loaded", () => {
    const [read] = xssPairs("x").filter((p) => p.label === "read");
    const html = renderToolBlock(read.call, read.result);
    expect(elements(html).filter((e) => e.tagName === "img")).toHaveLength(0);
    expect(textOf(html)).toContain("[image not shown: image/svg+xml]");
  });

  it("huge and pathological fields: the work and the HTML stay bounded", () => {
    const mb = 4 * 1024 * 1024;
    const cases: [string, ToolCallPart, ToolResultMessage | undefined][] = [
      ["a huge path", { name: "read", arguments: { path: "a/".repeat(mb / 2) } }, undefined],
      ["a huge tool name", { name: "x".repeat(mb), arguments: {} }, undefined],
      [
        "a huge command and output",
        { name: "bash", arguments: { command: "echo ".repeat(mb / 5) } },
        { content: [{ type: "text", text: "y\n".repeat(mb / 2) }] },
      ],
      [
        "a note that backtracks",
        { name: "bash", arguments: { command: "x" } },
        { content: [{ type: "text", text: `\n\n[Showing ${". Full output: ".repeat(mb / 15)}` }] },
      ],
      [
        "a read note that backtracks",
        { name: "read", arguments: { path: "a" } },
        { content: [{ type: "text", text: `\n\n[${"more lines in file".repeat(mb / 18)}` }] },
      ],
      [
        "endless notes",
        { name: "grep", arguments: { pattern: "a" } },
        { content: [{ type: "text", text: "\n\n[n]".repeat(mb / 5) }] },
      ],
      [
        "a huge grep line",
        { name: "grep", arguments: { pattern: "a" } },
        { content: [{ type: "text", text: `a.ts:1: ${"z".repeat(mb)}` }] },
      ],
      [
        "many list items",
        { name: "find", arguments: { pattern: "*" } },
        { content: [{ type: "text", text: "f\n".repeat(mb / 2) }] },
      ],
      [
        "a huge stored diff",
        { name: "edit", arguments: { path: "a.ts" } },
        { content: [], details: { diff: "+1 x\n".repeat(mb / 5) } },
      ],
      [
        "huge nested calls",
        { name: "bash", arguments: { command: "x" } },
        {
          content: [],
          nestedCalls: {
            calls: Array.from({ length: 50_000 }, () => ({
              name: "n",
              arguments: { a: "b".repeat(100) },
              error: "e".repeat(1000),
            })),
          },
        },
      ],
    ];
    for (const [label, call, result] of cases) {
      const html = withBudget(PAGE_BUDGET_CHARS, () => renderToolBlock(call, result));
      expect(html.length, label).toBeLessThan(1.5 * 1024 * 1024);
      expect(unsafeParts(html), label).toEqual([]);
    }
  });

  it("every field of every tool given every JSON type: a block, never a throw", () => {
    const pairs = oddPairs();
    expect(pairs.length).toBeGreaterThan(500);
    for (const { label, call, result } of pairs) {
      let html = "";
      expect(() => {
        html = renderToolBlock(call, result);
      }, label).not.toThrow();
      expect(html, label).toMatch(/^<div class="tool[ "]/);
      expect(unsafeParts(html), label).toEqual([]);
    }
    for (const value of [null, 1, "x", [], {}]) {
      expect(() =>
        renderBashExecution({
          command: value,
          output: value,
          exitCode: value,
          cancelled: value,
          fullOutputPath: value,
        }),
      ).not.toThrow();
    }
  });
});
