/**
 * Rebuilding the LLM context for a leaf, as pi 1.x's `buildSessionContext` does (pi 1.6.0; for
 * the files pi 0.73.1 writes it answers as 0.73.1 did, but for null content, see below), plus the
 * newer spec's `retainedTail`:
 *
 * 1. Walk from the leaf to the root (guarded against cycles).
 * 2. Along the whole path: the last `thinking_level_change` sets the thinking level (default
 *    "off"); the last `model_change` or assistant message sets the model (default null).
 * 3. Select the entries: without a compaction on the path, the whole path. With one, only the
 *    LAST compaction counts: the compaction itself, then, when it carries `retainedTail` (newer
 *    spec), those messages verbatim; otherwise the path entries from `firstKeptEntryId` up to
 *    the compaction (none when that id is not on the path before it, as when a compaction that
 *    keeps nothing names itself), leaving out system messages (the compaction's own
 *    `systemMessage` stands for them); then every entry after it.
 * 4. `context_edit`: among the selected entries, the last edit of each target wins. `null`
 *    removes the target's messages; otherwise its content replaces the content of a user,
 *    assistant, tool-result or custom message (a string becomes one text block for assistant
 *    and tool-result messages). Edits of entries that are not selected (summarized, on another
 *    branch, missing) change nothing.
 * 5. Conversion: `message` → its message, with null or missing content as `[]` (system: `""`);
 *    `custom_message` → a `custom` message (null content: `[]`); `branch_summary` → a
 *    `branchSummary` message when its summary is not empty; the selected compaction → its
 *    `systemMessage` (when it has one), then a `compactionSummary` message; older compactions
 *    in the kept range and other types contribute nothing. Timestamps of built messages are
 *    `Date.parse` of the entry's (NaN when it does not parse, as in pi).
 *
 * What differs from pi 0.73.1 only matters for entries 0.73.1 never writes (system messages,
 * `context_edit`, `compaction.systemMessage`), except one rule: 0.73.1 passes a message's null
 * content through unchanged, 1.x gives `[]`. Both write header version 3, so a file cannot say
 * which wrote it: the 1.x rule applies.
 *
 * pi ignores `retainedTail`; we follow the newer spec because the newer writers that produce it
 * rely on it (they may omit `firstKeptEntryId`, and pi would then drop the kept messages). Where
 * pi throws (a `message` entry without a message, an edit without a `replacement`), that entry
 * is skipped and reported.
 */
import type { LightIndex } from "./light-index.js";
import type { PathReader, SessionContext } from "./path-reader.js";
import type { Problem } from "./problems.js";
import type { AgentMessage, SessionEntry } from "./schema.js";
import type { EntryRecord, SessionIndex } from "./session-index.js";
import { pathTo } from "./tree.js";

export type { PathReader, SessionContext } from "./path-reader.js";

/** A parsed session (see `parseSession`). */
export interface ContextSource {
  index: SessionIndex;
  /** Set when the file was read by the light index: contexts are rebuilt from it, without `index`. */
  light?: LightIndex;
}

type Entry = Record<string, unknown>;

function indexReader(index: SessionIndex): PathReader<EntryRecord> {
  return {
    type: (r) => r.type,
    id: (r) => r.id,
    thinkingLevel: (r) => r.facts?.thinkingLevel,
    modelChange: (r) => ({ provider: r.facts?.provider as string, modelId: r.facts?.modelId as string }),
    assistantModel: (r) =>
      r.facts?.hasMessage && r.role === "assistant"
        ? { provider: r.facts.messageProvider as string, modelId: r.facts.messageModel as string }
        : undefined,
    role: (r) => (r.facts?.hasMessage ? r.role : undefined),
    entry: (r) => index.entry(r),
  };
}

const entryReader: PathReader<Entry> = {
  type: (e) => e.type,
  id: (e) => e.id,
  thinkingLevel: (e) => e.thinkingLevel,
  modelChange: (e) => ({ provider: e.provider as string, modelId: e.modelId as string }),
  assistantModel: (e) => {
    const message = e.message as Entry | null | undefined;
    return message !== undefined && message !== null && message.role === "assistant"
      ? { provider: message.provider as string, modelId: message.model as string }
      : undefined;
  },
  role: (e) => (e.message as Entry | null | undefined)?.role,
  entry: (e) => e,
};

/** The last entry with an id: the default leaf (entries without one are on no branch; see SessionIndex.defaultLeaf). */
function lastWithId(entries: readonly unknown[]): Entry | undefined {
  for (let at = entries.length - 1; at >= 0; at--) {
    const e = entries[at];
    if (e && typeof e === "object" && typeof (e as Entry).id === "string") return e as Entry;
  }
  return undefined;
}

/** pi's walk over a plain entry array: a map by id (last wins), the leaf or the last entry with an id. */
function pathOverArray(entries: readonly unknown[], leafId: string | undefined): { nodes: Entry[]; cycleAt?: string } {
  const byId = new Map<unknown, Entry>();
  for (const e of entries) if (e && typeof e === "object") byId.set((e as Entry).id, e as Entry);
  let leaf = leafId ? byId.get(leafId) : undefined;
  leaf ??= lastWithId(entries);
  const reversed: Entry[] = [];
  const seen = new Set<Entry>();
  let current = leaf && typeof leaf === "object" ? leaf : undefined;
  while (current) {
    if (seen.has(current)) return { nodes: reversed.reverse(), cycleAt: String(current.id) };
    seen.add(current);
    reversed.push(current);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return { nodes: reversed.reverse() };
}

function timestampOf(entry: Entry): number {
  return new Date(entry.timestamp as string).getTime();
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Roles whose content a `context_edit` replaces (others keep theirs; a `null` edit removes any). */
const EDITABLE_ROLES = new Set<unknown>(["user", "assistant", "toolResult", "custom"]);
/** Roles whose null or missing content pi 1.x reads as `[]`. */
const CONTENT_ARRAY_ROLES = new Set<unknown>(["user", "assistant", "toolResult"]);

/**
 * Step 5 for one entry of type `type` (before edits): the messages it contributes. A `message`
 * entry without a message contributes none (reported through `report` when given).
 */
export function messagesOfEntry(type: unknown, e: Entry, report?: (problem: Problem) => void): AgentMessage[] {
  if (type === "message") {
    const message = e.message as Entry | null | undefined;
    if (isMissing(message)) {
      const id = e.id as string;
      report?.({ kind: "invalid-entry", id, message: `message entry ${id} has no message; skipped` });
      return [];
    }
    const m = message as Entry;
    if (m.role === "system" && isMissing(m.content)) return [{ ...m, content: "" } as unknown as AgentMessage];
    if (CONTENT_ARRAY_ROLES.has(m.role) && isMissing(m.content))
      return [{ ...m, content: [] } as unknown as AgentMessage];
    return [m as AgentMessage];
  }
  if (type === "custom_message") {
    return [
      {
        role: "custom",
        customType: e.customType,
        content: e.content ?? [],
        display: e.display,
        details: e.details,
        timestamp: timestampOf(e),
      } as AgentMessage,
    ];
  }
  if (type === "branch_summary") {
    return e.summary
      ? [{ role: "branchSummary", summary: e.summary, fromId: e.fromId, timestamp: timestampOf(e) } as AgentMessage]
      : [];
  }
  if (type === "compaction") {
    const summary = {
      role: "compactionSummary",
      summary: e.summary,
      tokensBefore: e.tokensBefore,
      timestamp: timestampOf(e),
    };
    return (e.systemMessage ? [e.systemMessage, summary] : [summary]) as AgentMessage[];
  }
  return [];
}

function messagesOf<N>(node: N, read: PathReader<N>, report: (problem: Problem) => void): unknown[] {
  const type = read.type(node);
  if (type !== "message" && type !== "custom_message" && type !== "branch_summary" && type !== "compaction") return [];
  const e = read.entry(node);
  return messagesOfEntry(type, e.id === undefined ? { ...e, id: read.id(node) } : e, report);
}

/** Step 4 on one entry's messages: `null` removes them; a replacement swaps the content of editable roles. */
export function applyEdit(messages: unknown[], edit: Entry | undefined): unknown[] {
  if (!edit) return messages;
  const replacement = edit.replacement as { content?: unknown } | null;
  if (replacement === null) return [];
  return messages.map((message) => {
    const m = message as Entry;
    if (!EDITABLE_ROLES.has(m.role)) return m;
    const content =
      (m.role === "assistant" || m.role === "toolResult") && typeof replacement.content === "string"
        ? [{ type: "text", text: replacement.content }]
        : replacement.content;
    return { ...m, content };
  });
}

/**
 * Step 3: the selected entries, the last compaction first when there is one; and the messages
 * its `retainedTail` carries (newer spec), which stand for the kept range.
 */
function selectEntries<N>(
  nodes: N[],
  compactionAt: number,
  read: PathReader<N>,
): { selected: N[]; retained: unknown[] } {
  if (compactionAt < 0) return { selected: nodes, retained: [] };
  const compaction = nodes[compactionAt];
  const c = read.entry(compaction);
  const selected = [compaction];
  if (Array.isArray(c.retainedTail))
    return { selected: selected.concat(nodes.slice(compactionAt + 1)), retained: c.retainedTail };
  // Ids on a path are unique (a repeated one closes a cycle, cut by the walk): search from the compaction back.
  let from = compactionAt;
  const firstKept = read.withId?.(c.firstKeptEntryId);
  for (let i = compactionAt - 1; i >= 0; i--) {
    if (read.withId ? nodes[i] === firstKept : read.id(nodes[i]) === c.firstKeptEntryId) {
      from = i;
      break;
    }
  }
  for (let i = from; i < compactionAt; i++) {
    const node = nodes[i];
    // The compaction's systemMessage stands for every system message before it.
    if (!(read.type(node) === "message" && read.role(node) === "system")) selected.push(node);
  }
  for (let i = compactionAt + 1; i < nodes.length; i++) selected.push(nodes[i]);
  return { selected, retained: [] };
}

/** Step 2 over a path, root first: the thinking level and model (the last of each, so read from the leaf up). */
function settingsOfPath<N>(nodes: N[], read: PathReader<N>): Omit<SessionContext, "messages"> {
  let thinkingLevel: unknown = "off";
  let model: SessionContext["model"] = null;
  let levelFound = false;
  let modelFound = false;
  for (let i = nodes.length - 1; i >= 0 && !(levelFound && modelFound); i--) {
    const node = nodes[i];
    const type = read.type(node);
    if (type === "thinking_level_change") {
      if (!levelFound) thinkingLevel = read.thinkingLevel(node);
      levelFound = true;
    } else if (!modelFound) {
      const set =
        type === "model_change" ? read.modelChange(node) : type === "message" ? read.assistantModel(node) : undefined;
      if (set !== undefined) {
        model = set;
        modelFound = true;
      }
    }
  }
  return { thinkingLevel: thinkingLevel as string, model };
}

/** Steps 2–5 over a path, root first. */
function contextOfPath<N>(nodes: N[], read: PathReader<N>, report: (problem: Problem) => void): SessionContext {
  const { thinkingLevel, model } = settingsOfPath(nodes, read);
  let compactionAt = nodes.length - 1;
  while (compactionAt >= 0 && read.type(nodes[compactionAt]) !== "compaction") compactionAt--;

  const { selected, retained } = selectEntries(nodes, compactionAt, read);
  read.prefetch?.(selected);
  const edits = new Map<unknown, Entry>();
  for (const node of selected) {
    if (read.type(node) !== "context_edit") continue;
    const edit = read.entry(node);
    if (edit.replacement === undefined) {
      const id = read.id(node) as string;
      report({ kind: "invalid-entry", id, message: `context edit ${id} has no replacement; skipped` });
      continue;
    }
    edits.set(edit.targetId, edit);
  }

  const messages: unknown[] = [];
  for (let i = 0; i < selected.length; i++) {
    const node = selected[i];
    // Only the last compaction, selected first, contributes; older ones in its kept range do not.
    if (i > 0 && read.type(node) === "compaction") continue;
    messages.push(...applyEdit(messagesOf(node, read, report), edits.get(read.id(node))));
    if (i === 0 && compactionAt >= 0) messages.push(...retained);
  }
  return { messages: messages as AgentMessage[], thinkingLevel, model };
}

const EMPTY = (): SessionContext => ({ messages: [], thinkingLevel: "off", model: null });

/** Options for {@link buildSessionContext}. */
export interface BuildContextOptions {
  /** Receives what was skipped or cut short (a cycle, an entry pi would throw on). */
  onProblem?: (problem: Problem) => void;
}

/**
 * The context pi would send for `leafId`: `{ messages, thinkingLevel, model }`.
 *
 * `source` is a parsed session (or its index), or an array of entries as pi holds them.
 * Without `leafId`, the default leaf (the last entry in file order that has an id: pi's rule,
 * except that a last value without an id, which pi takes, is on no branch); with `null`, the
 * empty context (pi's position before the first entry). An unknown id falls back to the
 * default leaf, as in pi. Never throws on content and never loops.
 *
 * @example
 * const session = parseSession(bytes);
 * buildSessionContext(session).messages.length;
 * buildSessionContext(session, "a1b2c3d4").model; // { provider, modelId } at that entry
 */
export function buildSessionContext(
  source: ContextSource | SessionIndex | readonly SessionEntry[] | readonly unknown[],
  leafId?: string | null,
  options: BuildContextOptions = {},
): SessionContext {
  if (leafId === null) return EMPTY();
  const report = options.onProblem ?? (() => {});
  const reportCycle = (cycleAt: string | undefined) => {
    if (cycleAt !== undefined) {
      report({ kind: "parent-cycle", id: cycleAt, message: `the path loops back to ${cycleAt}; cut there` });
    }
  };
  if (Array.isArray(source)) {
    const { nodes, cycleAt } = pathOverArray(source, leafId);
    reportCycle(cycleAt);
    return contextOfPath(nodes, entryReader, report);
  }
  const light = "light" in source ? (source as ContextSource).light : undefined;
  if (light) {
    if (light.count === 0) return EMPTY();
    const found = leafId ? light.entryOf(leafId) : -1;
    const path = light.pathTo(found >= 0 ? found : light.count - 1);
    return light.batch(() => contextOfPath(path, light.reader(), report));
  }
  const index = "index" in source ? (source as ContextSource).index : (source as SessionIndex);
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return EMPTY();
  const path = pathTo(index, leaf);
  reportCycle(path.cycleAt);
  return contextOfPath(path.records, indexReader(index), report);
}

/**
 * The thinking level and model of the context for `leafId` (default leaf when omitted), from
 * the index records alone: with {@link recordsForContext}, {@link messagesOfEntry} and
 * {@link applyEdit}, a context can be built (and sent) a batch of entries at a time.
 */
export function contextSettings(index: SessionIndex, leafId?: string | null): Omit<SessionContext, "messages"> {
  if (leafId === null) return { thinkingLevel: "off", model: null };
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return { thinkingLevel: "off", model: null };
  return settingsOfPath(pathTo(index, leaf).records, indexReader(index));
}

/**
 * The records whose full entries {@link buildSessionContext} reads for `leafId`: the last
 * compaction on the path, its kept range (unless it carries `retainedTail`; without its system
 * messages) and what follows, only of the types that become messages or edit them. A store
 * that fetches entries from elsewhere loads these (and only these) before building the context.
 */
export function recordsForContext(index: SessionIndex, leafId?: string | null): EntryRecord[] {
  if (leafId === null) return [];
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return [];
  const path = pathTo(index, leaf).records;
  let compactionAt = -1;
  for (let i = 0; i < path.length; i++) if (path[i].type === "compaction") compactionAt = i;
  const contributes = (r: EntryRecord) => r.type !== undefined && CONTEXT_TYPES.has(r.type);
  if (compactionAt < 0) return path.filter(contributes);
  const compaction = path[compactionAt];
  const needed = [compaction];
  if (!compaction.facts?.hasRetainedTail) {
    // As migrateEntry sets it: a v1 compaction's index becomes the id of the entry it named.
    const firstKept =
      compaction.v1 && typeof compaction.facts?.firstKeptEntryIndex === "number"
        ? compaction.v1.firstKeptEntryId
        : compaction.facts?.firstKeptEntryId;
    const from = path.findIndex((r, i) => i < compactionAt && r.id === firstKept);
    const isSystem = (r: EntryRecord) => r.type === "message" && r.facts?.hasMessage === true && r.role === "system";
    if (from >= 0) needed.push(...path.slice(from, compactionAt).filter((r) => contributes(r) && !isSystem(r)));
  }
  needed.push(...path.slice(compactionAt + 1).filter(contributes));
  return needed.sort((a, b) => a.index - b.index);
}

/** Entry types whose full content a context reads (older compactions in a kept range are read for nothing). */
const CONTEXT_TYPES = new Set(["message", "custom_message", "branch_summary", "context_edit"]);
