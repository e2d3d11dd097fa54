/**
 * Version migrations, applied in memory to the entries as they are read; the bytes stay as
 * written. pi migrates on load too, but then rewrites the file: we never do.
 *
 * - v1 (no ids): each entry gets an id and its parent is the entry before it. pi draws random
 *   ids on every open; ours are deterministic: the entry's 1-based line number in the file as
 *   8 lowercase hex digits (line 12 → "0000000c"), so ids are stable across reads and machines.
 *   `firstKeptEntryIndex` (an index into the file's parsed values, 0 being the header) becomes
 *   `firstKeptEntryId` when it names an earlier entry, as in pi.
 * - v2 → v3: the message role `hookMessage` was renamed `custom`.
 */

/** The format version pi writes today. */
export const CURRENT_SESSION_VERSION = 3;

/** The id a v1 entry gets: its line number as 8 hex digits. */
export function v1EntryId(line: number): string {
  return line.toString(16).padStart(8, "0");
}

/** Applies the v2 → v3 rename to a message role. */
export function migrateRole(role: unknown, version: number): unknown {
  return version < 3 && role === "hookMessage" ? "custom" : role;
}

/** The v1 id/parent facts for one entry, computed by the index. */
export interface V1Links {
  id: string;
  parentId: string | null;
  firstKeptEntryId?: string;
}

/**
 * Returns the entry as the current version reads it. `entry` is a fresh object from
 * `JSON.parse`, so it is changed in place.
 */
export function migrateEntry(entry: Record<string, unknown>, version: number, v1?: V1Links): Record<string, unknown> {
  if (v1) {
    entry.id = v1.id;
    entry.parentId = v1.parentId;
    if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
      if (v1.firstKeptEntryId !== undefined) entry.firstKeptEntryId = v1.firstKeptEntryId;
      delete entry.firstKeptEntryIndex;
    }
  }
  if (version < 3 && entry.type === "message") {
    const message = entry.message as Record<string, unknown> | null | undefined;
    if (message && typeof message === "object" && message.role === "hookMessage") message.role = "custom";
  }
  return entry;
}
