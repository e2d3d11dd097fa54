/**
 * The team list's places, the same on every adapter: a session's place is its last activity,
 * owner and id (the list's order, each descending), and a cursor is that place, base64url,
 * naming its team so that one team's cursor is refused by another's list.
 */
import { InvalidCursorError } from "./errors.js";
import { decodeListCursor, encodeListCursor } from "./listing.js";
import { MAX_TEAM_PAGE } from "./ports-teams.js";

/** A place in a team's list: the last entry read. */
export interface TeamListPosition {
  lastAt: string;
  owner: string;
  sessionId: string;
}

const scope = (teamId: string) => `team:${teamId}`;

/** The cursor after `position` in `teamId`'s list. */
export function encodeTeamCursor(teamId: string, position: TeamListPosition): string {
  return encodeListCursor(scope(teamId), [position.lastAt, `${position.owner}:${position.sessionId}`]);
}

/** The place a cursor names. @throws InvalidCursorError for one this team's list did not give */
export function decodeTeamCursor(teamId: string, cursor: string): TeamListPosition {
  const [lastAt, ref] = decodeListCursor(scope(teamId), cursor);
  // User ids hold no `:`; both parts are ids, never empty.
  const colon = ref.indexOf(":");
  if (colon <= 0 || colon === ref.length - 1) throw new InvalidCursorError();
  return { lastAt, owner: ref.slice(0, colon), sessionId: ref.slice(colon + 1) };
}

/** A page's size within 1..{@link MAX_TEAM_PAGE}, whatever was asked. */
export const teamPageLimit = (limit: number) =>
  Math.max(1, Math.min(MAX_TEAM_PAGE, Number.isFinite(limit) ? Math.floor(limit) : MAX_TEAM_PAGE));
