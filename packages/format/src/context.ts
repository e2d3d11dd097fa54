/**
 * Rebuilding the LLM context for a leaf, as pi's `buildSessionContext` does (pi 0.73.1),
 * plus the newer spec's `retainedTail`:
 *
 * 1. Walk from the leaf to the root (guarded against cycles).
 * 2. Along the whole path: the last `thinking_level_change` sets the thinking level (default
 *    "off"); the last `model_change` or assistant message sets the model (default null).
 * 3. Without a compaction on the path, every entry is converted. With one, only the LAST
 *    compaction counts: its summary comes first; then, when it carries `retainedTail` (newer
 *    spec), those messages verbatim; otherwise the path entries from `firstKeptEntryId` up to
 *    the compaction (none when that id is not on the path before it); then every entry after it.
 * 4. Conversion: `message` → its message; `custom_message` → a `custom` message;
 *    `branch_summary` → a `branchSummary` message when its summary is not empty; other types
 *    contribute nothing. Timestamps of built messages are `Date.parse` of the entry's (NaN
 *    when it does not parse, as in pi).
 *
 * pi 0.73.1 ignores `retainedTail`; we follow the newer spec because the newer writers that
 * produce it rely on it (they may omit `firstKeptEntryId`, and pi would then drop the kept
 * messages). Where pi throws (a `message` entry without a message), that entry is skipped.
 */
import type { Problem } from "./problems.js";
import type { AgentMessage, SessionEntry } from "./schema.js";
import type { EntryRecord, SessionIndex } from "./session-index.js";
import { pathTo } from "./tree.js";

/** What pi sends the model for a leaf. */
export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

/** A parsed session (see `parseSession`). */
export interface ContextSource {
  index: SessionIndex;
}

type Entry = Record<string, unknown>;

/** How the context rules read the entries of a path: index records, or entry objects as pi holds them. */
interface PathReader<N> {
  type(node: N): unknown;
  id(node: N): unknown;
  /** The thinking level of a `thinking_level_change`. */
  thinkingLevel(node: N): unknown;
  /** The model a `model_change` sets. */
  modelChange(node: N): SessionContext["model"];
  /** The model an assistant message sets, or undefined when the node is not one. */
  assistantModel(node: N): SessionContext["model"] | undefined;
  entry(node: N): Entry;
}

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
  entry: (e) => e,
};

/** pi's walk over a plain entry array: a map by id (last wins), the leaf or the last entry. */
function pathOverArray(entries: readonly unknown[], leafId: string | undefined): { nodes: Entry[]; cycleAt?: string } {
  const byId = new Map<unknown, Entry>();
  for (const e of entries) if (e && typeof e === "object") byId.set((e as Entry).id, e as Entry);
  let leaf = leafId ? byId.get(leafId) : undefined;
  leaf ??= entries[entries.length - 1] as Entry | undefined;
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

/** Step 2 over a path, root first: the thinking level and model. */
function settingsOfPath<N>(nodes: N[], read: PathReader<N>): Omit<SessionContext, "messages"> {
  let thinkingLevel: unknown = "off";
  let model: SessionContext["model"] = null;
  for (const node of nodes) {
    const type = read.type(node);
    if (type === "thinking_level_change") thinkingLevel = read.thinkingLevel(node);
    else if (type === "model_change") model = read.modelChange(node);
    else if (type === "message") model = read.assistantModel(node) ?? model;
  }
  return { thinkingLevel: thinkingLevel as string, model };
}

/**
 * Step 4 for one entry of type `type`: the message it becomes, or `undefined` (other types,
 * an empty branch summary, a message entry without a message).
 */
export function messageOfEntry(type: unknown, e: Entry): AgentMessage | undefined {
  if (type === "message") return isMissing(e.message) ? undefined : (e.message as AgentMessage);
  if (type === "custom_message") {
    return {
      role: "custom",
      customType: e.customType,
      content: e.content,
      display: e.display,
      details: e.details,
      timestamp: timestampOf(e),
    } as AgentMessage;
  }
  if (type === "branch_summary" && e.summary) {
    return { role: "branchSummary", summary: e.summary, fromId: e.fromId, timestamp: timestampOf(e) } as AgentMessage;
  }
  return undefined;
}

/** Step 3's start: the messages the last compaction opens a context with (its summary, then any `retainedTail`). */
export function compactionMessages(c: Entry): AgentMessage[] {
  const summary = {
    role: "compactionSummary",
    summary: c.summary,
    tokensBefore: c.tokensBefore,
    timestamp: timestampOf(c),
  } as AgentMessage;
  return Array.isArray(c.retainedTail) ? [summary, ...(c.retainedTail as AgentMessage[])] : [summary];
}

/** Steps 2–4 over a path, root first. */
function contextOfPath<N>(nodes: N[], read: PathReader<N>, report: (problem: Problem) => void): SessionContext {
  let compactionAt = -1;
  for (let i = 0; i < nodes.length; i++) if (read.type(nodes[i]) === "compaction") compactionAt = i;

  const messages: AgentMessage[] = [];
  const append = (node: N) => {
    const type = read.type(node);
    if (type !== "message" && type !== "custom_message" && type !== "branch_summary") return;
    const message = messageOfEntry(type, read.entry(node));
    if (message) messages.push(message);
    else if (type === "message") {
      const id = read.id(node) as string;
      report({ kind: "invalid-entry", id, message: `message entry ${id} has no message; skipped` });
    }
  };

  if (compactionAt < 0) {
    for (const node of nodes) append(node);
  } else {
    const c = read.entry(nodes[compactionAt]);
    messages.push(...compactionMessages(c));
    if (!Array.isArray(c.retainedTail)) {
      let kept = false;
      for (let i = 0; i < compactionAt; i++) {
        if (read.id(nodes[i]) === c.firstKeptEntryId) kept = true;
        if (kept) append(nodes[i]);
      }
    }
    for (let i = compactionAt + 1; i < nodes.length; i++) append(nodes[i]);
  }
  return { messages, ...settingsOfPath(nodes, read) };
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
 * Without `leafId`, the default leaf (pi's: the last value in file order); with `null`, the
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
  const index = "index" in source ? (source as ContextSource).index : (source as SessionIndex);
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return EMPTY();
  const path = pathTo(index, leaf);
  reportCycle(path.cycleAt);
  return contextOfPath(path.records, indexReader(index), report);
}

/**
 * The thinking level and model of the context for `leafId` (default leaf when omitted), from
 * the index records alone: with {@link recordsForContext}, {@link compactionMessages} and
 * {@link messageOfEntry}, a context can be built (and sent) a batch of entries at a time.
 */
export function contextSettings(index: SessionIndex, leafId?: string | null): Omit<SessionContext, "messages"> {
  if (leafId === null) return { thinkingLevel: "off", model: null };
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return { thinkingLevel: "off", model: null };
  return settingsOfPath(pathTo(index, leaf).records, indexReader(index));
}

/**
 * The records whose full entries {@link buildSessionContext} reads for `leafId`: the last
 * compaction on the path, its kept range (unless it carries `retainedTail`) and what follows,
 * only of the types that become messages. A store that fetches entries from elsewhere loads
 * these (and only these) before building the context.
 */
export function recordsForContext(index: SessionIndex, leafId?: string | null): EntryRecord[] {
  if (leafId === null) return [];
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return [];
  const path = pathTo(index, leaf).records;
  let compactionAt = -1;
  for (let i = 0; i < path.length; i++) if (path[i].type === "compaction") compactionAt = i;
  const contributes = (r: EntryRecord) =>
    r.type === "message" || r.type === "custom_message" || r.type === "branch_summary";
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
    if (from >= 0) needed.push(...path.slice(from, compactionAt).filter(contributes));
  }
  needed.push(...path.slice(compactionAt + 1).filter(contributes));
  return needed.sort((a, b) => a.index - b.index);
}
