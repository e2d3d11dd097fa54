/**
 * The teams port: teams, their members and roles, one-time invites, which sessions are in which
 * team, the team's policy and its append-only audit log. Kept apart from `MetaStore` so that a
 * store's session metadata and its teams grow separately; both adapters keep them in the same
 * database (SQLite file, DynamoDB table). Errors follow the contract of `ports.ts`.
 */

/** A member's role: the owner made the team; owners and admins invite, set the policy and read the audit log. */
export type TeamRole = "owner" | "admin" | "member";

/**
 * A team's rules. New rules are optional fields (a maximum link lifetime, forced masking): a
 * policy stored before they existed reads as their defaults.
 */
export interface TeamPolicy {
  /** Whether share links may be made of, and still open, the team's sessions. */
  publicLinks: boolean;
}

/** A team. */
export interface TeamRecord {
  id: string;
  name: string;
  createdAt: string;
  createdBy: string;
  policy: TeamPolicy;
}

/** One user's membership of one team. */
export interface MembershipRecord {
  teamId: string;
  userId: string;
  role: TeamRole;
  joinedAt: string;
}

/** A one-time invite, stored as its secret's hash only; redeeming it marks it spent. */
export interface InviteRecord {
  /** SHA-256 of the invite's secret, hex. */
  hash: string;
  teamId: string;
  /** The role the joining user gets. */
  role: "member" | "admin";
  createdBy: string;
  createdAt: string;
  expiresAt: string;
}

/** A session put in a team by its owner. */
export interface TeamSessionRecord {
  teamId: string;
  owner: string;
  sessionId: string;
  addedAt: string;
  /**
   * The session's last activity when it is put in (its card's `lastAt`): where the team's list
   * places it until {@link TeamStore.touchTeamSession} moves it. Kept as the list's key, not in
   * the record `teamSessions` reads back.
   */
  lastAt?: string;
}

/** A team session as the team's list reads it: with its last activity, the list's order. */
export interface TeamSessionEntry extends TeamSessionRecord {
  lastAt: string;
}

/** A page of a team's sessions, most recently active first; `cursor` is absent at the end. */
export interface TeamSessionPage {
  sessions: TeamSessionEntry[];
  cursor?: string;
}

/** One event of a team's audit log; events are only ever added. */
export interface AuditEvent {
  teamId: string;
  at: string;
  /** Who did it (a user id). */
  actor: string;
  /** `invite.created`, `member.joined`, `session.added`, `session.removed`, `share.created`, `policy.changed`, `member.removed`. */
  action: string;
  /** What it was done to (a user, `owner:session`), when anything. */
  target?: string;
  /** Short facts of the event (a role, the new policy as JSON). */
  details?: Record<string, string>;
}

/** A page of a team's audit log, newest first. */
export interface AuditPage {
  events: AuditEvent[];
  cursor?: string;
}

/** Most members a team has: member lists are read whole. */
export const MAX_TEAM_MEMBERS = 200;
/** Most teams one user belongs to. */
export const MAX_USER_TEAMS = 100;
/** Most sessions one page of a team's list holds (a larger limit is read as this). */
export const MAX_TEAM_PAGE = 100;

/** Teams, memberships, invites, team sessions and the audit log (SQLite, or DynamoDB). */
export interface TeamStore {
  /** Creates a team with its owner's membership, in one step. */
  createTeam(team: TeamRecord, owner: MembershipRecord): Promise<void>;
  /** A team by id; `undefined` when unknown. */
  getTeam(teamId: string): Promise<TeamRecord | undefined>;
  /** Replaces a team's policy. */
  setPolicy(teamId: string, policy: TeamPolicy): Promise<void>;
  /**
   * A user's membership of a team, or (`userId` absent) every member of it; or every team
   * (`teamId` absent) of a user. Lists come from one bounded query, in no particular order.
   */
  memberships(query: { teamId?: string; userId?: string }): Promise<MembershipRecord[]>;
  /** Adds a membership, or changes its role. */
  putMembership(membership: MembershipRecord): Promise<void>;
  /** Removes a membership and takes the member's sessions out of the team; @returns those sessions. */
  removeMembership(teamId: string, userId: string): Promise<TeamSessionRecord[]>;
  /** Stores an invite (its hash, never the secret). */
  putInvite(invite: InviteRecord): Promise<void>;
  /** The invite whose secret hashes to `hash`, unless it is spent (the join page shows its team). */
  getInvite(hash: string): Promise<InviteRecord | undefined>;
  /**
   * Marks the invite whose secret hashes to `hash` spent and returns it, in one atomic step: of
   * any number of concurrent calls exactly one gets the record (expired or not: the caller
   * checks), the others `undefined`.
   */
  consumeInvite(hash: string): Promise<InviteRecord | undefined>;
  /**
   * Puts a session in a team (`record`), or takes it out of whichever it is in (`null`); a
   * session is in one team at most. @returns the team it was in before, if any.
   */
  setSessionTeam(owner: string, sessionId: string, record: TeamSessionRecord | null): Promise<string | undefined>;
  /** The team a session is in; `undefined` when none. */
  sessionTeam(owner: string, sessionId: string): Promise<string | undefined>;
  /**
   * Every session in a team, in no particular order (one query, as long as the team): for what
   * needs them all (a team's search catch-up, its insights). A list pages {@link teamSessionPage}.
   */
  teamSessions(teamId: string): Promise<TeamSessionRecord[]>;
  /**
   * A page of a team's sessions, most recently active first (`lastAt`, then owner, then session
   * id, all descending), read from an index on that order: `limit` (1 to {@link MAX_TEAM_PAGE})
   * entries at most, after the place `cursor` names. @throws InvalidCursorError for a cursor this
   * team's list did not give
   */
  teamSessionPage(teamId: string, page: { limit: number; cursor?: string }): Promise<TeamSessionPage>;
  /**
   * A session in team `teamId` (as {@link sessionTeam} read it) was written and its last activity
   * is now `lastAt`: if it is still in that team and `lastAt` is later than the activity
   * recorded, the team's list moves it up. One conditional write, no read: a session no longer
   * in that team, or a later activity recorded meanwhile, leaves everything as it is.
   */
  touchTeamSession(owner: string, sessionId: string, teamId: string, lastAt: string): Promise<void>;
  /** Adds an event to a team's audit log. */
  appendAudit(event: AuditEvent): Promise<void>;
  /** A page of a team's audit log, newest first. @throws InvalidCursorError for a cursor it did not give */
  listAudit(teamId: string, page: { limit: number; cursor?: string }): Promise<AuditPage>;
}
