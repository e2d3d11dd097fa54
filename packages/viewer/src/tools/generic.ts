/**
 * Any other tool (extensions, MCP, other agents' tools): the name, the arguments pretty-printed
 * as JSON, and the result's text and images. Calls a tool made itself (pi 1.x's `nestedCalls`)
 * are listed under any block.
 */
import { escapeHtml } from "../escape.js";
import { durationHtml, imagesHtml, mark, nameHtml, output, toolBlock } from "./block.js";
import { clip, num, obj, resultImages, resultText, str } from "./fields.js";
import type { ToolInput } from "./types.js";

/** Arguments longer than this as JSON are cut (the JSONL has them whole). */
const ARGS_MAX_CHARS = 64 * 1024;

/** Arguments as indented JSON (never throws: anything JSON cannot print is named). */
export function prettyJson(value: unknown): string {
  try {
    const text = JSON.stringify(value, null, 2) ?? String(value);
    return text.length > ARGS_MAX_CHARS ? `${text.slice(0, ARGS_MAX_CHARS)}\n…` : text;
  } catch {
    return "(arguments that cannot be shown as JSON)";
  }
}

/** Renders a call of a tool without a renderer of its own. */
export function renderGeneric(input: ToolInput, rawArgs: unknown): string {
  const { name, result } = input;
  const head = `${nameHtml(name)}${durationHtml(num(result?.durationMs))}`;
  const error = result?.isError === true;
  const parts: string[] = [];
  const hasArgs =
    input.hasCall &&
    rawArgs !== undefined &&
    !(typeof rawArgs === "object" && rawArgs !== null && Object.keys(rawArgs).length === 0);
  if (hasArgs)
    parts.push(`<div class="args">${output(prettyJson(rawArgs), { lang: "json", noun: "arguments" })}</div>`);
  if (result) {
    const text = resultText(result);
    if (text) parts.push(output(text, { kind: error ? "error-text" : "" }));
    parts.push(imagesHtml(resultImages(result)));
  }
  return toolBlock(input, head, parts, error);
}

/** pi 1.x's record of the calls a tool made itself (a codemode script), or "". */
export function nestedCallsHtml(result: Record<string, unknown> | undefined): string {
  const nested = obj(result?.nestedCalls);
  const calls = Array.isArray(nested.calls) ? nested.calls.map(obj) : [];
  if (calls.length === 0) return "";
  const icon: Record<string, string> = { ok: "✓", error: "✗", unfinished: "…" };
  const items = calls.slice(0, 500).map((call) => {
    const status = str(call.status) ?? "";
    const args =
      call.arguments === undefined
        ? ""
        : ` ${prettyJson(call.arguments)
            .slice(0, 300)
            .replace(/\s*\n\s*/g, " ")}`;
    const error = str(call.error) ? ` — ${clip(str(call.error) ?? "", 300)}` : "";
    return `<li class="${status === "error" ? "err" : ""}">${escapeHtml(`${icon[status] ?? "?"} ${clip(str(call.name) ?? "?", 100)}${args}${durationText(num(call.durationMs))}${error}`)}</li>`;
  });
  const incomplete = nested.complete === false ? ` ${mark("warn", "incomplete record")}` : "";
  return `<div class="output nested"><details><summary>${escapeHtml(`nested calls: ${calls.length}`)}${incomplete}</summary><ul class="items">${items.join("")}</ul></details></div>`;
}

const durationText = (ms: number | undefined) => (ms === undefined ? "" : ` ${Math.round(ms)} ms`);
