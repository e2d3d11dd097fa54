/**
 * A rename: oh-my-pi's title slot (the file's first line, fixed-width) overwritten in place.
 * The slot is a mutable header, not history, so its change is not a rewrite: the generation,
 * its length and every other byte stay; only the first line's bytes are replaced.
 *
 * Stored objects are immutable, so the new slot is an object of its own, `[0, L)`, and the
 * segment that held the old slot now serves only its bytes after it (`Segment.base`). The commit
 * is the head's, conditional on its revision like an append's: a rename racing an append both
 * land (each reads the other's head and goes round again); of two renames the last one
 * committed wins. Exactly once: a rename whose bytes are already the stored slot is a retry.
 */
import { titleSlotOf } from "@pisync/format";
import type { Segment, SessionHead, Stores } from "@pisync/store";
import { NotFoundError } from "@pisync/store";
import { boundedSummary } from "./bounds.js";
import { commitAndResolve } from "./commit.js";
import { BadRequest, Busy, GenerationMismatch, NotFound, SlotMismatch } from "./errors.js";
import { checkSessionId, segmentKey } from "./keys.js";
import { nonce, readRange } from "./segments.js";

/** A title slot line is 256 bytes as oh-my-pi writes it; anything this long is not one. */
export const MAX_SLOT_BYTES = 4096;
const MAX_ATTEMPTS = 8;
const NEWLINE = 0x0a;

export interface RenameRequest {
  userId: string;
  sessionId: string;
  /** The new first line, with its `\n`: a title slot as long as the stored one. */
  body: Uint8Array;
  /** `If-Match`: the generation the client believes is current. */
  generation?: number;
}

export interface RenameResult {
  /** The committed length (unchanged by a rename). */
  offset: number;
  generation: number;
  /** The slot already held these bytes (a retried rename): nothing stored. */
  retry: boolean;
  /** The title shown now (the slot's). */
  title?: string;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** The segments with `[0, length)` read from `key`; the segment that held it keeps serving its tail. */
export function withSlot(segments: readonly Segment[], key: string, length: number): Segment[] {
  const [first, ...rest] = segments;
  if (first === undefined || first.start !== 0 || first.end < length)
    throw new SlotMismatch("the first segment does not hold the title slot");
  const slot: Segment = { key, start: 0, end: length };
  if (first.end === length) return [slot, ...rest];
  return [slot, { key: first.key, start: length, end: first.end, base: first.base ?? first.start }, ...rest];
}

/**
 * Replaces the title slot of a session's current generation with `request.body`.
 * @throws BadRequest (`not_a_title_slot`) when the body is not one title slot line;
 *   SlotMismatch (409) when the stored first line is not a title slot of the body's length;
 *   GenerationMismatch (412) for another generation; NotFound for no session
 */
export async function renameSlot(stores: Stores, clock: () => Date, request: RenameRequest): Promise<RenameResult> {
  const { userId, sessionId, body } = request;
  checkSessionId(sessionId);
  if (body.length === 0 || body.length > MAX_SLOT_BYTES || body[body.length - 1] !== NEWLINE || !titleSlotOf(body)) {
    throw new BadRequest("a rename's body is one title slot line, ending with a newline", "not_a_title_slot");
  }
  const slot = titleSlotOf(body);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const head = await stores.meta.getHead(userId, sessionId);
    if (!head) throw new NotFound("no such session");
    if (request.generation !== undefined && head.current.generation !== request.generation) {
      throw new GenerationMismatch(head.current.generation, head.current.length);
    }
    const outcome = await attempt1(stores, clock, head, body, slot?.title ?? "").catch((error: unknown) => {
      // A segment of the head read was swept meanwhile: read the head again.
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (outcome) return outcome;
  }
  throw new Busy("the session kept changing under this rename; try again", 1);
}

async function attempt1(
  stores: Stores,
  clock: () => Date,
  head: SessionHead,
  body: Uint8Array,
  title: string,
): Promise<RenameResult | undefined> {
  const { current } = head;
  if (current.length < body.length) throw new SlotMismatch("the session is shorter than this title slot");
  const stored = await readRange(stores.blobs, current.segments, 0, body.length);
  if (stored.indexOf(NEWLINE) !== body.length - 1 || !titleSlotOf(stored)) {
    throw new SlotMismatch("the session's first line is not a title slot of this length");
  }
  const answer = { offset: current.length, generation: current.generation };
  if (equal(stored, body)) return { ...answer, retry: true, title: head.summary.name };
  const key = segmentKey(head.userId, head.sessionId, current.generation, 0, body.length, nonce());
  await stores.blobs.put(key, body);
  const slotTitle = title.trim() || undefined;
  const summary = boundedSummary(
    {
      ...head.summary,
      slotTitle,
      // An emptied slot leaves the name the entries give (kept as it was).
      name: slotTitle ?? head.summary.name,
    },
    true,
  );
  const next: SessionHead = {
    ...head,
    revision: head.revision + 1,
    current: {
      ...current,
      segments: withSlot(current.segments, key, body.length),
      renames: (current.renames ?? 0) + 1,
    },
    summary,
    updatedAt: clock().toISOString(),
  };
  // The same entries, so the same usage.
  const outcome = await commitAndResolve(
    stores.meta,
    { head: next, expectedRevision: head.revision, usageDays: [] },
    key,
  );
  if (outcome === "lost") return undefined;
  return { ...answer, retry: false, title: summary.name };
}
