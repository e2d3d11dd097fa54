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
} from "@pisync/format";
import type { IndexBatch, SearchDocument } from "./port.js";

/** Text kept of one document: bounds the index a hostile session can grow. */
export const MAX_DOCUMENT_CHARS = 32_768;
function clean(text: string): string {
  return text.slice(0, MAX_DOCUMENT_CHARS);
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part?.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
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
      const calls = parts.flatMap((p) => (p.type === "toolCall" ? [`${p.name} ${JSON.stringify(p.arguments)}`] : []));
      add({ kind: "tool_call", role: "tool", model, text: calls.join("\n") });
      break;
    }
    case "toolResult":
      add({ kind: "tool_result", role: "tool", text: `${message.toolName}\n${textOf(message.content)}` });
      break;
    case "bashExecution":
      add({ kind: "bash", role: "tool", text: `${message.command}\n${message.output}` });
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
  if (at0.from === 0 && index.header) batch.cwd = index.header.cwd;
  for (const record of index.records) {
    if (!record.isObject) continue;
    const at = { offset: at0.from + record.offset, length: record.length };
    const count = batch.documents.length;
    readEntry(index.entry(record));
    for (let i = count; i < batch.documents.length; i++) batch.documents[i].at = at;
  }
  return batch;

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
