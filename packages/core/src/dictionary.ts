/**
 * The dictionary of a `pisync-deflate-dict` append: the committed bytes just before its offset
 * (at most `DICT_BYTES`, see `@pisync/protocol`).
 */
import { DICT_BYTES } from "@pisync/protocol";
import type { Stores } from "@pisync/store";
import { OffsetConflict } from "./errors.js";
import { checkSessionId } from "./keys.js";
import { readRange, withFreshHead } from "./segments.js";

/**
 * The committed bytes `[offset - DICT_BYTES, offset)` of the current generation. A session that
 * does not exist has 0 committed bytes; any other failure to read it propagates.
 * @throws OffsetConflict when `offset` is past the committed bytes (the append would be refused anyway)
 * @throws BadRequest `invalid_session_id`
 */
export async function dictionaryBefore(
  stores: Stores,
  userId: string,
  sessionId: string,
  offset: number,
): Promise<Uint8Array> {
  if (offset === 0) return new Uint8Array(0);
  checkSessionId(sessionId);
  return withFreshHead(
    async () => {
      const head = await stores.meta.getHead(userId, sessionId);
      const committed = head?.current.length ?? 0;
      if (!head || offset > committed) throw new OffsetConflict(committed, head?.current.generation ?? 0);
      return head;
    },
    (head) => readRange(stores.blobs, head.current.segments, Math.max(0, offset - DICT_BYTES), offset),
  );
}
