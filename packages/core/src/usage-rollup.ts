/**
 * A session's usage rollup, kept by each commit: the appended entries' tokens, cost and time by
 * day, accounting bucket (pi's: `provider/model` or `Tools/summaries`) and device, and their
 * tool calls by day and tool. Insights add rollups up; nothing rereads a session's bytes.
 */
import { addUsage, emptyTotals, isObject, usageKeyOf, usageOfEntry } from "@pisync/format";
import type { ToolRow, UsageRollup, UsageRow } from "@pisync/store";

/** Rows a rollup keeps of each kind; past them new keys fold into `(other)` (totals stay whole). */
export const MAX_ROLLUP_ROWS = 400;
/** The bucket and tool name that rows past {@link MAX_ROLLUP_ROWS} fold into. */
export const OTHER = "(other)";
/** The longest tool name kept (session text). */
const TOOL_NAME_MAX = 100;
/** A measured gap longer than this is a person away, not work: it counts as this much. */
const MAX_GAP_MS = 10 * 60_000;

/** An entry's time as an ISO instant, or undefined when it is not one. */
function instantOf(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > 40) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** How long an entry took: its own `durationMs` (pi 1.x), else the time since the entry before it. */
function durationOf(message: Record<string, unknown>, at: string | undefined, before: string | undefined): number {
  const own = message.durationMs;
  if (typeof own === "number" && Number.isFinite(own) && own >= 0) return Math.min(own, MAX_GAP_MS);
  if (!at || !before) return 0;
  const gap = Date.parse(at) - Date.parse(before);
  return gap > 0 ? Math.min(gap, MAX_GAP_MS) : 0;
}

/** The tool names an assistant message calls (pi's `toolCall` content parts). */
function toolCalls(message: Record<string, unknown>): string[] {
  if (!Array.isArray(message.content)) return [];
  const names: string[] = [];
  for (const part of message.content) {
    if (isObject(part) && part.type === "toolCall" && typeof part.name === "string") {
      names.push(part.name.slice(0, TOOL_NAME_MAX));
    }
  }
  return names;
}

/** Fold rows a rollup may add past {@link MAX_ROLLUP_ROWS} (one per day); past them the last row takes all. */
const MAX_FOLD_ROWS = 100;

/**
 * The row `match` finds, else a new one from `make`; once the rollup is full, the day's fold
 * row (`fold` makes it, `isFold` finds it) so that sums stay whole however hostile the file.
 */
function rowOf<Row extends UsageRow | ToolRow>(
  rows: Row[],
  match: (row: Row) => boolean,
  make: () => Row,
  fold: () => Row,
  isFold: (row: Row) => boolean,
): Row {
  const found = rows.find(match) ?? (rows.length >= MAX_ROLLUP_ROWS ? rows.find(isFold) : undefined);
  if (found) return found;
  if (rows.length >= MAX_ROLLUP_ROWS + MAX_FOLD_ROWS) return rows[rows.length - 1] as Row;
  const row = rows.length < MAX_ROLLUP_ROWS ? make() : fold();
  rows.push(row);
  return row;
}

/**
 * The rollup after some entries (in file order) sent by `device`. `now` dates entries that have
 * no time of their own and follow none that had one.
 */
export function advanceRollup(
  rollup: UsageRollup | undefined,
  entries: readonly unknown[],
  device: string,
  now: string,
): UsageRollup {
  const next: UsageRollup = {
    rows: rollup?.rows.map((row) => [...row] as UsageRow) ?? [],
    tools: rollup?.tools.map((row) => [...row] as ToolRow) ?? [],
    lastAt: rollup?.lastAt,
  };
  for (const entry of entries) {
    if (!isObject(entry)) continue;
    const at = instantOf(entry.timestamp);
    const day = (at ?? next.lastAt ?? now).slice(0, 10);
    const message = entry.type === "message" && isObject(entry.message) ? entry.message : undefined;
    const key = usageKeyOf(entry);
    const isTurn = message?.role === "assistant";
    if (key !== undefined || isTurn) {
      const bucket = key ?? `${message?.provider}/${message?.responseModel ?? message?.model}`.slice(0, 200);
      const row = rowOf<UsageRow>(
        next.rows,
        (r) => r[0] === day && r[1] === bucket && r[2] === device,
        () => [day, bucket, device, 0, 0, 0, 0, 0, 0, 0],
        () => [day, OTHER, "", 0, 0, 0, 0, 0, 0, 0],
        (r) => r[0] === day && r[1] === OTHER,
      );
      const totals = addUsage(emptyTotals(), usageOfEntry(entry));
      row[3] += totals.input;
      row[4] += totals.output;
      row[5] += totals.cacheRead;
      row[6] += totals.cacheWrite;
      row[7] += totals.cost;
      if (isTurn && message) {
        row[8] += durationOf(message, at, next.lastAt);
        row[9] += 1;
      }
    }
    if (isTurn && message) {
      for (const tool of toolCalls(message)) toolRow(next.tools, day, tool)[2] += 1;
    }
    if (message?.role === "toolResult" && typeof message.toolName === "string") {
      toolRow(next.tools, day, message.toolName.slice(0, TOOL_NAME_MAX))[3] += durationOf(message, at, next.lastAt);
    }
    if (at) next.lastAt = at;
  }
  return next;
}

function toolRow(rows: ToolRow[], day: string, tool: string): ToolRow {
  return rowOf<ToolRow>(
    rows,
    (r) => r[0] === day && r[1] === tool,
    () => [day, tool, 0, 0],
    () => [day, OTHER, 0, 0],
    (r) => r[0] === day && r[1] === OTHER,
  );
}
