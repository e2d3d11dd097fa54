/**
 * The search adapter's items in the metadata table (beside the store's, which use other key
 * prefixes):
 * - pointer: pk `X#<user>`, sk `X`: `{ rev, epoch, base, log, retired, writeToken }`, the user's index (`pointers.ts`);
 *   gsi1 `XU` / `<user>` (every user with an index);
 * - mark:    pk `X#<user>`, sk `D#<session>`: `{ token, at, attempts? }`, a session written since
 *   it was indexed; gsi1 `XT` (a write's) or `XR` (a rebuild's) / `<due time>#<user>#<session>`,
 *   so the scheduled pass reads the oldest due marks, a bounded number at a time (marks written
 *   before that are in gsi1 `XD` / `<user>#<session>`, read after the others);
 * - chain:   pk `XC`, sk `C`: `{ chain, seq, until, writeToken }`, the one chain of passes that invokes itself;
 * - compaction due: pk `X#<user>`, sk `XF`: `{ at }`, a log past the threshold, left by the change
 *   that took it there for a scheduled pass to fold; gsi1 `XF` / `<at>#<user>` (oldest first).
 */
import { TABLE_SCHEMA } from "@pisync/store";

export const GSI = TABLE_SCHEMA.index.name;
/** The gsi1 partition of every pointer. */
export const USERS_PARTITION = "XU";
/** The gsi1 partition of marks written before marks were ordered by due time (read last). */
export const MARKS_PARTITION = "XD";
/** The gsi1 partition of writes' marks, ordered by due time. */
export const DUE_MARKS_PARTITION = "XT";
/** The gsi1 partition of a rebuild's marks, ordered by due time (read after writes' marks). */
export const REBUILD_MARKS_PARTITION = "XR";
/** The chain item's keys (no user's key: those start `X#`). */
export const CHAIN_PK = "XC";
export const CHAIN_SK = "C";
export const userPk = (userId: string) => `X#${userId}`;
export const POINTER_SK = "X";
export const MARK_SK_PREFIX = "D#";
/** The sort key of a user's compaction request, and the gsi1 partition of every one. */
export const COMPACTION_SK = "XF";
export const COMPACTIONS_PARTITION = "XF";
