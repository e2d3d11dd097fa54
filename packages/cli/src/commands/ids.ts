/**
 * Ids as people type them: a unique prefix of at least 6 characters stands for the whole id (as
 * git and docker take one); an ambiguous prefix is refused with the ids it matches. Resolved
 * against the user's own list (the server answers only the caller's sessions and shares).
 */
import type { ShareView } from "@pisync/protocol";
import { type Api, ApiError } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { sanitize } from "../sanitize.js";
import { cloudSessions } from "./cloud-sessions.js";

/** The shortest prefix taken for an id. */
export const MIN_PREFIX = 6;

/** At most this many matches are listed when a prefix is ambiguous. */
const LISTED = 10;

/** The one id among `ids` that `ref` is or starts; a CliError when none (exit 4) or several (exit 2). */
export function pickByPrefix(ref: string, ids: readonly string[], what: string, listHint: string): string {
  if (ids.includes(ref)) return ref;
  const matches = ref.length >= MIN_PREFIX ? ids.filter((id) => id.startsWith(ref)) : [];
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) {
    const short = ref.length < MIN_PREFIX ? ` (a prefix needs ${MIN_PREFIX} characters or more)` : "";
    throw new CliError(sanitize(`no ${what} ${ref}${short} (${listHint} lists them)`), EXIT.notFound);
  }
  const listed = matches.slice(0, LISTED).map((id) => `  ${sanitize(id)}`);
  const more = matches.length > LISTED ? [`  … and ${matches.length - LISTED} more`] : [];
  throw new CliError(
    `${sanitize(`${ref} is ambiguous: it starts ${matches.length} ${what}s; type more of it:`)}\n${[...listed, ...more].join("\n")}`,
    EXIT.usage,
  );
}

/** Whether the session exists as named (one `HEAD`). */
async function sessionExists(client: Api, id: string): Promise<boolean> {
  try {
    return (await client.head(id)) !== undefined;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 400 || error.status === 404)) return false;
    throw error;
  }
}

/**
 * A session id, or a unique prefix of one (≥ 6 characters) of the caller's sessions. A ref that
 * is no session and starts none is returned as given: the command's own request then answers
 * for it (its "no session", exit 4).
 */
export async function resolveSessionId(client: Api, ref: string): Promise<string> {
  if (ref.length < MIN_PREFIX || (await sessionExists(client, ref))) return ref;
  const ids = (await cloudSessions(client)).map((s) => s.id);
  if (!ids.some((id) => id.startsWith(ref))) return ref;
  return pickByPrefix(ref, ids, "session", "pisync ls");
}

/** A share link as `pisync share` prints it: `https://host/s/<share id>.<key id>.<signature>`. */
export const SHARE_LINK = /^https?:\/\/[^\s]+\/s\/([A-Za-z0-9_-]{22})\.[A-Za-z0-9._-]+$/;

/** A share's id from its id, a unique prefix of it (≥ 6), or the link `pisync share` printed. */
export async function resolveShareId(client: Api, ref: string): Promise<string> {
  const fromLink = SHARE_LINK.exec(ref)?.[1];
  if (fromLink) return fromLink;
  if (/^[A-Za-z0-9_-]{22}$/.test(ref)) return ref;
  const { shares } = await client.json<{ shares: ShareView[] }>("/v1/shares");
  return pickByPrefix(
    ref,
    shares.map((s) => s.id),
    "share",
    "pisync shares",
  );
}
