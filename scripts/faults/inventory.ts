/**
 * What the stores hold beside the sessions' bytes, read from the stores themselves: segment
 * objects no head names (orphans: uploaded, never committed or merged away and left), objects a
 * head names that are gone (the session cannot be read), and, on the embedded store, temporary
 * files a failed write left.
 */
import { readdirSync } from "node:fs";
import { PREFIXES, parseSegmentKey, type SessionHead, type Stores } from "@pisync/store";

export interface Inventory {
  /** Segment and upload objects no head names. */
  orphans: number;
  /** Objects a head names that the blob store lacks. */
  missing: number;
  /** `*.tmp` files under the embedded store's folder (0 on AWS). */
  tempFiles: number;
  /**
   * Sessions whose usage by day, as a report reads it (`listUsage`, pending marks settled), is
   * not their head's rollup: insights would count them wrong.
   */
  usageWrong: number;
}

/** `*.tmp` files under `dir`, however deep. */
export function tempFiles(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".tmp")) count++;
  }
  return count;
}

/**
 * The inventory of `userId`'s objects in `stores`: of the sessions with objects and of
 * `sessionIds` (and of `dataDir`'s temp files, embedded).
 */
export async function inventory(
  stores: Stores,
  userId: string,
  sessionIds: readonly string[],
  dataDir?: string,
): Promise<Inventory> {
  const keys = await stores.blobs.list(`${PREFIXES.sessions}${userId}/`);
  const uploads = await stores.blobs.list(`${PREFIXES.uploads}${userId}/`);
  const listed = new Set(keys);
  const sessions = new Set(sessionIds);
  for (const key of keys) {
    const sessionId = parseSegmentKey(key)?.sessionId;
    if (sessionId) sessions.add(sessionId);
  }
  const named = new Set<string>();
  let missing = 0;
  const heads = new Map<string, SessionHead>();
  for (const sessionId of sessions) {
    const head = await stores.meta.getHead(userId, sessionId);
    if (head) heads.set(sessionId, head);
    const generations = [...(head ? [head.current] : []), ...(await stores.meta.getArchived(userId, sessionId))];
    for (const segment of generations.flatMap((g) => g.segments)) {
      named.add(segment.key);
      if (!listed.has(segment.key)) missing++;
    }
  }
  return {
    orphans: keys.filter((key) => !named.has(key)).length + uploads.length,
    missing,
    tempFiles: dataDir ? tempFiles(dataDir) : 0,
    usageWrong: await usageWrong(stores, userId, heads),
  };
}

/** Sessions whose usage by day over their days differs from their heads' rollups (see {@link Inventory}). */
async function usageWrong(stores: Stores, userId: string, heads: ReadonlyMap<string, SessionHead>): Promise<number> {
  const rollups = new Map<string, string>();
  const days: string[] = [];
  const sorted = (rows: unknown[][]) => JSON.stringify(rows.map((row) => JSON.stringify(row)).sort());
  for (const [sessionId, head] of heads) {
    const usage = head.summary.usage;
    if (!usage || (usage.rows.length === 0 && usage.tools.length === 0)) continue;
    rollups.set(sessionId, sorted([...usage.rows, ...usage.tools]));
    for (const row of usage.rows) days.push(row[0]);
    for (const row of usage.tools) days.push(row[0]);
  }
  if (days.length === 0) return 0;
  days.sort();
  const read = await stores.meta.listUsage(userId, { from: days[0], to: days[days.length - 1] });
  const stored = new Map(read.sessions.map((s) => [s.sessionId, sorted([...s.rows, ...s.tools])]));
  let wrong = 0;
  for (const [sessionId, rollup] of rollups) if (stored.get(sessionId) !== rollup) wrong++;
  // A session with days but no head (deleted, or never committed) is wrong too.
  for (const sessionId of stored.keys()) if (!heads.has(sessionId)) wrong++;
  return wrong;
}
