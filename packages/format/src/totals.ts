/**
 * Token and cost totals. Counted: assistant messages' `usage`, (newer spec) the `usage` of
 * compaction and branch-summary entries and of tool results that did LLM work, and (pi 1.x)
 * `usage` entries: work billed outside the conversation, such as cache warming.
 */
import type { SessionIndex } from "./session-index.js";
import { pathTo } from "./tree.js";

/** Summed tokens and cost (in dollars). */
export interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: number;
}

export function emptyTotals(): Totals {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Adds one usage object (pi's shape) into `totals`; ignores anything malformed. */
export function addUsage(totals: Totals, usage: unknown): Totals {
  if (!usage || typeof usage !== "object") return totals;
  const u = usage as Record<string, unknown>;
  totals.input += num(u.input);
  totals.output += num(u.output);
  totals.cacheRead += num(u.cacheRead);
  totals.cacheWrite += num(u.cacheWrite);
  totals.totalTokens += num(u.totalTokens);
  const cost = u.cost as Record<string, unknown> | undefined;
  totals.cost += num(cost && typeof cost === "object" ? cost.total : undefined);
  return totals;
}

/** The usage an entry contributes to totals, if any. */
export function usageOfEntry(entry: Record<string, unknown>): unknown {
  if (entry.type === "message") {
    const message = entry.message as Record<string, unknown> | null | undefined;
    if (message && typeof message === "object" && (message.role === "assistant" || message.role === "toolResult")) {
      return message.usage;
    }
    return undefined;
  }
  if (USAGE_TYPES.has(entry.type as string)) return entry.usage;
  return undefined;
}

/** The longest key {@link usageKeyOf} gives (session text: a provider or model name). */
const USAGE_KEY_MAX = 200;

/**
 * The bucket pi's accounting puts an entry's usage in (pi 1.x's cost breakdown): an assistant
 * message's `provider/model` (the model that answered, when it says), a `usage` entry's
 * `provider/model`, and `Tools/summaries` for the LLM work of tool results, compactions and
 * branch summaries. `undefined` for an entry that carries no usage.
 */
export function usageKeyOf(entry: Record<string, unknown>): string | undefined {
  const usage = usageOfEntry(entry);
  if (!usage || typeof usage !== "object") return undefined;
  if (entry.type === "message") {
    const message = entry.message as Record<string, unknown>;
    if (message.role === "toolResult") return "Tools/summaries";
    return `${message.provider}/${message.responseModel ?? message.model}`.slice(0, USAGE_KEY_MAX);
  }
  if (entry.type === "usage") return `${entry.provider}/${entry.model}`.slice(0, USAGE_KEY_MAX);
  return "Tools/summaries";
}

/** Entry types that carry a `usage` of their own (besides messages). */
const USAGE_TYPES = new Set(["compaction", "branch_summary", "usage"]);

/** Totals along the path from the root to `leafId` (default leaf when omitted). */
export function pathTotals(index: SessionIndex, leafId?: string): Totals {
  const totals = emptyTotals();
  const leaf = (leafId ? index.byId(leafId) : undefined) ?? index.defaultLeaf;
  if (!leaf) return totals;
  for (const record of pathTo(index, leaf).records) {
    if (!USAGE_TYPES.has(record.type ?? "")) {
      if (record.type !== "message" || (record.role !== "assistant" && record.role !== "toolResult")) continue;
    }
    addUsage(totals, usageOfEntry(index.entry(record)));
  }
  return totals;
}
