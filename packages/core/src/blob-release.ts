/**
 * Which blobs a deleted session leaves unused, and their removal. A user's blobs are shared by
 * hash between their sessions (`blobs/<user>/<sha256>`), so a blob goes only when no other
 * session of that user names it.
 *
 * The rule, against an append racing the delete (another session newly naming the blob):
 * 1. the session's head is deleted first, then the other heads are read: an append committed
 *    before that read is seen, and its blob kept;
 * 2. the blobs found unused are read, then deleted, then the heads are read again: an append
 *    committed between the two reads is seen now, and the blobs it names are written back;
 * 3. an append committed after the second read names a blob that is gone, and the append's
 *    answer says so (`missingBlobs`): the client sends it again, as it sends any blob the
 *    server lacks.
 * A head whose list of blobs is cut, or was kept before lists were, is read in bytes (within a
 * budget); past the budget its blobs are kept: a leak is recoverable, a lost image is not.
 */
import {
  type BlobStore,
  blobKey,
  type GenerationState,
  NotFoundError,
  type SessionHead,
  type Stores,
} from "@pisync/store";
import { readRange } from "./segments.js";

/** Bytes of sessions read, at most, to prove a blob unused where a head's list cannot. */
export const BLOB_SCAN_BUDGET = 64 * 1024 * 1024;
/** Heads read per page while looking for other sessions naming a blob. */
const HEAD_PAGE = 100;
/** Bytes of blobs held at once between their delete and the second read of the heads. */
const RELEASE_BATCH_BYTES = 64 * 1024 * 1024;
const MARK = (sha256: string) => `blob:sha256:${sha256}`;

/** Whether a head's list names every blob of every generation it has. */
function listsAll(head: SessionHead): boolean {
  return head.summary.blobRefs !== undefined && !head.summary.blobRefsCut && head.generations === 1;
}

/** Every generation's bytes of a session, within what is left of `budget`; undefined past it. */
async function sessionBytes(
  stores: Stores,
  head: SessionHead,
  budget: { left: number },
): Promise<Uint8Array[] | undefined> {
  const archived = head.generations > 1 ? await stores.meta.getArchived(head.userId, head.sessionId) : [];
  const states: GenerationState[] = [...archived, head.current];
  const size = states.reduce((n, s) => n + s.length, 0);
  if (size > budget.left) return undefined;
  budget.left -= size;
  return Promise.all(states.map((s) => readRange(stores.blobs, s.segments, 0, s.length)));
}

/** The blobs `generations` of a deleted session name: its list, and its bytes where the list is not whole. */
export async function namedBlobs(
  blobs: BlobStore,
  head: SessionHead,
  generations: readonly GenerationState[],
): Promise<string[]> {
  const named = new Set(head.summary.blobRefs ?? []);
  if (listsAll(head)) return [...named];
  const size = generations.reduce((n, s) => n + s.length, 0);
  if (size > BLOB_SCAN_BUDGET) return [...named]; // the rest leaks (kept), never wrongly removed
  for (const state of generations) {
    const text = Buffer.from(await readRange(blobs, state.segments, 0, state.length)).toString("latin1");
    for (const m of text.matchAll(/blob:sha256:([a-f0-9]{64})/g)) named.add(m[1] as string);
  }
  return [...named];
}

/**
 * Of `candidates`, those no other session of the user names (the deleted session's head is gone
 * already), and the revision of every head read. Heads that cannot prove it by their list are
 * read in bytes within the budget.
 */
export async function unusedBlobs(
  stores: Stores,
  userId: string,
  candidates: readonly string[],
): Promise<{ unused: string[]; revisions: Map<string, number> }> {
  const left = new Set(candidates);
  const revisions = new Map<string, number>();
  const unlisted: SessionHead[] = [];
  let cursor: string | undefined;
  do {
    const page = await stores.meta.listHeads(userId, { limit: HEAD_PAGE, cursor });
    for (const head of page.heads) {
      revisions.set(head.sessionId, head.revision);
      for (const hash of head.summary.blobRefs ?? []) left.delete(hash);
      if (!listsAll(head)) unlisted.push(head);
    }
    cursor = page.cursor;
  } while (cursor && left.size);
  const budget = { left: BLOB_SCAN_BUDGET };
  for (const head of unlisted) {
    if (!left.size) break;
    const bytes = await sessionBytes(stores, head, budget);
    if (!bytes) return { unused: [], revisions }; // past the budget: nothing is proven unused
    for (const hash of [...left]) {
      if (bytes.some((b) => Buffer.from(b).includes(MARK(hash)))) left.delete(hash);
    }
  }
  return { unused: [...left], revisions };
}

/** Whether any session of the user names a blob of `hashes` now (by list; a changed unlisted head counts as naming them all). */
async function namedAgain(
  stores: Stores,
  userId: string,
  hashes: readonly string[],
  before: Map<string, number>,
): Promise<Set<string>> {
  const again = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await stores.meta.listHeads(userId, { limit: HEAD_PAGE, cursor });
    for (const head of page.heads) {
      for (const hash of head.summary.blobRefs ?? []) if (hashes.includes(hash)) again.add(hash);
      const changed = before.get(head.sessionId) !== head.revision;
      if (changed && !listsAll(head)) for (const hash of hashes) again.add(hash);
    }
    cursor = page.cursor;
  } while (cursor);
  return again;
}

/**
 * Removes the blobs of `candidates` that no other session of the user names, by the rule above,
 * and returns how many went. Call it once the session's head is deleted.
 */
export async function releaseBlobs(stores: Stores, userId: string, candidates: readonly string[]): Promise<number> {
  if (!candidates.length) return 0;
  const { unused, revisions } = await unusedBlobs(stores, userId, candidates);
  let released = 0;
  // Held in memory until the second read (a blob an append named meanwhile is written back),
  // so they go in batches of bounded bytes.
  for (let i = 0; i < unused.length; ) {
    const kept = new Map<string, Uint8Array>();
    let bytes = 0;
    for (; i < unused.length && bytes < RELEASE_BATCH_BYTES; i++) {
      const hash = unused[i] as string;
      const blob = await stores.blobs.get(blobKey(userId, hash)).catch(() => undefined);
      if (blob) {
        kept.set(hash, blob);
        bytes += blob.length;
      }
    }
    const present = [...kept.keys()];
    if (!present.length) continue;
    await stores.blobs.delete(present.map((hash) => blobKey(userId, hash)));
    const again = await namedAgain(stores, userId, present, revisions);
    for (const hash of again) await stores.blobs.put(blobKey(userId, hash), kept.get(hash) as Uint8Array);
    released += present.length - again.size;
  }
  return released;
}

/** Blobs an append's answer checks, at most (a body naming more is rare; the rest go unchecked). */
const MAX_CHECKED = 500;

/**
 * Of the blobs an append names that the session's list did not name before, those the store
 * lacks: the rule's last step (a delete that removed one before this append was committed). Read
 * after the commit, so a delete either saw the append's name or removed the blob before this
 * read.
 */
export async function missingBlobs(
  blobs: BlobStore,
  userId: string,
  before: SessionHead["summary"],
  named: readonly string[],
): Promise<string[]> {
  const listed = before.blobRefs !== undefined && !before.blobRefsCut ? new Set(before.blobRefs) : new Set<string>();
  const fresh = named.filter((hash) => !listed.has(hash)).slice(0, MAX_CHECKED);
  const missing: string[] = [];
  for (let i = 0; i < fresh.length; i += 16) {
    await Promise.all(
      fresh.slice(i, i + 16).map(async (hash) => {
        // One byte is enough to know it is there (a blob is never empty: an image).
        await blobs.get(blobKey(userId, hash), { start: 0, end: 1 }).catch((error: unknown) => {
          if (error instanceof NotFoundError) missing.push(hash);
        });
      }),
    );
  }
  return missing;
}
