/**
 * Tool calls rendered by tool, call and result together as one block: `edit` as a diff, `write`
 * as the file, `read` as the excerpt, `bash` as a terminal, `grep`/`find`/`ls` as lists, any other
 * tool as its arguments and output. Everything from the session is escaped; long outputs
 * collapse (<details>) with their size shown; errors are marked. No JavaScript: the page's script
 * may open every `.tool .output details` or hide `.tool .output` (the `O` key).
 *
 * @example
 * ```ts
 * const html = renderToolBlock(part, resultsById.get(part.id));
 * ```
 */
import { escapeHtml } from "../escape.js";
import { renderBash } from "./bash.js";
import { renderEdit } from "./edit.js";
import { obj, str, toolAttr } from "./fields.js";
import { renderRead, renderWrite } from "./files.js";
import { nestedCallsHtml, renderGeneric } from "./generic.js";
import { renderList } from "./lists.js";
import type { ToolCallPart, ToolInput, ToolResultMessage } from "./types.js";

export { renderBashExecution } from "./bash.js";
export { TOOLS_CSS } from "./css.js";
export type { ToolCallPart, ToolResultMessage } from "./types.js";

const RENDERERS: Record<string, (input: ToolInput) => string> = {
  bash: renderBash,
  edit: renderEdit,
  read: renderRead,
  write: renderWrite,
  grep: renderList,
  find: renderList,
  ls: renderList,
};

/** Arguments as stored: an object, or (from some providers) a JSON string of one. */
function argumentsOf(raw: unknown): Record<string, unknown> {
  if (typeof raw === "string" && raw.length <= 1024 * 1024) {
    try {
      return obj(JSON.parse(raw));
    } catch {
      return {};
    }
  }
  return obj(raw);
}

/**
 * One tool call and its result as ONE block of HTML (either side may be missing: a call whose
 * result is in another window or never came, a result whose call is outside the shown path).
 * Never throws.
 */
export function renderToolBlock(call: ToolCallPart | undefined, result: ToolResultMessage | undefined): string {
  const res = result && typeof result === "object" && !Array.isArray(result) ? result : undefined;
  const name = str(call?.name) ?? str(res?.toolName) ?? "tool";
  const input: ToolInput = { name, args: argumentsOf(call?.arguments), result: res, hasCall: call != null };
  // The fallback shows the arguments as sent: parsed when they came as a JSON string.
  const raw = typeof call?.arguments === "string" && Object.keys(input.args).length > 0 ? input.args : call?.arguments;
  try {
    const render = Object.hasOwn(RENDERERS, name) ? RENDERERS[name] : undefined;
    const html = render ? render(input) : renderGeneric(input, raw);
    const nested = nestedCallsHtml(res);
    return nested ? html.replace(/<\/div>$/, `${nested}</div>`) : html;
  } catch {
    // A shape no renderer foresaw: the plain fallback still shows what there is.
    try {
      return renderGeneric(input, raw);
    } catch {
      return `<div class="tool error" data-tool="${toolAttr(name)}"><div class="tool-head">${escapeHtml(name)}</div></div>`;
    }
  }
}
