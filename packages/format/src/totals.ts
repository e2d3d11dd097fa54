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

/**
 * The most tokens one usage field counts: a line may hold any number (`1e308`, or `1e400`,
 * which JSON reads as Infinity), and sums of such numbers overflow; no real turn comes near.
 */
export const USAGE_TOKENS_MAX = 1e12;
/** The most dollars one usage's `cost.total` counts (see {@link USAGE_TOKENS_MAX}). */
export const USAGE_COST_MAX = 1e9;

/**
 * A usage number as it counts: a number clamped to `[0, max]` (Infinity counts as `max`), and
 * anything else (NaN, a string, null) as 0. Sums of clamped numbers stay finite.
 */
export function usageNumber(value: unknown, max: number): number {
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) return 0;
  return value >= max ? max : value;
}

/** Adds one usage object (pi's shape) into `totals`; ignores anything malformed, clamps the rest. */
export function addUsage(totals: Totals, usage: unknown): Totals {
  if (!usage || typeof usage !== "object") return totals;
  const u = usage as Record<string, unknown>;
  totals.input += usageNumber(u.input, USAGE_TOKENS_MAX);
  totals.output += usageNumber(u.output, USAGE_TOKENS_MAX);
  totals.cacheRead += usageNumber(u.cacheRead, USAGE_TOKENS_MAX);
  totals.cacheWrite += usageNumber(u.cacheWrite, USAGE_TOKENS_MAX);
  totals.totalTokens += usageNumber(u.totalTokens, USAGE_TOKENS_MAX);
  const cost = u.cost as Record<string, unknown> | undefined;
  totals.cost += usageNumber(cost && typeof cost === "object" ? cost.total : undefined, USAGE_COST_MAX);
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
