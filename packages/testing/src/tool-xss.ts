/**
 * Hostile tool calls and results: XSS payloads in every field a tool block shows (tool names,
 * ids, paths, patterns, commands, outputs, diffs, edits, images, nested calls), and every field
 * of every built-in tool's shape given each JSON type. Shared by the tool-block unit tests, the
 * browser preview and the share page's browser test, which places them in a session.
 */
import type { ToolCallPart, ToolResultMessage } from "@pisync/viewer";

/** Payloads that would run script, load something, or break out of an attribute if not escaped. */
export const TOOL_XSS = [
  "<script>window.__xss=1</script>",
  '<img src=x onerror="window.__xss=1">',
  '"><svg onload=window.__xss=1>',
  "'><img src=x onerror=window.__xss=1>",
  "javascript:window.__xss=1",
  '<iframe src="javascript:window.__xss=1"></iframe>',
  "</code></pre></details></div><script>window.__xss=1</script>",
  '</span><a href="javascript:window.__xss=1">x</a>',
  "<style>body{background:url(javascript:window.__xss=1)}</style>",
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=1">',
];

/** One hostile pair: a label for failure messages, and the two halves. */
export interface HostilePair {
  label: string;
  call?: ToolCallPart;
  result?: ToolResultMessage;
}

const text = (t: unknown) => [{ type: "text", text: t }];
const result = (toolName: unknown, content: unknown, extra: Record<string, unknown> = {}): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: "c",
  toolName,
  content,
  isError: false,
  timestamp: 1,
  ...extra,
});

/** Every tool kind with a payload in every field it shows. */
export function xssPairs(x: string): HostilePair[] {
  const diff = ` 1 ${x}\n+2 ${x}\n-2 ${x}\n   ...`;
  const patch = `--- ${x}\n+++ ${x}\n@@ -1,2 +1,2 @@\n ${x}\n-${x}\n+${x}\n`;
  return [
    {
      label: "unknown tool name",
      call: { type: "toolCall", id: x, name: x, arguments: { [x]: x } },
      result: result(x, text(x)),
    },
    {
      label: "bash",
      call: { name: "bash", arguments: { command: x, timeout: x } },
      result: result("bash", text(`${x}\n\nCommand exited with code 1`), {
        isError: true,
        details: { fullOutputPath: x, truncation: { truncated: true, totalLines: x } },
      }),
    },
    {
      label: "bash note",
      call: { name: "bash", arguments: { command: "ls" } },
      result: result("bash", text(`${x}\n\n[Showing ${x}. Full output: ${x}]`)),
    },
    {
      label: "edit display diff",
      call: { name: "edit", arguments: { path: `${x}.ts`, edits: [{ oldText: x, newText: x }] } },
      result: result("edit", text(x), { details: { diff, firstChangedLine: x } }),
    },
    {
      label: "edit patch",
      call: { name: "edit", arguments: { path: `${x}.py` } },
      result: result("edit", text(x), { details: { patch } }),
    },
    {
      label: "edit failed",
      call: { name: "edit", arguments: { path: x, edits: JSON.stringify([{ oldText: x, newText: `${x}\n${x}` }]) } },
      result: result("edit", text(x), { isError: true }),
    },
    { label: "edit legacy", call: { name: "edit", arguments: { file_path: x, oldText: x, newText: `<${x}>` } } },
    {
      label: "write",
      call: { name: "write", arguments: { path: `${x}.html`, content: `${x}\n`.repeat(30) } },
      result: result("write", text(x), { isError: true }),
    },
    {
      label: "read",
      call: { name: "read", arguments: { path: `${x}.js`, offset: 1, limit: 2 } },
      result: result("read", [
        ...text(`${x}\n\n[${x} more lines in file. Use offset=3 to continue.]`),
        { type: "image", mimeType: x, data: x },
        { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" },
      ]),
    },
    {
      label: "grep",
      call: { name: "grep", arguments: { pattern: x, path: x, glob: x, ignoreCase: true, context: 1, limit: 5 } },
      result: result("grep", text(`${x}:1: ${x}\n${x}-2- ${x}\n\n[${x}]`)),
    },
    {
      label: "find",
      call: { name: "find", arguments: { pattern: x, path: x } },
      result: result("find", text(Array.from({ length: 30 }, () => x).join("\n"))),
    },
    { label: "ls", call: { name: "ls", arguments: { path: x } }, result: result("ls", text(`${x}/\n${x}`)) },
    { label: "result only", result: result(x, text(x), { durationMs: x }) },
    {
      label: "nested calls",
      call: { name: "bash", arguments: { command: "x" } },
      result: result("bash", text("ok"), {
        nestedCalls: { calls: [{ name: x, arguments: { x }, status: x, error: x }], complete: false },
      }),
    },
    { label: "string arguments", call: { name: "bash", arguments: JSON.stringify({ command: x }) } },
  ];
}

/** Values of every JSON type (and a few shapes a field is never meant to have). */
export const ODD_VALUES: unknown[] = [
  null,
  undefined,
  0,
  -1,
  1e308,
  Number.NaN,
  true,
  "",
  "x",
  [],
  ["a", 1],
  {},
  { text: 1 },
  [[[]]],
];

/** Each built-in tool's call and result with one field set to each odd value, and whole halves odd. */
export function oddPairs(): HostilePair[] {
  const base: Record<string, { args: Record<string, unknown>; details: Record<string, unknown> }> = {
    bash: {
      args: { command: "ls", timeout: 1 },
      details: { truncation: { truncated: true, totalLines: 3, outputLines: 2 }, fullOutputPath: "/x" },
    },
    edit: {
      args: { path: "a.ts", edits: [{ oldText: "a", newText: "b" }], oldText: "a", newText: "b" },
      details: { diff: "+1 a", patch: "@@ -1 +1 @@\n-a\n+b", firstChangedLine: 1 },
    },
    write: { args: { path: "a.ts", content: "a" }, details: {} },
    read: { args: { path: "a.ts", offset: 1, limit: 1 }, details: {} },
    grep: {
      args: { pattern: "a", path: ".", glob: "*", ignoreCase: true, literal: true, context: 1, limit: 1 },
      details: {},
    },
    find: { args: { pattern: "a", path: ".", limit: 1 }, details: {} },
    ls: { args: { path: ".", limit: 1 }, details: {} },
    other: { args: { a: 1 }, details: {} },
  };
  const pairs: HostilePair[] = [];
  for (const [name, { args, details }] of Object.entries(base)) {
    for (const value of ODD_VALUES) {
      const label = `${name} = ${JSON.stringify(value)}`;
      pairs.push({
        label: `${label} as arguments`,
        call: { name, arguments: value },
        result: result(name, value, { details: value, isError: value }),
      });
      for (const key of Object.keys(args)) {
        pairs.push({
          label: `${name}.${key} ${label}`,
          call: { name, arguments: { ...args, [key]: value } },
          result: result(name, text("ok")),
        });
      }
      for (const key of Object.keys(details)) {
        pairs.push({
          label: `${name} details.${key} ${label}`,
          call: { name, arguments: args },
          result: result(name, text("ok"), { details: { ...details, [key]: value } }),
        });
      }
      pairs.push({
        label: `${name} content ${label}`,
        call: { name, arguments: args },
        result: result(name, [{ type: "text", text: value }, { type: "image", mimeType: value, data: value }, value]),
      });
      pairs.push({
        label: `${name} whole result ${label}`,
        call: { name: value, id: value, arguments: args },
        result: value as ToolResultMessage,
      });
    }
  }
  return pairs;
}
