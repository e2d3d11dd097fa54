/**
 * What a share shows of its session beyond the entries. A pinned (one-branch) share shows
 * only what its path holds: the name, labels, first message, totals and times set on another
 * branch are not part of it.
 */
import { addUsage, type EntryRecord, emptyTotals, type Totals, usageOfEntry } from "@pisync/format";
import type { SessionHead } from "@pisync/store";
import type { Reader } from "./reader.js";

/** The facts of one path, from its index records (no entry is read). */
export interface PathFacts {
  /** The name set by the last `session_info` or oh-my-pi `title_change` on the path (an empty `session_info` clears it). */
  name?: string;
  /** The preview of the first user message on the path. */
  firstMessage?: string;
  /** Labels set on the path, of entries on the path. */
  labels: Map<string, string>;
  /** The timestamp of the path's last entry. */
  updatedAt?: string;
  /** The bytes of the path's lines (with their newlines): its size. */
  bytes: number;
}

/**
 * The name, labels, first message, last time and size of one path, from its index records
 * alone (`previews` maps a record's line to its preview text). Throws nothing.
 */
export function pathFacts(path: readonly EntryRecord[], previews: Record<number, string>): PathFacts {
  let name: string | undefined;
  let firstMessage: string | undefined;
  let bytes = 0;
  const labels = new Map<string, string>();
  const onPath = new Set(path.map((r) => r.id));
  for (const r of path) {
    bytes += r.length + 1;
    if (r.type === "session_info" || r.type === "title_change") {
      const value = r.facts?.name;
      name = typeof value === "string" ? value.trim() || undefined : undefined;
    } else if (r.type === "label" && typeof r.facts?.targetId === "string" && onPath.has(r.facts.targetId)) {
      if (r.facts.label) labels.set(r.facts.targetId, String(r.facts.label));
      else labels.delete(r.facts.targetId);
    } else if (firstMessage === undefined && r.type === "message" && r.role === "user") {
      firstMessage = previews[r.line];
    }
  }
  return { name, firstMessage, labels, updatedAt: path.at(-1)?.timestamp, bytes };
}

/** Token and cost totals of a path's entries (pi 1.x `usage` entries included), read a batch at a time. */
export async function pathTotals(reader: Reader, head: SessionHead, path: readonly EntryRecord[]): Promise<Totals> {
  const totals = emptyTotals();
  const counted = path.filter(
    (r) =>
      r.type === "compaction" ||
      r.type === "branch_summary" ||
      r.type === "usage" || // pi 1.x: usage of its own calls (e.g. summaries), counted in its totals
      (r.type === "message" && (r.role === "assistant" || r.role === "toolResult")),
  );
  for await (const batch of reader.batches(head, counted)) {
    for (const { text } of batch) {
      try {
        addUsage(totals, usageOfEntry(JSON.parse(text)));
      } catch {
        // An unreadable line counts nothing.
      }
    }
  }
  return totals;
}
