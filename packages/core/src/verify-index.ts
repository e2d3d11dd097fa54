/**
 * The verify pass's part for persisted tree indexes (see persisted-index.ts): the sweep removes
 * those no head can use (another life or generation of the session, past its length, or
 * replaced by a longer one); a deep pass reads the one a fresh reader would use and, with
 * `repair`, writes it again from the index pages when it is missing or corrupt.
 */
import {
  NotFoundError,
  type ObjectInfo,
  type PersistedIndexKey,
  parsePersistedIndexKey,
  type SessionHead,
  type Stores,
} from "@pisync/store";
import { decodeIndex, keyOf, mergePages, ownerOf, PERSIST_MIN_LINES, PersistedIndexes } from "./persisted-index.js";

/** A persisted index as the listing found it. */
export interface ListedIndex {
  info: ObjectInfo;
  key: PersistedIndexKey;
}

/** What this part finds (a subset of the verify pass's findings). */
export interface IndexFinding {
  kind: "stale-index" | "missing-index" | "corrupt-index";
  key?: string;
  message: string;
  problem: boolean;
  repaired: boolean;
}

export interface IndexCheck {
  stores: Stores;
  repair: boolean;
  /** Whether to read the index a fresh reader would use (and write a missing one). */
  deep: boolean;
  /** Objects written after this instant (epoch ms) are left: a reader may have just written them for a newer head. */
  cutoff: number;
  young: () => void;
  report: (finding: IndexFinding) => void;
}

/** Whether `key` is of the head's current life and generation, and no longer than it. */
function usableBy(head: SessionHead | undefined, key: PersistedIndexKey): boolean {
  if (!head) return false;
  const created = Math.max(0, Date.parse(head.createdAt) || 0);
  return (
    key.sessionCreated === created && key.generation === head.current.generation && key.length <= head.current.length
  );
}

/** Checks (and with `repair`, sweeps and rebuilds) the persisted indexes of one session. */
export async function checkIndexes(
  check: IndexCheck,
  head: SessionHead | undefined,
  listed: readonly ListedIndex[],
): Promise<void> {
  const usable = listed.filter((l) => usableBy(head, l.key)).sort((a, b) => a.key.length - b.key.length);
  const kept = usable.at(-1);
  for (const { info, key } of listed) {
    if (info.key === kept?.info.key) continue;
    if (info.modifiedAt.getTime() > check.cutoff) {
      check.young();
      continue;
    }
    if (check.repair) await check.stores.blobs.delete([info.key]);
    const why = usableBy(head, key) ? "a longer one replaces it" : "no head can use it";
    check.report({
      kind: "stale-index",
      key: info.key,
      message: `a persisted tree index of bytes [0, ${key.length}): ${why}`,
      problem: false,
      repaired: check.repair,
    });
  }
  if (!check.deep || !head || head.current.lines < PERSIST_MIN_LINES) return;
  const owner = ownerOf(head, head.current);
  let corrupt = false;
  if (kept) {
    const bytes = await check.stores.blobs.get(kept.info.key).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined; // replaced meanwhile by a reader's newer one
      throw error;
    });
    if (!bytes) return;
    corrupt = !(await decodeIndex(bytes, owner, head.current.length));
    if (!corrupt) return;
  }
  const key = kept?.info.key ?? keyOf(owner, head.current.length);
  let repaired = false;
  if (check.repair) {
    const pages = await check.stores.meta.getPages(head.userId, head.sessionId, head.current.generation);
    const merged = mergePages(pages, head.current.length);
    await new PersistedIndexes(check.stores).save(owner, merged, kept ? [kept.info.key] : []);
    repaired = true;
  }
  check.report({
    kind: corrupt ? "corrupt-index" : "missing-index",
    key,
    message: corrupt
      ? "the persisted tree index does not read back (a fresh reader reads every page instead)"
      : `no persisted tree index of this session's ${head.current.lines} lines (a fresh reader reads every page)`,
    // Derived data: a missing one only costs time, a corrupt one is wrong (and is never served).
    problem: corrupt,
    repaired,
  });
}

/** The persisted indexes in a listing, by `user/session`. */
export function indexesByKey(infos: Iterable<ObjectInfo>): Map<string, ListedIndex[]> {
  const out = new Map<string, ListedIndex[]>();
  for (const info of infos) {
    const key = parsePersistedIndexKey(info.key);
    if (!key) continue;
    const at = `${key.userId}/${key.sessionId}`;
    out.set(at, [...(out.get(at) ?? []), { info, key }]);
  }
  return out;
}
