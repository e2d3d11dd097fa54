/**
 * A commit whose every outcome is known before the request answers. A commit that fails with
 * anything but a revision conflict may have been applied all the same (its answer was lost:
 * a timeout, a socket hang-up, throttling after the SDK's retries), so nothing is concluded
 * from the error: the head is read (strongly consistent) and says what happened. The same
 * idempotency token goes with every sending, so a store that takes one applies it once.
 */
import { randomUUID } from "node:crypto";
import {
  type Commit,
  RevisionConflictError,
  type SessionHead,
  type SessionStore,
  StorageFullError,
  StorageUnavailableError,
} from "@pisync/store";

/** What became of a commit: `applied`, or `lost` to another commit of the same head. */
export type CommitOutcome = "applied" | "lost";

/** Sendings of one commit whose outcome was "not applied" before it answers 503. */
export const COMMIT_SENDINGS = 3;

/** Between two sendings: 50 to 150 ms times the sending's number (jitter spreads writers apart). */
const pause = (sending: number) => new Promise((resolve) => setTimeout(resolve, (50 + Math.random() * 100) * sending));

/** Whether `head` lists the segment `key` in its current generation: the commit that wrote it was applied. */
function names(head: SessionHead | undefined, key: string): boolean {
  return head?.current.segments.some((segment) => segment.key === key) ?? false;
}

/** A 503 for an outcome the store would not tell; a store's own classification is kept. */
function unavailable(error: unknown): Error {
  if (error instanceof StorageUnavailableError || error instanceof StorageFullError) return error;
  return new StorageUnavailableError("the store did not confirm the change: try again", { cause: error });
}

/**
 * Commits `commit`, which adds the segment `key` to the head, and finds out what happened
 * whatever the store answered. Never deletes anything.
 * @returns `applied` (ours is in the head, even when the answer was lost) or `lost` (the head
 *   moved on without it: another writer won; go round again)
 * @throws StorageUnavailableError when the store neither applied it in {@link COMMIT_SENDINGS}
 *   sendings nor could be read; StorageFullError when it had no room (nothing was applied)
 */
export async function commitAndResolve(meta: SessionStore, commit: Commit, key: string): Promise<CommitOutcome> {
  const sent = { ...commit, token: commit.token ?? randomUUID() };
  const { userId, sessionId } = commit.head;
  for (let sending = 1; ; sending++) {
    let failure: unknown;
    try {
      await meta.commit(sent);
      return "applied";
    } catch (error) {
      // A retry of an applied commit meets its own write as a failed condition.
      if (error instanceof RevisionConflictError) return names(error.current, key) ? "applied" : "lost";
      failure = error;
    }
    let stored: SessionHead | undefined;
    try {
      stored = await meta.getHead(userId, sessionId);
    } catch {
      throw unavailable(failure);
    }
    if (names(stored, key)) return "applied";
    // The head moved on: this commit's condition can never hold again.
    if ((stored?.revision ?? null) !== commit.expectedRevision) return "lost";
    if (failure instanceof StorageFullError || sending >= COMMIT_SENDINGS) throw unavailable(failure);
    await pause(sending);
  }
}
