/**
 * Teams in SQLite (see {@link TeamStore}): tables of their own in the metadata file, each
 * change one transaction.
 */
import { randomBytes } from "node:crypto";
import { decodeListCursor, encodeListCursor } from "../listing.js";
import type {
  AuditEvent,
  AuditPage,
  InviteRecord,
  MembershipRecord,
  TeamPolicy,
  TeamRecord,
  TeamSessionPage,
  TeamSessionRecord,
  TeamStore,
} from "../ports-teams.js";
import { decodeTeamCursor, encodeTeamCursor, teamPageLimit } from "../team-listing.js";
import { openSqlite, type SqliteDatabase } from "./sqlite.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS team_members (
  team_id TEXT NOT NULL, user_id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (team_id, user_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS team_members_by_user ON team_members (user_id, team_id);
CREATE TABLE IF NOT EXISTS team_invites (hash TEXT PRIMARY KEY, data TEXT NOT NULL, spent INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS team_sessions (
  owner TEXT NOT NULL, session_id TEXT NOT NULL, team_id TEXT NOT NULL, data TEXT NOT NULL,
  last_at TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (owner, session_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS team_sessions_by_team ON team_sessions (team_id, owner);
CREATE TABLE IF NOT EXISTS team_audit (
  team_id TEXT NOT NULL, at TEXT NOT NULL, nonce TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (team_id, at, nonce)) WITHOUT ROWID;
-- The audit log is append-only: the database itself refuses to change or remove an event.
CREATE TRIGGER IF NOT EXISTS team_audit_no_update BEFORE UPDATE ON team_audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS team_audit_no_delete BEFORE DELETE ON team_audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`;

/** The team list's order, on a file made before the list was paged by it. */
const ACTIVITY = `
CREATE INDEX IF NOT EXISTS team_sessions_by_activity ON team_sessions (team_id, last_at, owner, session_id);
`;

const parse = <T>(row: { data: string } | undefined): T | undefined => (row ? (JSON.parse(row.data) as T) : undefined);

/** The embedded {@link TeamStore}, on its own connection to the metadata file (WAL). */
export class SqliteTeamStore implements TeamStore {
  private readonly db: SqliteDatabase;

  constructor(path: string) {
    this.db = openSqlite(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    // The session store's connection writes to the same file: wait for it rather than fail.
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    const columns = this.db.prepare("PRAGMA table_info(team_sessions)").all() as { name: string }[];
    if (!columns.some((c) => c.name === "last_at")) {
      // A file from before: its team sessions list last, until their next write moves them up.
      this.db.exec("ALTER TABLE team_sessions ADD COLUMN last_at TEXT NOT NULL DEFAULT ''");
    }
    this.db.exec(ACTIVITY);
  }

  close(): void {
    this.db.close();
  }

  async createTeam(team: TeamRecord, owner: MembershipRecord): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare("INSERT INTO teams (id, data) VALUES (?, ?)").run(team.id, JSON.stringify(team));
      this.insertMember(owner);
    })();
  }

  private insertMember(m: MembershipRecord) {
    this.db
      .prepare("INSERT OR REPLACE INTO team_members (team_id, user_id, data) VALUES (?, ?, ?)")
      .run(m.teamId, m.userId, JSON.stringify(m));
  }

  async getTeam(teamId: string): Promise<TeamRecord | undefined> {
    return parse(this.db.prepare("SELECT data FROM teams WHERE id = ?").get(teamId) as { data: string } | undefined);
  }

  async setPolicy(teamId: string, policy: TeamPolicy): Promise<void> {
    this.db.transaction(() => {
      const team = parse<TeamRecord>(
        this.db.prepare("SELECT data FROM teams WHERE id = ?").get(teamId) as { data: string } | undefined,
      );
      if (!team) return;
      this.db.prepare("UPDATE teams SET data = ? WHERE id = ?").run(JSON.stringify({ ...team, policy }), teamId);
    })();
  }

  async memberships(query: { teamId?: string; userId?: string }): Promise<MembershipRecord[]> {
    const { teamId, userId } = query;
    const rows =
      teamId !== undefined && userId !== undefined
        ? this.db.prepare("SELECT data FROM team_members WHERE team_id = ? AND user_id = ?").all(teamId, userId)
        : teamId !== undefined
          ? this.db.prepare("SELECT data FROM team_members WHERE team_id = ?").all(teamId)
          : this.db.prepare("SELECT data FROM team_members WHERE user_id = ?").all(userId ?? "");
    return (rows as { data: string }[]).map((row) => JSON.parse(row.data) as MembershipRecord);
  }

  async putMembership(membership: MembershipRecord): Promise<void> {
    this.insertMember(membership);
  }

  async removeMembership(teamId: string, userId: string): Promise<TeamSessionRecord[]> {
    return this.db.transaction(() => {
      const rows = this.db
        .prepare("SELECT data FROM team_sessions WHERE team_id = ? AND owner = ?")
        .all(teamId, userId) as { data: string }[];
      this.db.prepare("DELETE FROM team_sessions WHERE team_id = ? AND owner = ?").run(teamId, userId);
      this.db.prepare("DELETE FROM team_members WHERE team_id = ? AND user_id = ?").run(teamId, userId);
      return rows.map((row) => JSON.parse(row.data) as TeamSessionRecord);
    })();
  }

  async putInvite(invite: InviteRecord): Promise<void> {
    this.db.prepare("INSERT INTO team_invites (hash, data) VALUES (?, ?)").run(invite.hash, JSON.stringify(invite));
  }

  async getInvite(hash: string): Promise<InviteRecord | undefined> {
    return parse(
      this.db.prepare("SELECT data FROM team_invites WHERE hash = ? AND spent = 0").get(hash) as
        | { data: string }
        | undefined,
    );
  }

  async consumeInvite(hash: string): Promise<InviteRecord | undefined> {
    // One statement marks it spent and returns it: a second redemption finds it spent already.
    const row = this.db
      .prepare("UPDATE team_invites SET spent = 1 WHERE hash = ? AND spent = 0 RETURNING data")
      .get(hash);
    return parse(row as { data: string } | undefined);
  }

  async setSessionTeam(
    owner: string,
    sessionId: string,
    record: TeamSessionRecord | null,
  ): Promise<string | undefined> {
    return this.db.transaction(() => {
      const before = this.db
        .prepare("SELECT team_id FROM team_sessions WHERE owner = ? AND session_id = ?")
        .get(owner, sessionId) as { team_id: string } | undefined;
      if (record) {
        const { lastAt, ...stored } = record;
        this.db
          .prepare(
            "INSERT OR REPLACE INTO team_sessions (owner, session_id, team_id, data, last_at) VALUES (?, ?, ?, ?, ?)",
          )
          .run(owner, sessionId, record.teamId, JSON.stringify(stored), lastAt ?? "");
      } else {
        this.db.prepare("DELETE FROM team_sessions WHERE owner = ? AND session_id = ?").run(owner, sessionId);
      }
      return before?.team_id;
    })();
  }

  async sessionTeam(owner: string, sessionId: string): Promise<string | undefined> {
    const row = this.db
      .prepare("SELECT team_id FROM team_sessions WHERE owner = ? AND session_id = ?")
      .get(owner, sessionId) as { team_id: string } | undefined;
    return row?.team_id;
  }

  async teamSessions(teamId: string): Promise<TeamSessionRecord[]> {
    const rows = this.db.prepare("SELECT data FROM team_sessions WHERE team_id = ?").all(teamId) as { data: string }[];
    return rows.map((row) => JSON.parse(row.data) as TeamSessionRecord);
  }

  async teamSessionPage(teamId: string, page: { limit: number; cursor?: string }): Promise<TeamSessionPage> {
    const limit = teamPageLimit(page.limit);
    const after = page.cursor ? decodeTeamCursor(teamId, page.cursor) : undefined;
    const order = "ORDER BY last_at DESC, owner DESC, session_id DESC LIMIT ?";
    const rows = (
      after
        ? this.db
            .prepare(
              `SELECT last_at, data FROM team_sessions WHERE team_id = ? AND (last_at, owner, session_id) < (?, ?, ?) ${order}`,
            )
            .all(teamId, after.lastAt, after.owner, after.sessionId, limit + 1)
        : this.db.prepare(`SELECT last_at, data FROM team_sessions WHERE team_id = ? ${order}`).all(teamId, limit + 1)
    ) as { last_at: string; data: string }[];
    const sessions = rows
      .slice(0, limit)
      .map((row) => ({ ...(JSON.parse(row.data) as TeamSessionRecord), lastAt: row.last_at }));
    const last = sessions[limit - 1];
    return rows.length > limit && last ? { sessions, cursor: encodeTeamCursor(teamId, last) } : { sessions };
  }

  async touchTeamSession(owner: string, sessionId: string, teamId: string, lastAt: string): Promise<void> {
    this.db
      .prepare(
        "UPDATE team_sessions SET last_at = ? WHERE owner = ? AND session_id = ? AND team_id = ? AND last_at < ?",
      )
      .run(lastAt, owner, sessionId, teamId, lastAt);
  }

  async appendAudit(event: AuditEvent): Promise<void> {
    this.db
      .prepare("INSERT INTO team_audit (team_id, at, nonce, data) VALUES (?, ?, ?, ?)")
      .run(event.teamId, event.at, randomBytes(6).toString("hex"), JSON.stringify(event));
  }

  async listAudit(teamId: string, page: { limit: number; cursor?: string }): Promise<AuditPage> {
    const after = page.cursor ? decodeListCursor(`audit:${teamId}`, page.cursor) : undefined;
    const rows = (
      after
        ? this.db
            .prepare(
              "SELECT at, nonce, data FROM team_audit WHERE team_id = ? AND (at, nonce) < (?, ?) ORDER BY at DESC, nonce DESC LIMIT ?",
            )
            .all(teamId, after[0], after[1], page.limit + 1)
        : this.db
            .prepare("SELECT at, nonce, data FROM team_audit WHERE team_id = ? ORDER BY at DESC, nonce DESC LIMIT ?")
            .all(teamId, page.limit + 1)
    ) as { at: string; nonce: string; data: string }[];
    const events = rows.slice(0, page.limit).map((row) => JSON.parse(row.data) as AuditEvent);
    const last = rows[page.limit - 1];
    return rows.length > page.limit && last
      ? { events, cursor: encodeListCursor(`audit:${teamId}`, [last.at, last.nonce]) }
      : { events };
  }
}
