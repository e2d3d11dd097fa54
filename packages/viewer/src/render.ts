/**
 * The share page, rendered on the server: readable without JavaScript, on a phone and on a
 * desktop, light and dark. Every string from the session is escaped (escape.ts); Markdown goes
 * through markdown.ts; thinking, tool calls and tool results are collapsed behind a one-line
 * summary (<details>), so the page needs no script to work.
 */

import { addUsage, emptyTotals } from "@pisync/format";
import { blobImageSrc, withBlobs } from "./blob-images.js";
import { cardHead, cardTags } from "./card.js";
import { escapeHtml, safeImageSrc } from "./escape.js";
import { documentHead } from "./head.js";
import { PAGE_BUDGET_CHARS, plainText, renderMarkdown, withBudget } from "./markdown.js";
import { grouped, shownNumber } from "./numbers.js";
import {
  attachmentsHtml,
  attachmentTextHtml,
  isAttachmentText,
  noticeHtml,
  noticeKind,
  renderOmpEntry,
  renderOmpMessage,
} from "./omp-entries.js";
import { output } from "./tools/block.js";
import { renderBashExecution, renderToolBlock, type ToolCallPart } from "./tools/index.js";
import type { LinkCard, PageEntry, SessionPageView } from "./view.js";

/** The share page's stylesheet (served by the share routes). */
const SHARE_CSS = "/s/assets/style.css";

export type { PageEntry } from "./view.js";
/** What a page shows: a session view. */
export type PageInput = SessionPageView;

type Json = Record<string, unknown>;

/** What rendering a window of entries needs beside them. */
export interface EntriesInput {
  entries: PageEntry[];
  labels: Map<string, string>;
  /** Entries changed by a later `context_edit`: target id → the edit's id. */
  edits?: Map<string, string>;
  /**
   * Where this origin serves the session's blobs (a URL prefix the hash is appended to): images
   * stored as `blob:sha256:<hex>` load from there. Absent: they are named, not loaded.
   */
  blobs?: string;
}

/** A tool result shown with its call: the result message and its entry. */
interface PairedResult {
  message: Json;
  entryId: string;
}

/**
 * What pairs calls and results in a window: a call and its result are shown as one block where
 * the call is, and the result's own entry keeps only its place (a hidden anchor for live updates).
 */
interface Pairs {
  /** Results by their call's id, for calls the window shows (taken as their block is rendered). */
  byCall: Map<string, PairedResult>;
  /** Ids of the result entries shown with their call. */
  shown: Set<string>;
  labels: Map<string, string>;
  edits: Map<string, string>;
}

const NO_PAIRS: Pairs = { byCall: new Map(), shown: new Set(), labels: new Map(), edits: new Map() };

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function contentParts(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content.filter((p) => p && typeof p === "object") as Json[]) : [];
}

function image(part: Json): string {
  const src = safeImageSrc(part.mimeType, part.data);
  if (src) return `<img class="shot" alt="image" src="${escapeHtml(src)}">`;
  // An image kept as a blob: served from this origin; its alt text shows when the backup lacks it.
  const blob = blobImageSrc(part.mimeType, part.data);
  if (blob)
    return `<img class="shot" alt="${escapeHtml(`[image missing from the backup: ${part.mimeType}]`)}" src="${escapeHtml(blob)}">`;
  return `<p class="muted">[image not shown: ${escapeHtml(part.mimeType)}]</p>`;
}

function oneLine(value: string, max = 100): string {
  const line = value.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function details(kind: string, summary: string, body: string, open = false): string {
  return `<details class="${kind}"${open ? " open" : ""}><summary>${summary}</summary><div class="body">${body}</div></details>`;
}

function renderContent(content: unknown): string {
  return contentParts(content)
    .map((part) => {
      // rho's attachment envelopes: folded, named by their first line.
      if (isAttachmentText(part)) return attachmentTextHtml(part);
      if (part.type === "text") return renderMarkdown(text(part.text));
      if (part.type === "image") return image(part);
      return "";
    })
    .join("");
}

/** A UTC timestamp as shown: minutes and the zone (the script adds the reader's local time on hover). */
function when(timestamp: string | undefined, cls = ""): string {
  if (!timestamp) return "";
  const shown = /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(timestamp)
    ? `${timestamp.slice(0, 16).replace("T", " ")} UTC`
    : timestamp.slice(0, 40);
  return `<time${cls ? ` class="${cls}"` : ""} datetime="${escapeHtml(timestamp)}">${escapeHtml(shown)}</time>`;
}

/** A cost in dollars ("—" for one that is not a finite number: a stored sum may be null). */
function money(cost: number): string {
  return shownNumber(cost, (c) => `$${c.toFixed(c < 1 ? 4 : 2)}`);
}

/** An assistant turn's tokens and cost, for its hover title (clamped as totals count them). */
function turnCost(message: Json): string {
  const usage = message.usage as Json | undefined;
  if (!usage || typeof usage !== "object") return "";
  const u = addUsage(emptyTotals(), usage);
  return `${grouped(u.totalTokens)} tokens · ${money(u.cost)} (input ${grouped(u.input)}, output ${grouped(u.output)}, cache read ${grouped(u.cacheRead)}, cache write ${grouped(u.cacheWrite)})`;
}

/**
 * A call with its result, as one block that carries the result entry's anchor (`#e-<id>` lands on
 * the block), label and "edited later" mark.
 */
function pairedBlock(call: ToolCallPart, paired: PairedResult, pairs: Pairs): string {
  const id = escapeHtml(paired.entryId);
  const label = pairs.labels.get(paired.entryId);
  const edit = pairs.edits.get(paired.entryId);
  const head =
    label || edit
      ? `<div class="entry-head">${label ? `<span class="label">${escapeHtml(label)}</span>` : ""}${edit ? `<a class="edited" href="#e-${escapeHtml(edit)}">edited later</a>` : ""}</div>`
      : "";
  return `<div class="paired-result" id="e-${id}" data-id="${id}">${head}${renderToolBlock(call, paired.message)}</div>`;
}

function renderAssistant(message: Json, pairs: Pairs): string {
  const parts = contentParts(message.content);
  const html = parts.map((part) => {
    if (part.type === "text") return renderMarkdown(text(part.text));
    if (part.type === "thinking") {
      const thinking = text(part.thinking);
      return details(
        "thinking",
        `Thinking <span class="muted">(${thinking.split(/\s+/).filter(Boolean).length} words)</span>`,
        renderMarkdown(thinking),
      );
    }
    if (part.type === "toolCall") {
      const paired = typeof part.id === "string" ? pairs.byCall.get(part.id) : undefined;
      // One block per result: a second call of the same id is shown without it.
      if (paired) pairs.byCall.delete(part.id as string);
      return paired
        ? pairedBlock(part as ToolCallPart, paired, pairs)
        : renderToolBlock(part as ToolCallPart, undefined);
    }
    if (part.type === "image") return image(part);
    return "";
  });
  const notes: string[] = [];
  if (message.stopReason === "error")
    notes.push(`<p class="error">Error: ${escapeHtml(message.errorMessage ?? "the model failed")}</p>`);
  if (message.stopReason === "aborted") notes.push(`<p class="muted">(aborted)</p>`);
  const model = text(message.model)
    ? `<span class="model">${escapeHtml(message.provider)}/${escapeHtml(message.model)}</span>`
    : "";
  const cost = turnCost(message);
  return `<div class="who"${cost ? ` title="${escapeHtml(cost)}"` : ""}>Assistant ${model}</div>${html.join("")}${notes.join("")}`;
}

/** pi 1.x's system prompt and tool set: collapsed, the tools named in the summary. */
function renderSystem(message: Json): string {
  const added = Array.isArray(message.toolsAdded) ? (message.toolsAdded as Json[]) : [];
  const removed = Array.isArray(message.toolsRemoved) ? (message.toolsRemoved as Json[]) : [];
  const sections = message.sections && typeof message.sections === "object" ? Object.keys(message.sections) : [];
  const tools = added.map((t) => text(t.name)).filter(Boolean);
  const summary = [
    "System prompt",
    tools.length
      ? `<span class="muted">${tools.length} tool${tools.length === 1 ? "" : "s"}: ${escapeHtml(oneLine(tools.join(", "), 120))}</span>`
      : "",
    removed.length
      ? `<span class="muted">removed: ${escapeHtml(oneLine(removed.map((t) => text(t.name)).join(", "), 80))}</span>`
      : "",
    sections.length ? `<span class="muted">sections: ${escapeHtml(oneLine(sections.join(", "), 80))}</span>` : "",
  ]
    .filter(Boolean)
    .join(" · ");
  const toolList = added.length
    ? `<h4>Tools</h4><dl class="tools">${added.map((t) => `<dt><code>${escapeHtml(t.name)}</code></dt><dd>${escapeHtml(oneLine(text(t.description), 400))}</dd>`).join("")}</dl>`
    : "";
  return details("system", summary, `${renderContent(message.content)}${toolList}`);
}

function renderMessage(message: Json, pairs: Pairs): string | undefined {
  switch (message.role) {
    case "user":
      return `<div class="who">User</div>${renderContent(message.content)}${attachmentsHtml(message)}`;
    case "assistant":
      return renderAssistant(message, pairs);
    case "system":
      return renderSystem(message);
    case "toolResult":
      return renderToolBlock(undefined, message);
    case "bashExecution":
      return renderBashExecution(message);
    case "custom":
      return message.display === false
        ? undefined
        : `<div class="who">${escapeHtml(message.customType)}</div>${renderContent(message.content)}`;
    case "branchSummary":
      return `<div class="who">Branch summary</div>${renderMarkdown(text(message.summary))}`;
    case "compactionSummary":
      return `<div class="who">Compacted</div>${renderMarkdown(text(message.summary))}`;
    case "developer":
    case "hookMessage":
    case "pythonExecution":
    case "fileMention":
      return renderOmpMessage(message, renderContent);
    default:
      return `<p class="event">A message of a kind this page does not know (${escapeHtml(oneLine(String(message.role ?? "no role"), 40))}): see the JSONL.</p>`;
  }
}

/** A `context_edit` (pi 1.x): which entry it changes and how. */
function renderContextEdit(e: Json): string {
  const target = text(e.targetId);
  const link = `<a href="#e-${escapeHtml(target)}">entry ${escapeHtml(oneLine(target, 40))}</a>`;
  if (e.replacement === null)
    return `<p class="event">Context edit: ${link} removed from what the model sees from here on.</p>`;
  const replacement = e.replacement as Json | undefined;
  return details(
    "edit",
    `Context edit: ${link} replaced in what the model sees from here on`,
    renderContent(replacement && typeof replacement === "object" ? replacement.content : undefined),
  );
}

/** An entry shown as its line's text (escaped, never parsed into HTML): too deep or too large to render. */
function asTextHtml({ why, text, cut }: NonNullable<PageEntry["asText"]>): string {
  const start = cut ? " (its start: the JSONL has it whole)" : "";
  return `<p class="event">${escapeHtml(`This entry is ${why}: shown as its text${start}.`)}</p>${output(text, { noun: "line" })}`;
}

/** One entry's body; `undefined` for entries a reader need not see (labels, extension state). */
function entryBody(item: PageEntry, pairs: Pairs): { body?: string; kind: string } {
  if (item.asText) return { kind: `${item.type} as-text`, body: asTextHtml(item.asText) };
  const e = item.entry;
  switch (item.type) {
    case "message": {
      const message = e.message;
      if (!message || typeof message !== "object") {
        return { body: `<p class="event">An empty message (pi skips it).</p>`, kind: "message" };
      }
      const m = message as Json;
      // A result shown with its call: its block (and anchor) is there; here only its place stays.
      if (pairs.shown.has(item.id)) return { body: "", kind: "message toolResult paired" };
      return { body: renderMessage(m, pairs), kind: `message ${text(m.role)}` };
    }
    case "custom_message": {
      const notice = noticeKind(e.customType);
      return {
        kind: notice ? `${item.type} notice-${notice}` : item.type,
        body:
          e.display === false
            ? undefined
            : notice
              ? noticeHtml(notice, e.content)
              : `<div class="who">${escapeHtml(e.customType)}</div>${renderContent(e.content)}`,
      };
    }
    case "compaction":
      return {
        kind: item.type,
        body: details(
          "summary",
          `Compacted <span class="muted">${escapeHtml(e.tokensBefore ?? "?")} tokens summarized</span>`,
          renderMarkdown(text(e.summary)),
        ),
      };
    case "branch_summary":
      return {
        kind: item.type,
        body: text(e.summary)
          ? details("summary", "Summary of another branch", renderMarkdown(text(e.summary)))
          : undefined,
      };
    case "model_change": {
      const model = typeof e.model === "string" ? e.model : `${text(e.provider)}/${text(e.modelId)}`;
      return { kind: item.type, body: `<p class="event">Model → ${escapeHtml(model)}</p>` };
    }
    case "thinking_level_change":
      return { kind: item.type, body: `<p class="event">Thinking level → ${escapeHtml(e.thinkingLevel ?? "off")}</p>` };
    case "session_info":
      return { kind: item.type, body: `<p class="event">Named “${escapeHtml(e.name)}”</p>` };
    case "context_edit":
      return { kind: item.type, body: renderContextEdit(e) };
    default:
      // oh-my-pi's kinds (title_change, reset_boundary, mode_change, …); others stay hidden.
      return { kind: item.type, body: renderOmpEntry(e, item.type) };
  }
}

/**
 * One entry as HTML; `undefined` for entries a reader need not see (labels, usage, extension
 * state). A tool result shown with its call (`pairs`, made for a window) is a hidden placeholder:
 * its anchor is on the call's block.
 */
export function renderEntry(
  item: PageEntry,
  labels: Map<string, string>,
  edits: Map<string, string> = new Map(),
  pairs: Pairs = NO_PAIRS,
): string | undefined {
  const { body, kind } = entryBody(item, pairs);
  if (body === undefined) return undefined;
  const id = escapeHtml(item.id);
  if (pairs.shown.has(item.id)) return `<article class="entry ${escapeHtml(kind)}" data-id="${id}" hidden></article>`;
  const label = labels.get(item.id);
  const edit = edits.get(item.id);
  const head = [
    label ? `<span class="label">${escapeHtml(label)}</span>` : "",
    edit ? `<a class="edited" href="#e-${escapeHtml(edit)}">edited later</a>` : "",
    `<a class="permalink" href="#e-${id}" title="Link to this entry">#</a>`,
  ].join("");
  return `<article class="entry ${escapeHtml(kind)}" id="e-${id}" data-id="${id}"><div class="entry-head">${head}</div>${body}${when(item.timestamp)}</article>`;
}

/** Pairs the tool calls of a window with their results (a result's last entry wins). */
function pairsOf(input: EntriesInput): Pairs {
  const results = new Map<string, PairedResult>();
  for (const { id, type, entry } of input.entries) {
    const m = entry.message as Json | undefined;
    if (type === "message" && m && m.role === "toolResult" && typeof m.toolCallId === "string") {
      results.set(m.toolCallId, { message: m, entryId: id });
    }
  }
  const pairs: Pairs = { byCall: new Map(), shown: new Set(), labels: input.labels, edits: input.edits ?? new Map() };
  for (const { type, entry } of input.entries) {
    const m = entry.message as Json | undefined;
    if (type !== "message" || !m || m.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const part of m.content as Json[]) {
      const paired = part?.type === "toolCall" && typeof part.id === "string" ? results.get(part.id) : undefined;
      if (!paired || pairs.shown.has(paired.entryId)) continue;
      pairs.byCall.set(part.id as string, paired);
      pairs.shown.add(paired.entryId);
    }
  }
  return pairs;
}

/** Entries as HTML, with at most {@link PAGE_BUDGET_CHARS} of Markdown parsed and code highlighted in all. */
export function renderEntries(input: EntriesInput): string {
  const pairs = pairsOf(input);
  return withBlobs(input.blobs, () =>
    withBudget(PAGE_BUDGET_CHARS, () =>
      input.entries.map((e) => renderEntry(e, input.labels, input.edits, pairs) ?? "").join(""),
    ),
  );
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** The facts line: folder, models, times, counts, totals. */
function renderFacts(view: SessionPageView): string {
  const f = view.facts;
  const facts = [
    f.cwd ? `<span class="cwd">${escapeHtml(f.cwd)}</span>` : "",
    f.models.length ? `<span>${f.models.map((m) => escapeHtml(m)).join(", ")}</span>` : "",
    f.thinkingLevel && f.thinkingLevel !== "off" ? `<span>thinking ${escapeHtml(f.thinkingLevel)}</span>` : "",
    f.firstAt ? `<span>first entry ${when(f.firstAt)}</span>` : "",
    f.lastAt ? `<span data-fact="last">last entry ${when(f.lastAt)}</span>` : "",
    `<span data-fact="messages">${plural(f.messages, "message")}</span>`,
    `<span data-fact="tool-calls">${plural(f.toolCalls, "tool call")}</span>`,
    `<span title="tokens and cost of ${escapeHtml(f.totalsOf)}"><span data-fact="totals">${grouped(f.tokens)} tokens · ${money(f.cost)}</span> <span class="muted">(${escapeHtml(f.totalsOf)})</span></span>`,
  ].filter(Boolean);
  return `<p class="facts">${facts.join(" · ")}</p>`;
}

/** The device a branch tip came from (the owner's page only), read out as "from device …". */
function deviceChip(device: string | undefined): string {
  if (device === undefined) return "";
  return ` <span class="device"><span class="visually-hidden">from device </span>${escapeHtml(oneLine(device, 100))}</span>`;
}

/** The branch tips (readers without the script, and phones before they open the tree). */
function renderTips(view: SessionPageView): string {
  if (!view.leaves || view.leaves.length < 2) return "";
  return `<nav class="branches"><details><summary>${view.leaves.length} branches</summary><ul>${view.leaves
    .map(
      (leaf) =>
        `<li${leaf.id === view.leafId ? ' class="current"' : ""}><a href="${escapeHtml(`${view.base}?leaf=${encodeURIComponent(leaf.id)}`)}">${escapeHtml(oneLine(leaf.preview || leaf.id, 80))}</a>${deviceChip(leaf.device)} ${when(leaf.timestamp, "tip-time")}</li>`,
    )
    .join("")}</ul></details></nav>`;
}

/** Links to the window before and after the one shown (the script loads them in place). */
function renderWindowLinks(view: SessionPageView, leafQuery: string): { earlier: string; later: string } {
  const { start, end, total } = view.window;
  const earlier = start
    ? `<p class="more earlier"><a data-before="${start}" href="${escapeHtml(`${view.base}?${leafQuery}before=${start}`)}">Show ${plural(start, "earlier entry", "earlier entries")}</a></p>`
    : "";
  const later =
    end < total
      ? `<p class="more later"><a data-from="${end}" href="${escapeHtml(`${view.base}?${leafQuery}from=${end}`)}">Show ${plural(total - end, "later entry", "later entries")}</a></p>`
      : "";
  return { earlier, later };
}

/** The whole page. */
export function renderPage(view: SessionPageView): string {
  const leafQuery = view.leafId && view.branches ? `leaf=${encodeURIComponent(view.leafId)}&` : "";
  const { earlier, later } = renderWindowLinks(view, leafQuery);
  const contextQuery = leafQuery ? `?leaf=${encodeURIComponent(view.leafId ?? "")}` : "";
  const sentences = [view.empty, view.problems]
    .filter(Boolean)
    .map((s) => `<p class="notice-line">${escapeHtml(s)}</p>`)
    .join("");
  const tree = view.branches
    ? `<aside id="tree-pane" aria-label="Session tree"><details class="tree-fold" open><summary>Tree</summary><div id="tree"></div></details>${renderTips(view)}</aside>`
    : "";
  // The tree is asked for while the page is still parsing (the script takes the preloaded answer).
  const preload = view.branches
    ? `<link rel="preload" href="${escapeHtml(`${view.base}/tree`)}" as="fetch" crossorigin="anonymous">\n`
    : "";
  return `${documentHead(oneLine(plainText(view.facts.title), 80), SHARE_CSS, `${preload}<script src="/s/assets/app.js" defer></script>\n${cardHead(view)}${view.host?.head ?? ""}`)}
<body class="${view.branches ? "with-tree" : ""}" data-base="${escapeHtml(view.base)}" data-live="${view.live ? "1" : "0"}" data-leaf="${escapeHtml(view.leafId ?? "")}" data-start="${view.window.start}" data-end="${view.window.end}" data-total="${view.window.total}">
<header>
<h1>${escapeHtml(oneLine(plainText(view.facts.title), 200))}</h1>
${renderFacts(view)}
<p class="notes">${view.notes.map((n) => escapeHtml(n)).join(" · ")} · <a href="${escapeHtml(`${view.base}/raw`)}">JSONL</a> · <a href="${escapeHtml(`${view.base}/context${contextQuery}`)}">context</a>${view.card ? ` · <a href="${escapeHtml(view.card.markdown)}" type="text/markdown">Markdown</a>` : ""}<span class="keys"> · keys: T thinking · O tool output · / search · j/k user messages</span></p>
${view.host?.toolbar ?? ""}</header>
<div class="layout">
${tree}<main id="entries">
${sentences}${earlier}${renderEntries(view)}${later}
</main>
</div>
<footer><p class="muted" id="live-status"></p></footer>
</body>
</html>
`;
}

/** A small page in the share page's style: an error (a missing, revoked or expired link, a missing page). */
export function renderNotice(input: { title: string; message: string; card?: LinkCard }): string {
  const card = input.card
    ? cardTags({ title: input.title, description: input.message, alt: input.title }, input.card)
    : "";
  return `${documentHead(input.title, SHARE_CSS, card)}
<body class="notice">
<header><h1>${escapeHtml(input.title)}</h1></header>
<main><p>${escapeHtml(input.message)}</p></main>
<footer><p class="muted">pisync</p></footer>
</body>
</html>
`;
}
