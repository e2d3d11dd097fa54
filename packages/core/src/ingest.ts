/**
 * Indexing an appended body: its lines become tree records (stored with the commit), its
 * problems are reported, and the session's summary moves forward. Every complete line is
 * kept verbatim whatever it holds; only what pi can read becomes an entry.
 */

import {
  addUsage,
  emptyTotals,
  findHeader,
  forEachLine,
  headerVersion,
  importedLinesOf,
  isObject,
  type Json,
  type LineRecord,
  type LineSpan,
  lineProblem,
  type Problem,
  readLine,
  recordOf,
  recordProblem,
  type SessionHeader,
  titleSlotOf,
  usageOfEntry,
  v1EntryId,
} from "@pisync/format";
import { FIELD_LIMITS } from "@pisync/protocol";
import type { GenerationState, SessionSummary } from "@pisync/store";
import { boundedSummary } from "./bounds.js";
import { BadRequest } from "./errors.js";
import { advanceRollup } from "./usage-rollup.js";

/** Where the body starts in its generation. */
export interface IngestStart {
  offset: number;
  /** The next line's number (1 for a new file) and pi's next value index (see LineRecord.value). */
  line: number;
  values: number;
  /** The header's version, once known. */
  version: number;
}

export interface IngestedBody {
  header?: SessionHeader;
  /** The header's line number (1-based, in the generation), when this body holds it. */
  headerLine?: number;
  records: LineRecord[];
  problems: Problem[];
  /** A short text for message entries, by line (the tree's preview). */
  previews: Record<number, string>;
  /** Lines and pi's values in the generation after this body. */
  lines: number;
  values: number;
  /** Parsed entries of the records, in order (for the summary). */
  entries: unknown[];
  /** The title of oh-my-pi's title slot, when the body starts the file with one. */
  slotTitle?: string;
  /** The blobs (`blob:sha256:<hex>`) the body names, each once. */
  blobRefs: string[];
}

/** Blobs a summary lists (64 hex digits each: 32 KB at most beside the head). */
export const MAX_BLOB_REFS = 500;
const BLOB_MARK = new TextEncoder().encode("blob:sha256:");
const BLOB_REF = /blob:sha256:([a-f0-9]{64})/g;

/** The blobs a body names, each once (bytes are searched first: most bodies name none). */
function blobRefsOf(body: Uint8Array): string[] {
  if (Buffer.from(body.buffer, body.byteOffset, body.byteLength).indexOf(BLOB_MARK) < 0) return [];
  return [...new Set([...new TextDecoder().decode(body).matchAll(BLOB_REF)].map((m) => m[1]))];
}

const PREVIEW_LENGTH = FIELD_LIMITS.preview;

/** Whether a stored preview was cut (its entry's text runs on past it). */
export function isCutPreview(preview: string): boolean {
  return preview.length === PREVIEW_LENGTH && preview.endsWith("…");
}

/** The text of a message's content: a string, or its text parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (isObject(part) && part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .filter(Boolean)
    .join(" ");
}

/**
 * A one-line preview of an entry, for the tree. `mask` rewrites the entry's text before it is
 * cut (a share masks credentials first, so none can cross the cut half shown).
 */
export function previewOf(entry: unknown, mask?: (text: string) => string): string | undefined {
  if (!isObject(entry)) return undefined;
  let text = "";
  if (entry.type === "message" && isObject(entry.message)) {
    const m = entry.message;
    if (m.role === "bashExecution") text = `$ ${m.command ?? ""}`;
    else if (m.role === "toolResult") text = `${m.toolName ?? "tool"}: ${contentText(m.content)}`;
    else {
      text = contentText(m.content);
      if (!text && Array.isArray(m.content)) {
        const call = m.content.find((p) => isObject(p) && p.type === "toolCall") as Json | undefined;
        if (call) text = `→ ${call.name}`;
      }
    }
  } else if (entry.type === "compaction" || entry.type === "branch_summary") text = String(entry.summary ?? "");
  else if (entry.type === "custom_message") text = contentText(entry.content);
  else if (entry.type === "session_info") text = String(entry.name ?? "");
  else if (entry.type === "label") text = String(entry.label ?? "");
  if (mask && text) text = mask(text);
  text = text.replace(/\s+/g, " ").trim();
  return text ? (text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH - 1)}…` : text) : undefined;
}

/**
 * Indexes a body of complete lines appended at `start`. At offset 0 the first JSON value must
 * be the session header, and its id must be `sessionId`; oh-my-pi's title slot line may come
 * before it (oh-my-pi writes one; it is stored like any line and read past).
 * @throws BadRequest at offset 0 when the header is missing, or names another session id.
 */
export function ingestBody(body: Uint8Array, start: IngestStart, sessionId: string): IngestedBody {
  const result: IngestedBody = {
    records: [],
    problems: [],
    previews: {},
    lines: start.line - 1,
    values: start.values,
    entries: [],
    blobRefs: blobRefsOf(body),
  };
  // A first body starts the file: the header is found by pi's rule before anything is kept.
  const found = start.offset === 0 ? findHeader(body) : undefined;
  if (found && !found.header) {
    throw new BadRequest(
      found.problems.length
        ? "at offset 0 the first JSON value must be the session header"
        : "at offset 0 the body must hold the session header",
    );
  }
  if (found?.header && found.header.id !== sessionId) {
    throw new BadRequest(`the header's id ${JSON.stringify(found.header.id)} is not the session id ${sessionId}`);
  }
  let awaitingHeader = found !== undefined;
  let version = start.version;
  const spans: LineSpan[] = [];
  forEachLine(body, (span) => spans.push(span), start.line);
  for (const local of spans) {
    const span: LineSpan = { line: local.line, offset: start.offset + local.offset, length: local.length };
    result.lines = local.line;
    if (found && local.line === found.titleLine) {
      result.problems.push(...found.problems);
      result.slotTitle = titleSlotOf(body.subarray(local.offset, local.offset + local.length))?.title;
      continue;
    }
    if (found?.header && local.line === found.headerLine) {
      result.header = found.header;
      result.headerLine = local.line;
      version = headerVersion(found.header);
      awaitingHeader = false;
      result.values++;
      continue;
    }
    const read = readLine(body, local, span.offset === 0);
    const problem = lineProblem(span, read, !awaitingHeader || start.offset > 0);
    if (read.kind === "value") result.values++;
    if (problem) result.problems.push(problem);
    if (problem || read.kind !== "value") continue;
    const record = recordOf(span, read.value, result.values - 1);
    const invalid = recordProblem(record, version);
    if (invalid) result.problems.push(invalid);
    result.records.push(record);
    result.entries.push(read.value);
    const preview = previewOf(read.value);
    if (preview) result.previews[record.line] = preview;
  }
  return result;
}

const MAX_PROBLEM_SAMPLES = 20;
/** Models kept in a summary (the library filters by them); a session naming more keeps its first. */
const MAX_MODELS = 20;

/** The `provider/model` an entry names: a model change, or the model that wrote an assistant message. */
function modelOf(entry: Record<string, unknown>): string | undefined {
  const text = (value: unknown) => (typeof value === "string" ? value.slice(0, FIELD_LIMITS.model) : undefined);
  if (entry.type === "model_change") {
    const id = text(entry.modelId);
    return id ? `${text(entry.provider) ?? "?"}/${id}` : undefined;
  }
  if (entry.type !== "message" || !isObject(entry.message) || entry.message.role !== "assistant") return undefined;
  const id = text(entry.message.model);
  return id ? `${text(entry.message.provider) ?? "?"}/${id}` : undefined;
}

/**
 * An entry's time as an ISO instant, or undefined when it is not a time: the library sorts,
 * filters and pages by it (its cursor carries it), so a session's text must not choose it.
 */
function instantOf(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > 40) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Who sent a body, and when: what a usage rollup is attributed to. */
export interface IngestSource {
  /** The public id of the token that sent it ("" when unknown). */
  device: string;
  /** The commit's time (ISO 8601). */
  now: string;
}

/**
 * The summary after a body: counts, name, leaf, first message, tokens and cost, models, last
 * entry time, and the usage rollup (kept from a session's first body on: a head written before
 * rollups were kept stays without one rather than with a partial one).
 */
export function advanceSummary(
  summary: SessionSummary,
  body: IngestedBody,
  version: number,
  source: IngestSource,
): SessionSummary {
  const next: SessionSummary = { ...summary, problems: [...summary.problems] };
  if (body.slotTitle !== undefined) next.slotTitle = body.slotTitle.trim() || undefined;
  if (body.header) {
    next.hasHeader = true;
    // oh-my-pi keeps the title in the header too.
    if (typeof body.header.title === "string" && body.header.title.trim()) next.name = body.header.title.trim();
    next.cwd = typeof body.header.cwd === "string" ? body.header.cwd : undefined;
    next.startedAt = typeof body.header.timestamp === "string" ? body.header.timestamp : undefined;
    next.headerVersion = version;
  }
  const totals = emptyTotals();
  body.records.forEach((record, i) => {
    const entry = body.entries[i];
    next.entries++;
    // The default leaf: the last entry with an id (a value without one is on no branch).
    const id = version < 2 && record.isObject ? v1EntryId(record.line) : record.id;
    if (id !== undefined) next.leafId = id;
    if (!isObject(entry)) return;
    // The latest title in file order: pi's session_info name, oh-my-pi's title_change.
    if (record.type === "session_info") {
      next.name = typeof entry.name === "string" ? entry.name.trim() || undefined : undefined;
    } else if (record.type === "title_change" && typeof entry.title === "string" && entry.title.trim()) {
      next.name = entry.title.trim();
    }
    if (next.firstMessage === undefined && record.type === "message" && isObject(entry.message)) {
      if (entry.message.role === "user") next.firstMessage = body.previews[record.line] ?? "";
    }
    addUsage(totals, usageOfEntry(entry));
    const at = instantOf(entry.timestamp);
    if (at && (next.lastEntryAt === undefined || at > next.lastEntryAt)) next.lastEntryAt = at;
    const model = modelOf(entry);
    if (model && !next.models?.includes(model) && (next.models?.length ?? 0) < MAX_MODELS) {
      next.models = [...(next.models ?? []), model];
    }
  });
  // The title slot is rewritten on every rename: when it names one, it is the latest.
  if (next.slotTitle) next.name = next.slotTitle;
  next.tokens += totals.totalTokens;
  next.cost = Math.round((next.cost + totals.cost) * 1e6) / 1e6;
  if (summary.usage || summary.entries === 0) {
    // A file imported from elsewhere (its header says how many lines came with it): the usage of
    // those lines is not this user's spending, and stays out of the rollup insights add up.
    const imported = body.header ? importedLinesOf(body.header) : undefined;
    const through =
      body.header && body.headerLine !== undefined
        ? imported === undefined
          ? undefined
          : body.headerLine + imported
        : summary.usage?.importedThrough;
    const own = through === undefined ? body.entries : body.entries.filter((_, i) => body.records[i].line > through);
    next.usage = advanceRollup(summary.usage, own, source.device, source.now);
    if (through === undefined) delete next.usage.importedThrough;
    else next.usage.importedThrough = through;
  }
  const named = body.blobRefs.filter((hash) => !next.blobRefs?.includes(hash));
  // A list kept from the generation's first body names every blob (an empty one says "none");
  // a head kept before lists were gets one marked cut: its older lines were never listed.
  if (summary.blobRefs === undefined && summary.entries === 0) next.blobRefs = [];
  else if (summary.blobRefs === undefined && named.length) next.blobRefsCut = true;
  if (named.length) {
    const kept = [...(next.blobRefs ?? []), ...named];
    next.blobRefs = kept.slice(0, MAX_BLOB_REFS);
    if (kept.length > MAX_BLOB_REFS) next.blobRefsCut = true;
  }
  next.problemCount += body.problems.length;
  next.problems.push(...body.problems.slice(0, MAX_PROBLEM_SAMPLES - next.problems.length));
  return boundedSummary(next, true);
}

/** The summary of an empty generation. */
export function emptySummary(): SessionSummary {
  return { hasHeader: false, entries: 0, tokens: 0, cost: 0, leafId: null, problemCount: 0, problems: [] };
}

/** The generation state after a body. */
export function advanceGeneration(state: GenerationState, body: IngestedBody, length: number): GenerationState {
  return { ...state, length: state.length + length, lines: body.lines, values: body.values };
}
