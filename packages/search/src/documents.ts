/**
 * What of a session is searchable: its entries read with @pisync/format's parser and schemas,
 * turned into {@link SearchDocument}s, and the session facts (cwd, name, labels) a batch carries.
 */
import {
  BranchSummaryEntry,
  CompactionEntry,
  indexSession,
  LabelEntry,
  MessageEntry,
  SessionInfoEntry,
  TitleChangeEntry,
  titleSlotLength,
  titleSlotOf,
} from "@pisync/format";
import { filesTouched } from "./files.js";
import type { IndexBatch, SearchDocument } from "./port.js";

/** Text kept of one document: bounds the index a hostile session can grow. */
export const MAX_DOCUMENT_CHARS = 32_768;
/**
 * Ingest limits: an entry nested deeper than this, or on a line longer than
 * {@link MAX_LINE_BYTES}, is indexed as its line's text instead of being read field by field
 * (its bytes stay stored as they are). Recursive code (JSON.stringify, schemas) never sees it.
 */
export const MAX_DEPTH = 64;
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
function clean(text: string): string {
  return text.slice(0, MAX_DOCUMENT_CHARS);
}

/** Whether a parsed value nests deeper than `max` (walked without recursion). */
export function nestedDeeper(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== "object") continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A tool call's arguments as text (keys and values, strings as they are): what a snippet shows
 * and the words the index keeps, without JSON's quotes and escapes.
 */
function argumentsText(args: unknown): string {
  const parts: string[] = [];
  let chars = 0;
  const stack: Array<[string | undefined, unknown]> = [[undefined, args]];
  while (stack.length > 0 && chars < MAX_DOCUMENT_CHARS) {
    const [key, value] = stack.pop() as [string | undefined, unknown];
    if (value !== null && typeof value === "object") {
      const children = Array.isArray(value)
        ? value.map((v): [string | undefined, unknown] => [undefined, v])
        : Object.entries(value);
      if (key !== undefined) parts.push(`${key}:`);
      stack.push(...children.reverse()); // in order
      continue;
    }
    const text = value === undefined ? "" : String(value);
    const part = key === undefined ? text : `${key}: ${text}`;
    parts.push(part);
    chars += part.length + 1;
  }
  return parts.join("\n");
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part?.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
}

/** `files` when there are any: a document without paths carries none. */
function withFiles(files: string[]): { files?: string[] } {
  return files.length > 0 ? { files } : {};
}

function documentsOfMessage(entry: MessageEntry, time: number): SearchDocument[] {
  const message = entry.message;
  const base = { entryId: entry.id, time };
  const docs: SearchDocument[] = [];
  const add = (doc: Omit<SearchDocument, "entryId" | "time">) => {
    if (doc.text.trim() !== "") docs.push({ ...base, ...doc, text: clean(doc.text) });
  };
  switch (message.role) {
    case "user":
      add({ kind: "user", role: "user", text: textOf(message.content) });
      break;
    case "assistant": {
      const model = message.model;
      const parts = message.content;
      add({ kind: "assistant", role: "assistant", model, text: textOf(parts) });
      const thinking = parts.flatMap((p) => (p.type === "thinking" ? [p.thinking] : [])).join("\n");
      add({ kind: "thinking", role: "assistant", model, text: thinking });
      const calls = parts.flatMap((p) => (p.type === "toolCall" ? [p] : []));
      const text = calls.map((call) => `${call.name}\n${argumentsText(call.arguments)}`).join("\n");
      add({ kind: "tool_call", role: "tool", model, text, ...withFiles(filesTouched(calls)) });
      break;
    }
    case "toolResult":
      add({ kind: "tool_result", role: "tool", text: `${message.toolName}\n${textOf(message.content)}` });
      break;
    case "bashExecution":
      add({
        kind: "bash",
        role: "tool",
        text: `${message.command}\n${message.output}`,
        ...withFiles(filesTouched([], [message.command])),
      });
      break;
    case "custom":
      add({ kind: "assistant", role: "assistant", text: textOf(message.content) });
      break;
    case "branchSummary":
    case "compactionSummary":
      add({ kind: "summary", role: "assistant", text: message.summary });
      break;
  }
  return docs;
}

/**
 * Reads a run of complete lines of a session (the whole file when `from` is 0) into a batch.
 * Entries that do not match pi's schemas are skipped, as the viewer skips them. Each entry is
 * checked once, against the schema of its `type` only: this is the indexing's hot path.
 */
export function batchOf(
  bytes: Uint8Array,
  at0: { userId: string; sessionId: string; generation: number; from: number },
): IndexBatch {
  // The index alone (no tree checks, labels or name of the whole file): entries are read one by one.
  const index = indexSession(bytes);
  const batch: IndexBatch = { ...at0, to: at0.from + bytes.length, documents: [], labels: {} };
  if (at0.from === 0 && index.header) {
    batch.cwd = index.header.cwd;
    // The title a session starts with: oh-my-pi's title slot, else its header's (rho titles it there).
    const slotLength = titleSlotLength(bytes.subarray(0, 4096));
    const title = (slotLength ? titleSlotOf(bytes.subarray(0, slotLength))?.title : undefined) || index.header.title;
    if (typeof title === "string" && title.trim()) batch.name = clean(title.trim());
  }
  for (const record of index.records) {
    if (!record.isObject) continue;
    const at = { offset: at0.from + record.offset, length: record.length };
    const count = batch.documents.length;
    const raw = index.entry(record);
    if (record.length > MAX_LINE_BYTES || nestedDeeper(raw, MAX_DEPTH)) asText(raw, record);
    else readEntry(raw);
    for (let i = count; i < batch.documents.length; i++) batch.documents[i].at = at;
  }
  return batch;

  /** An entry past the ingest limits: one document of its line's text, by the entry's id. */
  function asText(raw: Record<string, unknown>, line: { offset: number; length: number }): void {
    if (typeof raw.id !== "string") return;
    // A character is at most 4 bytes: enough of the line for the longest document.
    const end = line.offset + Math.min(line.length, 4 * MAX_DOCUMENT_CHARS);
    const text = clean(new TextDecoder().decode(bytes.subarray(line.offset, end)));
    const role = (raw.message as { role?: unknown } | undefined)?.role;
    const kind = role === "user" ? "user" : role === "assistant" ? "assistant" : "tool_result";
    const time = Date.parse(String(raw.timestamp)) || 0;
    batch.documents.push({ entryId: raw.id, kind, role: kind === "tool_result" ? "tool" : kind, time, text });
  }

  function readEntry(raw: Record<string, unknown>): void {
    const time = Date.parse(String(raw.timestamp)) || 0;
    switch (raw.type) {
      case "message": {
        const message = MessageEntry.safeParse(raw);
        if (message.success) batch.documents.push(...documentsOfMessage(message.data, time));
        return;
      }
      case "compaction":
      case "branch_summary": {
        const summary = (raw.type === "compaction" ? CompactionEntry : BranchSummaryEntry).safeParse(raw);
        if (summary.success) {
          const { id, summary: text } = summary.data;
          batch.documents.push({ entryId: id, kind: "summary", role: "assistant", time, text: clean(text) });
        }
        return;
      }
      case "label": {
        const label = LabelEntry.safeParse(raw);
        if (!label.success) return;
        const text = label.data.label?.trim();
        batch.labels[label.data.targetId] = text ? clean(text) : null;
        if (text)
          batch.documents.push({ entryId: label.data.targetId, kind: "label", role: "user", time, text: clean(text) });
        return;
      }
      case "session_info":
      case "title_change": {
        const info = raw.type === "session_info" ? SessionInfoEntry.safeParse(raw) : undefined;
        const title = raw.type === "title_change" ? TitleChangeEntry.safeParse(raw) : undefined;
        const entry = info?.success ? info.data : title?.success ? title.data : undefined;
        if (!entry) return;
        const name = info?.success ? info.data.name?.trim() : title?.success ? title.data.title.trim() : undefined;
        batch.name = name ? clean(name) : null;
        if (name) batch.documents.push({ entryId: entry.id, kind: "name", role: "user", time, text: clean(name) });
        return;
      }
    }
  }
}
