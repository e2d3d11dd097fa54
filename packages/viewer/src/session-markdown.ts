/**
 * A branch as Markdown, for agents that read links and for pasting into an issue: user and
 * assistant text, thinking marked, tool calls with their arguments and results (long outputs
 * cut, their size shown), edits as unified diffs. Its input is the masked view a page is made
 * from. Session text is hostile: whatever is fenced gets a fence longer than any backtick run
 * inside it, and a message's own unclosed fence is closed where the message ends, so nothing a
 * session holds can swallow what follows it.
 */
import { blobImageSrc, withBlobs } from "./blob-images.js";
import { plainText } from "./markdown.js";
import { attachmentsMarkdown, type MarkdownTools, ompEntryMarkdown, ompMessageMarkdown } from "./omp-markdown.js";
import { type DiffLine, diffReplacements, parseDiff, replacementsOf } from "./tools/diff.js";
import { count, num, obj, resultText, sizeOf, str } from "./tools/fields.js";
import type { PageEntry, SessionFacts } from "./view.js";

/** Characters of one tool output (or argument) shown; the rest is named with its size. */
export const MD_OUTPUT_MAX_CHARS = 4000;
/** Characters of one message's text shown. */
export const MD_TEXT_MAX_CHARS = 64 * 1024;

type Json = Record<string, unknown>;

/** `text` in a code fence longer than any backtick run inside it (at least three). */
export function fenced(text: string, lang = ""): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  // The info string is a word: a hostile language cannot add text after the fence.
  const info = lang.replace(/[^A-Za-z0-9_+-]/g, "").slice(0, 20);
  return `${fence}${info}\n${text}${text.endsWith("\n") || text === "" ? "" : "\n"}${fence}`;
}

/** A CommonMark fence opening or closing line: up to three spaces, then three or more ` or ~. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * A message's Markdown with a fence it leaves open closed at its end (CommonMark would run it
 * on to the end of the document, over every entry after it).
 */
export function closeFences(text: string): string {
  let open: string | undefined;
  for (const line of text.split("\n")) {
    const m = FENCE_LINE.exec(line);
    if (!m) continue;
    const [, fence, rest] = m;
    if (open === undefined) {
      // A backtick fence's info string holds no backtick (else the line is not a fence).
      if (!(fence[0] === "`" && rest.includes("`"))) open = fence;
    } else if (fence[0] === open[0] && fence.length >= open.length && rest.trim() === "") {
      open = undefined;
    }
  }
  return open === undefined ? text : `${text}\n${open}`;
}

/** A text cut to `max` characters, with what was left out named. */
function cut(text: string, max: number): { text: string; note: string } {
  if (text.length <= max) return { text, note: "" };
  const lines = text.split("\n").length;
  return {
    text: text.slice(0, max),
    note: `\n_(cut: ${sizeOf(text)}, ${count(lines, "line")} in all; the first ${max.toLocaleString("en-US")} characters are shown, the JSONL download has the rest)_`,
  };
}

/** A tool output or argument, fenced and cut. */
function output(text: string, lang = ""): string {
  const { text: shown, note } = cut(text, MD_OUTPUT_MAX_CHARS);
  return `${fenced(shown, lang)}${note}`;
}

/** Inline code for a short field (a tool name, a path), on one line, safe from its backticks. */
export function inlineCode(value: string): string {
  const line = value.replace(/\s+/g, " ").slice(0, 300);
  let longest = 0;
  for (const run of line.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const ticks = "`".repeat(longest + 1);
  return `${ticks} ${line} ${ticks}`;
}

/** One line of plain words (a heading's or a list's), Markdown marks escaped. */
export function plainLine(value: string, max = 200): string {
  const line = value.replace(/\s+/g, " ").trim();
  const shown = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  // Only marks that could start code, emphasis, a link or HTML: the words stay readable as they are.
  return shown.replace(/[\\`*[\]<>]/g, (c) => `\\${c}`);
}

/** A message's own Markdown, cut, its open fence closed. */
function prose(text: string): string {
  const { text: shown, note } = cut(text, MD_TEXT_MAX_CHARS);
  return `${closeFences(shown)}${note}`;
}

/** Every line of a block quoted (thinking, summaries). */
function quoted(text: string): string {
  return text
    .split("\n")
    .map((l) => (l ? `> ${l}` : ">"))
    .join("\n");
}

/** Diff lines as a unified diff's text. */
function unified(lines: DiffLine[]): string {
  return lines
    .map((l) => {
      if (l.kind === "add") return `+${l.text}`;
      if (l.kind === "del") return `-${l.text}`;
      if (l.kind === "ctx") return ` ${l.text}`;
      if (l.kind === "hunk") return l.text.startsWith("@@") ? l.text : `@@ ${l.text} @@`;
      return l.kind === "skip" ? "@@ … @@" : "";
    })
    .filter((l) => l !== "")
    .join("\n");
}

/** The text parts of a message's content (a string counts as one). */
function parts(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map(obj) : [];
}

/** One tool call: its name, then its arguments (an edit's as the diff it asks for). */
function toolCall(part: Json): string {
  const name = str(part.name) ?? "tool";
  const args = obj(part.arguments);
  const path = str(args.path) ?? str(args.file_path);
  const head = `**Tool call** ${inlineCode(name)}${path ? ` on ${inlineCode(path)}` : ""}`;
  if (name === "edit") {
    const lines = diffReplacements(replacementsOf(args));
    if (lines.length) return `${head}\n\n${output(unified(lines), "diff")}`;
  }
  if (name === "bash" && typeof args.command === "string") return `${head}\n\n${output(args.command, "sh")}`;
  if (name === "write" && typeof args.content === "string") {
    return `${head} (${sizeOf(args.content)})\n\n${output(args.content)}`;
  }
  const rest = Object.fromEntries(Object.entries(args).filter(([key]) => key !== "path" && key !== "file_path"));
  return Object.keys(rest).length ? `${head}\n\n${output(JSON.stringify(rest, null, 2), "json")}` : head;
}

/** A tool result: its name and outcome, the output (an edit's stored diff when it has one). */
function toolResult(message: Json): string {
  const name = str(message.toolName) ?? "tool";
  const error = message.isError === true;
  const details = obj(message.details);
  const head = `### Tool result ${inlineCode(name)}${error ? " (error)" : ""}`;
  const text = resultText(message);
  const images = parts(message.content).filter((p) => p.type === "image").length;
  const pieces = [head];
  if (name === "edit" && !error) {
    // The diff pi stored (with the file's line numbers) says more than its success sentence.
    const stored = [str(details.patch), str(details.diff)].map((t) => (t ? parseDiff(t) : undefined));
    const lines = stored.find((l) => l?.some((d) => d.kind === "add" || d.kind === "del"));
    if (lines) pieces.push(output(unified(lines), "diff"));
    else if (text) pieces.push(output(text));
  } else if (text) {
    pieces.push(output(text));
  }
  if (images) pieces.push(imagesMarkdown(message.content));
  if (!text && !images) pieces.push("_(no output)_");
  return pieces.join("\n\n");
}

// Images kept as blobs (oh-my-pi's `blob:sha256:`), linked where this origin serves them.
/** A message's images: blob images as Markdown images (see `withBlobs`), the others counted as not included. */
function imagesMarkdown(content: unknown): string {
  const images = parts(content).filter((p) => p.type === "image");
  const linked = images.map((p) => blobImageSrc(p.mimeType, p.data)).filter((src) => src !== undefined);
  const rest = images.length - linked.length;
  return [
    ...linked.map((src) => `![image](${src})`),
    ...(rest ? [`_(${count(rest, "image")} not included)_`] : []),
  ].join("\n\n");
}

/** A timestamp as "2026-01-01 09:00:02 UTC". */
function when(timestamp: string | undefined): string {
  return timestamp && !Number.isNaN(Date.parse(timestamp))
    ? ` · ${new Date(timestamp).toISOString().slice(0, 19).replace("T", " ")} UTC`
    : "";
}

/** A message entry as Markdown (user, assistant, tool result, bash, summaries, custom, system). */
function message(m: Json, at: string): string {
  const role = str(m.role) ?? "message";
  if (role === "user") {
    const text = parts(m.content)
      .filter((p) => p.type === "text")
      .map((p) => str(p.text) ?? "")
      .join("\n\n");
    const images = parts(m.content).filter((p) => p.type === "image").length;
    const attached = attachmentsMarkdown(m, MD_TOOLS);
    return `## User${at}\n\n${prose(text)}${images ? `\n\n${imagesMarkdown(m.content)}` : ""}${attached ? `\n\n${attached}` : ""}`;
  }
  if (role === "assistant") {
    const model = str(m.model) ? ` · ${plainLine(`${str(m.provider) ?? "?"}/${str(m.model)}`, 80)}` : "";
    const body = parts(m.content).map((p) => {
      if (p.type === "text") return prose(str(p.text) ?? "");
      if (p.type === "thinking")
        return `> **Thinking**\n>\n${quoted(cut(str(p.thinking) ?? "", MD_TEXT_MAX_CHARS).text)}`;
      if (p.type === "toolCall") return toolCall(p);
      if (p.type === "image") {
        const src = blobImageSrc(p.mimeType, p.data);
        return src ? `![image](${src})` : "_(an image, not included)_";
      }
      return "";
    });
    if (m.stopReason === "error") body.push(`**Error:** ${plainLine(str(m.errorMessage) ?? "the model failed", 500)}`);
    if (m.stopReason === "aborted") body.push("_(aborted)_");
    return [`## Assistant${model}${at}`, ...body.filter(Boolean)].join("\n\n");
  }
  if (role === "toolResult") return toolResult(m).replace("### Tool result", `### Tool result${at}`);
  if (role === "bashExecution") {
    const exit = num(m.exitCode);
    return `## Bash${at}${exit !== undefined && exit !== 0 ? ` (exit ${exit})` : ""}\n\n${output(`$ ${str(m.command) ?? ""}`, "sh")}\n\n${output(str(m.output) ?? "")}`;
  }
  if (role === "branchSummary" || role === "compactionSummary") {
    return `## ${role === "branchSummary" ? "Branch summary" : "Compaction summary"}${at}\n\n${quoted(prose(str(m.summary) ?? ""))}`;
  }
  if (role === "system") {
    const text = parts(m.content).map((p) => str(p.text) ?? "");
    return `## System prompt${at}\n\n${output(text.join("\n"))}`;
  }
  const omp = ompMessageMarkdown(m, at, MD_TOOLS);
  if (omp !== undefined) return omp;
  const text = parts(m.content).map((p) => str(p.text) ?? "");
  return `## ${plainLine(role, 60)}${at}\n\n${prose(text.join("\n\n"))}`;
}

// oh-my-pi's and rho's kinds (omp-markdown.ts), written with this document's helpers.
const MD_TOOLS: MarkdownTools = { output, prose, plainLine, inlineCode };

/** One entry of the path as Markdown ("" for entries a reader needs nothing of). */
export function entryMarkdown(item: PageEntry): string {
  const e = item.entry as Json;
  const at = when(item.timestamp);
  // Too deep or too large to walk: its line's text, fenced, as pages show it (never dropped).
  if (item.asText) {
    const start = item.asText.cut ? " (its start: the JSONL has it whole)" : "";
    return `## ${plainLine(item.type, 60)}${at}\n\n_This entry is ${item.asText.why}: shown as its text${start}._\n\n${output(item.asText.text, "json")}`;
  }
  const omp = ompEntryMarkdown(item.type, e, at, MD_TOOLS);
  if (omp !== undefined) return omp;
  switch (item.type) {
    case "message":
      return message(obj(e.message), at);
    case "compaction":
    case "branch_summary":
      return `## ${item.type === "compaction" ? "Compaction summary" : "Branch summary"}${at}\n\n${quoted(prose(str(e.summary) ?? ""))}`;
    case "custom_message":
      return `## ${plainLine(str(e.customType) ?? "custom", 60)}${at}\n\n${prose(
        parts(e.content)
          .map((p) => str(p.text) ?? "")
          .join("\n\n"),
      )}`;
    case "model_change":
      return `_Model: ${plainLine(`${str(e.provider) ?? "?"}/${str(e.modelId) ?? "?"}`, 80)}_`;
    case "thinking_level_change":
      return `_Thinking level: ${plainLine(str(e.thinkingLevel) ?? "off", 20)}_`;
    case "session_info":
      return str(e.name) ? `_Named: ${plainLine(str(e.name) ?? "", 200)}_` : "";
    case "label":
      return str(e.label) ? `_Label: ${plainLine(str(e.label) ?? "", 200)}_` : "";
    default:
      return "";
  }
}

/** The entries of a window as Markdown, each section ending in a blank line. */
export function entriesMarkdown(entries: readonly PageEntry[], blobs?: string): string {
  return withBlobs(blobs, () =>
    entries
      .map(entryMarkdown)
      .filter(Boolean)
      .map((s) => `${s}\n\n`)
      .join(""),
  );
}

/** What the document says of where it comes from. */
export interface MarkdownSource {
  /** The page's URL, or undefined when none is known. */
  page?: string;
  /** The shown leaf. */
  leafId: string | null;
  /** Sentences about the view (what is masked, when the link expires). */
  notes: string[];
}

/** The document's start: the title and the facts of the branch. */
export function markdownHead(facts: SessionFacts, source: MarkdownSource): string {
  const money = facts.cost > 0 && facts.cost < 0.01 ? `$${facts.cost.toFixed(4)}` : `$${facts.cost.toFixed(2)}`;
  const lines = [
    `# ${plainLine(plainText(facts.title), 200) || "Session"}`,
    "",
    facts.models.length ? `- Model: ${facts.models.map((m) => plainLine(m, 80)).join(", ")}` : "",
    facts.cwd ? `- Folder: ${inlineCode(facts.cwd)}` : "",
    `- ${count(facts.messages, "message")}, ${count(facts.toolCalls, "tool call")}; ${facts.tokens.toLocaleString("en-US")} tokens, ${money} (${plainLine(facts.totalsOf, 40)})`,
    facts.firstAt
      ? `- From ${facts.firstAt.slice(0, 16).replace("T", " ")} to ${(facts.lastAt ?? facts.firstAt).slice(0, 16).replace("T", " ")} UTC`
      : "",
    source.leafId ? `- Branch ending at entry ${inlineCode(source.leafId)}` : "",
    source.page ? `- Page: <${source.page}>` : "",
    ...source.notes.map((n) => `- ${plainLine(n, 200)}`),
  ].filter((l, i) => l !== "" || i === 1);
  return `${lines.join("\n")}\n\n---\n\n`;
}
