/**
 * A plain stand-in for the tool blocks (`./tools/index.js`), with the same interface: one block
 * per tool call and its result, arguments pretty-printed, output collapsed. At merge the page
 * imports the per-tool renderers instead and this file goes.
 */
import { escapeHtml } from "./escape.js";
import { renderCode } from "./markdown.js";

/** A toolCall part of an assistant message, as stored (hostile input). */
export interface ToolCallPart {
  type?: "toolCall";
  id?: unknown;
  name?: unknown;
  arguments?: unknown;
}
/** A toolResult message, as stored. */
export type ToolResultMessage = Record<string, unknown>;

/** A tool's name as an attribute value: letters, digits, `_` and `-` only (hostile names say nothing there). */
function toolKey(name: unknown): string {
  return String(name)
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 64);
}

function outputText(result: ToolResultMessage | undefined): string {
  const content = result?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p) => p && typeof p === "object" && (p as { type?: unknown }).type === "text")
    .map((p) => String((p as { text?: unknown }).text ?? ""))
    .join("\n");
}

/** One tool call and its result as one block (either side may be missing). */
export function renderToolBlock(call: ToolCallPart | undefined, result: ToolResultMessage | undefined): string {
  const name = call?.name ?? result?.toolName ?? "tool";
  const output = outputText(result);
  const lines = output ? output.split("\n").length : 0;
  const args = call ? renderCode(JSON.stringify(call.arguments ?? {}, null, 2), "json") : "";
  const out = result
    ? `<details class="output"><summary>output <span class="muted">(${lines} line${lines === 1 ? "" : "s"})</span></summary>${renderCode(output)}</details>`
    : `<p class="muted output">no result in this view</p>`;
  return `<div class="tool${result?.isError === true ? " error" : ""}" data-tool="${toolKey(name)}"><div class="tool-head">${result?.isError === true ? "✗" : "→"} <code>${escapeHtml(name)}</code></div>${args}${out}</div>`;
}

/** A `bashExecution` message (the user's own `!command`) as a terminal block. */
export function renderBashExecution(message: Record<string, unknown>): string {
  const exit = message.cancelled ? "cancelled" : `exit ${escapeHtml(message.exitCode ?? "?")}`;
  return `<div class="tool" data-tool="bash"><div class="tool-head"><code>$ ${escapeHtml(message.command)}</code> <span class="muted">${exit}</span></div><details class="output"><summary>output</summary>${renderCode(String(message.output ?? ""), "bash")}</details></div>`;
}

/** CSS for the blocks. */
export const TOOLS_CSS = `
.tool { border: 1px solid var(--line); border-radius: 8px; padding: .4rem .6rem; margin: .4rem 0; background: var(--bg); }
.tool.error { border-color: var(--error); }
.tool-head { font-size: .9rem; overflow-wrap: anywhere; }
`;
