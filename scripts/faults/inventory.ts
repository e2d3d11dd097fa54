/**
 * What the stores hold beside the sessions' bytes, read from the stores themselves: segment
 * objects no head names (orphans: uploaded, never committed or merged away and left), objects a
 * head names that are gone (the session cannot be read), and, on the embedded store, temporary
 * files a failed write left.
 */
import { readdirSync } from "node:fs";
import { PREFIXES, parseSegmentKey, type Stores } from "@pisync/store";

export interface Inventory {
  /** Segment and upload objects no head names. */
  orphans: number;
  /** Objects a head names that the blob store lacks. */
  missing: number;
  /** `*.tmp` files under the embedded store's folder (0 on AWS). */
  tempFiles: number;
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
  for (const sessionId of sessions) {
    const head = await stores.meta.getHead(userId, sessionId);
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
  };
}
