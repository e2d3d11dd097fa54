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
  /** Every session in a team, in no particular order (one bounded query). */
  teamSessions(teamId: string): Promise<TeamSessionRecord[]>;
  /** Adds an event to a team's audit log. */
  appendAudit(event: AuditEvent): Promise<void>;
  /** A page of a team's audit log, newest first. @throws InvalidCursorError for a cursor it did not give */
  listAudit(teamId: string, page: { limit: number; cursor?: string }): Promise<AuditPage>;
}
