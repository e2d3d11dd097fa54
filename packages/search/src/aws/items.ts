/**
 * The search adapter's items in the metadata table (beside the store's, which use other key
 * prefixes):
 * - pointer: pk `X#<user>`, sk `X`: `{ rev, epoch, base, log, retired }`, the user's index (`pointers.ts`);
 *   gsi1 `XU` / `<user>` (every user with an index);
 * - mark:    pk `X#<user>`, sk `D#<session>`: `{ token }`, a session written since it was
 *   indexed; gsi1 `XD` / `<user>#<session>` (every marked session, for the scheduled pass).
 */
import { TABLE_SCHEMA } from "@pisync/store";

export const GSI = TABLE_SCHEMA.index.name;
/** The gsi1 partition of every pointer. */
export const USERS_PARTITION = "XU";
/** The gsi1 partition of every mark. */
export const MARKS_PARTITION = "XD";
export const userPk = (userId: string) => `X#${userId}`;
export const POINTER_SK = "X";
export const MARK_SK_PREFIX = "D#";
