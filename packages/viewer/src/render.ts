/**
 * The share page, rendered on the server: readable without JavaScript, on a phone and on a
 * desktop, light and dark. Every string from the session is escaped (escape.ts); Markdown goes
 * through markdown.ts; thinking, tool calls and tool results are collapsed behind a one-line
 * summary (<details>), so the page needs no script to work.
 */
import { escapeHtml, safeImageSrc } from "./escape.js";
import { PAGE_BUDGET_CHARS, renderCode, renderMarkdown, withBudget } from "./markdown.js";

type Json = Record<string, unknown>;

export interface PageEntry {
  id: string;
  type: string;
  timestamp?: string;
  entry: Json;
}

export interface PageInput {
  /** Where this share lives: `/s/<token>`. */
  base: string;
  title: string;
  cwd?: string;
  startedAt?: string;
  updatedAt?: string;
  model?: string;
  thinkingLevel?: string;
  tokens: number;
  cost: number;
  /** Entries of the path shown, root first (possibly only the latest ones). */
  entries: PageEntry[];
  /** How many path entries come before the first shown (a link loads them). */
  earlier: number;
  /** The leaf shown. */
  leafId: string | null;
  /** Other tips of the tree, for a whole share's branch switcher. */
  leaves?: { id: string; preview: string; timestamp?: string }[];
  labels: Map<string, string>;
  /** Credentials masked in what the share shows. */
  masked: number;
  maskSecrets: boolean;
  live: boolean;
  pinned: boolean;
  expiresAt: string;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function contentParts(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content.filter((p) => p && typeof p === "object") as Json[]) : [];
}

function image(part: Json): string {
  const src = safeImageSrc(part.mimeType, part.data);
  return src
    ? `<img class="shot" alt="image" src="${escapeHtml(src)}">`
    : `<p class="muted">[image not shown: ${escapeHtml(part.mimeType)}]</p>`;
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
      if (part.type === "text") return renderMarkdown(text(part.text));
      if (part.type === "image") return image(part);
      return "";
    })
    .join("");
}

function renderAssistant(message: Json): string {
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
      const args = JSON.stringify(part.arguments ?? {}, null, 2);
      return details(
        "tool-call",
        `→ <code>${escapeHtml(part.name)}</code> <span class="muted">${escapeHtml(oneLine(JSON.stringify(part.arguments ?? {}), 80))}</span>`,
        renderCode(args, "json"),
      );
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
  return `<div class="who">Assistant ${model}</div>${html.join("")}${notes.join("")}`;
}

function renderMessage(message: Json): string | undefined {
  switch (message.role) {
    case "user":
      return `<div class="who">User</div>${renderContent(message.content)}`;
    case "assistant":
      return renderAssistant(message);
    case "toolResult": {
      const parts = contentParts(message.content);
      const output = parts
        .filter((p) => p.type === "text")
        .map((p) => text(p.text))
        .join("\n");
      const lines = output ? output.split("\n").length : 0;
      const summary = `${message.isError ? "✗" : "←"} <code>${escapeHtml(message.toolName)}</code> <span class="muted">${escapeHtml(oneLine(output, 80))} (${lines} line${lines === 1 ? "" : "s"})</span>`;
      return details(
        "tool-result",
        summary,
        `${output ? renderCode(output) : ""}${parts
          .filter((p) => p.type === "image")
          .map(image)
          .join("")}`,
      );
    }
    case "bashExecution": {
      const exit = message.cancelled ? "cancelled" : `exit ${escapeHtml(message.exitCode ?? "?")}`;
      return details(
        "bash",
        `<code>$ ${escapeHtml(oneLine(text(message.command), 90))}</code> <span class="muted">${exit}</span>`,
        renderCode(text(message.output), "bash"),
      );
    }
    case "custom":
      return message.display === false
        ? undefined
        : `<div class="who">${escapeHtml(message.customType)}</div>${renderContent(message.content)}`;
    case "branchSummary":
      return `<div class="who">Branch summary</div>${renderMarkdown(text(message.summary))}`;
    case "compactionSummary":
      return `<div class="who">Compacted</div>${renderMarkdown(text(message.summary))}`;
    default:
      return undefined;
  }
}

/** One entry as HTML; `undefined` for entries a reader need not see (labels, extension state). */
export function renderEntry(item: PageEntry, labels: Map<string, string>): string | undefined {
  const e = item.entry;
  let body: string | undefined;
  let kind = item.type;
  switch (item.type) {
    case "message": {
      const message = e.message;
      if (!message || typeof message !== "object") return undefined;
      kind = `message ${escapeHtml((message as Json).role)}`;
      body = renderMessage(message as Json);
      break;
    }
    case "custom_message":
      body =
        e.display === false
          ? undefined
          : `<div class="who">${escapeHtml(e.customType)}</div>${renderContent(e.content)}`;
      break;
    case "compaction":
      body = details(
        "summary",
        `Compacted <span class="muted">${escapeHtml(e.tokensBefore ?? "?")} tokens summarized</span>`,
        renderMarkdown(text(e.summary)),
      );
      break;
    case "branch_summary":
      body = text(e.summary)
        ? details("summary", "Summary of another branch", renderMarkdown(text(e.summary)))
        : undefined;
      break;
    case "model_change": {
      const model = typeof e.model === "string" ? e.model : `${text(e.provider)}/${text(e.modelId)}`;
      body = `<p class="event">Model → ${escapeHtml(model)}</p>`;
      break;
    }
    case "thinking_level_change":
      body = `<p class="event">Thinking level → ${escapeHtml(e.thinkingLevel ?? "off")}</p>`;
      break;
    case "session_info":
      body = `<p class="event">Named “${escapeHtml(e.name)}”</p>`;
      break;
    default:
      return undefined;
  }
  if (!body) return undefined;
  const label = labels.get(item.id);
  const time = item.timestamp
    ? `<time datetime="${escapeHtml(item.timestamp)}">${escapeHtml(item.timestamp.replace("T", " ").slice(0, 16))}</time>`
    : "";
  return `<article class="entry ${escapeHtml(kind)}" id="e-${escapeHtml(item.id)}" data-id="${escapeHtml(item.id)}">${label ? `<span class="label">${escapeHtml(label)}</span>` : ""}${body}${time}</article>`;
}

/** Entries as HTML, with at most {@link PAGE_BUDGET_CHARS} of Markdown parsed and code highlighted in all. */
export function renderEntries(entries: PageEntry[], labels: Map<string, string>): string {
  return withBudget(PAGE_BUDGET_CHARS, () => entries.map((e) => renderEntry(e, labels) ?? "").join(""));
}

function money(cost: number): string {
  return `$${cost.toFixed(cost < 1 ? 4 : 2)}`;
}

/** The start of every page, up to `</head>`: one stylesheet, and `extra` (the page's script). */
function documentHead(title: string, extra = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · pisync</title>
<link rel="stylesheet" href="/s/assets/style.css">
${extra}</head>`;
}

/** The whole page. */
export function renderPage(input: PageInput): string {
  const leafQuery = input.leafId && !input.pinned ? `leaf=${encodeURIComponent(input.leafId)}&` : "";
  const earlier = input.earlier
    ? `<p class="earlier"><a href="${escapeHtml(`${input.base}?${leafQuery}before=${input.earlier}`)}">Show ${input.earlier} earlier entr${input.earlier === 1 ? "y" : "ies"}</a></p>`
    : "";
  const switcher =
    input.leaves && input.leaves.length > 1
      ? `<nav class="branches"><details><summary>${input.leaves.length} branches</summary><ul>${input.leaves
          .map(
            (leaf) =>
              `<li${leaf.id === input.leafId ? ' class="current"' : ""}><a href="${escapeHtml(`${input.base}?leaf=${encodeURIComponent(leaf.id)}`)}">${escapeHtml(oneLine(leaf.preview || leaf.id, 80))}</a> <span class="muted">${escapeHtml((leaf.timestamp ?? "").slice(0, 16).replace("T", " "))}</span></li>`,
          )
          .join("")}</ul></details></nav>`
      : "";
  const facts = [
    input.cwd ? `<span>${escapeHtml(input.cwd)}</span>` : "",
    input.model ? `<span>${escapeHtml(input.model)}</span>` : "",
    input.thinkingLevel && input.thinkingLevel !== "off"
      ? `<span>thinking ${escapeHtml(input.thinkingLevel)}</span>`
      : "",
    input.startedAt ? `<span>started ${escapeHtml(input.startedAt.slice(0, 16).replace("T", " "))}</span>` : "",
    input.updatedAt ? `<span>updated ${escapeHtml(input.updatedAt.slice(0, 16).replace("T", " "))}</span>` : "",
    `<span>${input.tokens.toLocaleString("en-US")} tokens</span>`,
    `<span>${money(input.cost)}</span>`,
  ].filter(Boolean);
  const notes = [
    input.maskSecrets
      ? `${input.masked} credential${input.masked === 1 ? "" : "s"} masked in what this link shows`
      : "credentials are not masked in this link",
    input.pinned ? "one branch, as of its last entry" : input.live ? "live: follows the session as it grows" : "",
    `link expires ${escapeHtml(input.expiresAt.slice(0, 16).replace("T", " "))} UTC`,
  ].filter(Boolean);
  return `${documentHead(oneLine(input.title, 80), '<script src="/s/assets/app.js" defer></script>\n')}
<body data-base="${escapeHtml(input.base)}" data-live="${input.live ? "1" : "0"}" data-leaf="${escapeHtml(input.leafId ?? "")}">
<header>
<h1>${escapeHtml(oneLine(input.title, 200))}</h1>
<p class="facts">${facts.join(" · ")}</p>
<p class="notes">${notes.join(" · ")} · <a href="${escapeHtml(`${input.base}/raw`)}">JSONL</a> · <a href="${escapeHtml(`${input.base}/context${leafQuery ? `?leaf=${encodeURIComponent(input.leafId ?? "")}` : ""}`)}">context</a></p>
${switcher}
</header>
<main id="entries">
${earlier}${renderEntries(input.entries, input.labels)}
</main>
<footer><p class="muted" id="live-status"></p></footer>
</body>
</html>
`;
}

/** A small page in the share page's style: an error (missing, revoked or expired link) or the server root. */
export function renderNotice(input: { title: string; message: string }): string {
  return `${documentHead(input.title)}
<body class="notice">
<header><h1>${escapeHtml(input.title)}</h1></header>
<main><p>${escapeHtml(input.message)}</p></main>
<footer><p class="muted">pisync</p></footer>
</body>
</html>
`;
}
