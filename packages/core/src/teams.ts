/**
 * Teams: who may see which sessions, under which rules, and the record of it. A user who is not
 * a member finds nothing (every team route is NotFound, as for a missing team); a member who is
 * not an owner or admin is refused what is theirs to do (Forbidden `forbidden`). Sessions stay
 * their owners': a team only makes them readable by its members, masked as share pages are.
 */
import { createHash, randomBytes } from "node:crypto";
import { INVITE_TOKEN, TEAM_ID } from "@pisync/protocol";
import type {
  AuditEvent,
  AuditPage,
  MembershipRecord,
  MetaStore,
  SessionCard,
  SessionHead,
  ShareRecord,
  TeamPolicy,
  TeamRecord,
  TeamRole,
  TeamSessionEntry,
  TeamSessionPage,
  TeamSessionRecord,
  TeamStore,
} from "@pisync/store";
import { cardOf, InvalidCursorError, MAX_TEAM_MEMBERS, MAX_USER_TEAMS } from "@pisync/store";
import { BadRequest, Forbidden, Gone, NotFound } from "./errors.js";
import { checkId, checkSessionId, SAFE_ID, SESSION_ID } from "./keys.js";

/** How long an invite link works. */
export const INVITE_SECONDS = 7 * 86400;
/** The policy of a new team: what pisync does without one. */
export const DEFAULT_POLICY: TeamPolicy = { publicLinks: true };

/** A team as its member sees it. */
export interface TeamView {
  id: string;
  name: string;
  role: TeamRole;
}

/** A team session as a member's list shows it. */
export interface TeamSessionCard extends SessionCard {
  owner: string;
  addedAt: string;
}

const hashOf = (secret: string) => createHash("sha256").update(secret).digest("hex");
const ADMINS: ReadonlySet<TeamRole> = new Set(["owner", "admin"]);
const noTeam = () => new NotFound("no such team");

/**
 * The team use cases over the teams port and the session metadata (for a session's existence
 * and its card).
 */
export class Teams {
  constructor(
    private readonly teams: TeamStore,
    private readonly meta: MetaStore,
    private readonly clock: () => Date = () => new Date(),
    private readonly options: {
      /** Called when a session enters or leaves a team (the team's search follows it). */
      moved?: (teamId: string, owner: string, sessionId: string) => void;
      /**
       * Masks credentials in a text as share pages do (the list's names, first messages,
       * folders): asked for each text a page shows, so it keeps what it masked (the app's `Memo`).
       */
      maskText?: (text: string) => Promise<string>;
    } = {},
  ) {}

  private moved(teamId: string | undefined, owner: string, sessionId: string): void {
    if (teamId) this.options.moved?.(teamId, owner, sessionId);
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private audit(teamId: string, actor: string, action: string, more: Omit<Partial<AuditEvent>, "teamId"> = {}) {
    return this.teams.appendAudit({ teamId, at: this.now(), actor, action, ...more });
  }

  /**
   * The caller's membership of a team, or NotFound (an unknown team and another team look the
   * same); with `admin`, Forbidden `forbidden` for a plain member.
   */
  async membership(userId: string, teamId: string, admin = false): Promise<MembershipRecord> {
    if (!TEAM_ID.test(teamId)) throw noTeam();
    const [membership] = await this.teams.memberships({ teamId, userId });
    if (!membership) throw noTeam();
    if (admin && !ADMINS.has(membership.role)) {
      throw new Forbidden("only the team's owner or an admin may do this", "forbidden");
    }
    return membership;
  }

  /** Makes a team owned by `userId`. @throws BadRequest for an empty or over-long name */
  async create(userId: string, name: string): Promise<TeamView> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 100) throw new BadRequest("a team's name is 1 to 100 characters", "bad_body");
    if ((await this.teams.memberships({ userId })).length >= MAX_USER_TEAMS) {
      throw new BadRequest(`a user belongs to ${MAX_USER_TEAMS} teams at most`, "bad_request");
    }
    const now = this.now();
    const team: TeamRecord = {
      id: `t${randomBytes(8).toString("hex")}`,
      name: trimmed,
      createdAt: now,
      createdBy: userId,
      policy: DEFAULT_POLICY,
    };
    await this.teams.createTeam(team, { teamId: team.id, userId, role: "owner", joinedAt: now });
    return { id: team.id, name: team.name, role: "owner" };
  }

  /** The caller's teams, by name. */
  async list(userId: string): Promise<TeamView[]> {
    const memberships = await this.teams.memberships({ userId });
    const teams = await Promise.all(
      memberships.map(async (m) => {
        const team = await this.teams.getTeam(m.teamId);
        return team ? { id: team.id, name: team.name, role: m.role } : undefined;
      }),
    );
    return teams
      .filter((t) => t !== undefined)
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** The team, for one of its members. */
  async get(userId: string, teamId: string): Promise<TeamRecord & { role: TeamRole }> {
    const { role } = await this.membership(userId, teamId);
    const team = await this.teams.getTeam(teamId);
    if (!team) throw noTeam();
    return { ...team, role };
  }

  /** A one-time invite (owner or admin): its secret, shown once, and when it stops working. */
  async invite(userId: string, teamId: string, role: "member" | "admin" = "member") {
    await this.membership(userId, teamId, true);
    const token = `pti_${randomBytes(24).toString("base64url")}`;
    const now = this.clock();
    const expiresAt = new Date(now.getTime() + INVITE_SECONDS * 1000).toISOString();
    await this.teams.putInvite({
      hash: hashOf(token),
      teamId,
      role,
      createdBy: userId,
      createdAt: now.toISOString(),
      expiresAt,
    });
    await this.audit(teamId, userId, "invite.created", { details: { role } });
    return { token, expiresAt };
  }

  /**
   * Joins the team an invite names, spending it. An unknown or spent invite is NotFound, an
   * expired one Gone. Someone already in the team keeps the higher of the two roles.
   */
  async join(userId: string, token: string): Promise<{ team: { id: string; name: string }; role: TeamRole }> {
    if (!INVITE_TOKEN.test(token)) throw new NotFound("no such invite");
    const invite = await this.teams.consumeInvite(hashOf(token));
    if (!invite) throw new NotFound("no such invite");
    if (Date.parse(invite.expiresAt) <= this.clock().getTime()) throw new Gone("this invite has expired");
    const team = await this.teams.getTeam(invite.teamId);
    if (!team) throw new NotFound("no such invite");
    const [current] = await this.teams.memberships({ teamId: team.id, userId });
    if (current && (ADMINS.has(current.role) || invite.role === "member")) {
      return { team: { id: team.id, name: team.name }, role: current.role };
    }
    if (!current && (await this.teams.memberships({ teamId: team.id })).length >= MAX_TEAM_MEMBERS) {
      throw new BadRequest(`a team has ${MAX_TEAM_MEMBERS} members at most`, "bad_request");
    }
    await this.teams.putMembership({
      teamId: team.id,
      userId,
      role: invite.role,
      joinedAt: current?.joinedAt ?? this.now(),
    });
    await this.audit(team.id, userId, "member.joined", { target: userId, details: { role: invite.role } });
    return { team: { id: team.id, name: team.name }, role: invite.role };
  }

  /**
   * The team an unspent, unexpired invite would join, without spending it (the join page shows
   * it): NotFound for an unknown or spent one, Gone for an expired one.
   */
  async invitation(token: string): Promise<{ id: string; name: string; role: TeamRole }> {
    const invite = INVITE_TOKEN.test(token) ? await this.teams.getInvite(hashOf(token)) : undefined;
    const team = invite ? await this.teams.getTeam(invite.teamId) : undefined;
    if (!invite || !team) throw new NotFound("no such invite");
    if (Date.parse(invite.expiresAt) <= this.clock().getTime()) throw new Gone("this invite has expired");
    return { id: team.id, name: team.name, role: invite.role };
  }

  /**
   * Puts the caller's session in one of their teams, or (`teamId` null) takes it out of its
   * team. Someone else's session, or a team the caller is not in, is NotFound.
   */
  async setSessionTeam(userId: string, sessionId: string, teamId: string | null): Promise<{ team: TeamView | null }> {
    checkSessionId(sessionId);
    const head = await this.meta.getHead(userId, sessionId);
    if (!head) throw new NotFound("no such session");
    if (teamId === null) {
      const before = await this.teams.setSessionTeam(userId, sessionId, null);
      this.moved(before, userId, sessionId);
      if (before) await this.audit(before, userId, "session.removed", { target: `${userId}:${sessionId}` });
      return { team: null };
    }
    const { role } = await this.membership(userId, teamId);
    const team = await this.teams.getTeam(teamId);
    if (!team) throw noTeam();
    // Its place in the team's list: its last activity, moved up by its writes (see `Appender`).
    const record: TeamSessionRecord = {
      teamId,
      owner: userId,
      sessionId,
      addedAt: this.now(),
      lastAt: cardOf(head).lastAt,
    };
    const before = await this.teams.setSessionTeam(userId, sessionId, record);
    this.moved(teamId, userId, sessionId);
    if (before !== teamId) this.moved(before, userId, sessionId);
    if (before !== teamId) {
      if (before) await this.audit(before, userId, "session.removed", { target: `${userId}:${sessionId}` });
      await this.audit(teamId, userId, "session.added", { target: `${userId}:${sessionId}` });
    }
    return { team: { id: team.id, name: team.name, role } };
  }

  /**
   * A deleted session leaves its team: a session made again under the same id is another one,
   * and its owner puts it in again if they mean to.
   */
  async sessionDeleted(owner: string, sessionId: string): Promise<void> {
    const before = await this.teams.setSessionTeam(owner, sessionId, null);
    this.moved(before, owner, sessionId);
    if (before) await this.audit(before, owner, "session.removed", { target: `${owner}:${sessionId}` });
  }

  /** The team a session is in, if any (any user's session: for the rules of its share links). */
  async teamOf(owner: string, sessionId: string): Promise<TeamRecord | undefined> {
    const teamId = await this.teams.sessionTeam(owner, sessionId);
    return teamId ? this.teams.getTeam(teamId) : undefined;
  }

  /** The cards of a page's entries, in the page's order; a session gone meanwhile is left out. */
  private async cards(entries: TeamSessionEntry[]): Promise<TeamSessionCard[]> {
    const byOwner = new Map<string, string[]>();
    for (const e of entries) byOwner.set(e.owner, [...(byOwner.get(e.owner) ?? []), e.sessionId]);
    const found = new Map<string, SessionCard>();
    await Promise.all(
      [...byOwner].map(async ([owner, ids]) => {
        for (const card of await this.meta.getCards(owner, ids)) found.set(`${owner}:${card.sessionId}`, card);
      }),
    );
    return entries.flatMap((e) => {
      const card = found.get(`${e.owner}:${e.sessionId}`);
      return card ? [{ ...card, owner: e.owner, addedAt: e.addedAt }] : [];
    });
  }

  /** A card as members see it: what it shows of the session's text masked as on share pages. */
  private async masked(card: TeamSessionCard): Promise<TeamSessionCard> {
    const mask = this.options.maskText;
    if (!mask) return card;
    const [name, firstMessage, cwd] = await Promise.all(
      [card.name, card.firstMessage, card.cwd].map((text) => (text === undefined ? undefined : mask(text))),
    );
    return { ...card, name, firstMessage, cwd };
  }

  /**
   * A page of the team's sessions, most recently active first (members): one bounded read of
   * the team's list, then the page's cards. @throws BadRequest `bad_query` for a cursor the
   * list did not give
   */
  async sessions(
    userId: string,
    teamId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ sessions: TeamSessionCard[]; cursor?: string }> {
    // The page is read while membership is checked (one round trip less); a non-member learns
    // nothing of it, not even whether their cursor was valid: membership's answer comes first.
    const [member, read] = await Promise.allSettled([
      this.membership(userId, teamId),
      this.teams.teamSessionPage(teamId, page),
    ]);
    if (member.status === "rejected") throw member.reason;
    if (read.status === "rejected") {
      if (read.reason instanceof InvalidCursorError) throw new BadRequest(read.reason.message, "bad_query");
      throw read.reason;
    }
    const entries: TeamSessionPage = read.value;
    const sessions = await Promise.all((await this.cards(entries.sessions)).map((card) => this.masked(card)));
    return entries.cursor ? { sessions, cursor: entries.cursor } : { sessions };
  }

  /**
   * The session a team route names: `{owner}:{id}`, or `{id}` alone when one member's session
   * of that id is in the team. Anything else, or a session not in the team, is NotFound.
   */
  async resolveSession(userId: string, teamId: string, ref: string): Promise<{ owner: string; sessionId: string }> {
    await this.membership(userId, teamId);
    const colon = ref.indexOf(":");
    const [owner, sessionId] = [ref.slice(0, colon), ref.slice(colon + 1)];
    // `{owner}:{id}` is one read of the session's team; `{id}` alone looks through the team's sessions.
    const found =
      colon >= 0
        ? SAFE_ID.test(owner) &&
          SESSION_ID.test(sessionId) &&
          (await this.teams.sessionTeam(owner, sessionId)) === teamId
          ? [{ owner, sessionId }]
          : []
        : (await this.teams.teamSessions(teamId)).filter((r) => r.sessionId === ref);
    const [one] = found;
    if (found.length !== 1 || !one) throw new NotFound("no such session in this team");
    // The owner must still be a member (their removal takes their sessions out, but a read may race it).
    await this.membership(one.owner, teamId).catch(() => {
      throw new NotFound("no such session in this team");
    });
    return { owner: one.owner, sessionId: one.sessionId };
  }

  /**
   * A team session as share pages show it: a view-only share of it, masked. @throws NotFound
   * when the session is gone.
   */
  async view(
    userId: string,
    teamId: string,
    ref: string,
  ): Promise<{ share: ShareRecord; head: SessionHead; owner: string }> {
    const { owner, sessionId } = await this.resolveSession(userId, teamId, ref);
    const head = await this.meta.getHead(owner, sessionId);
    if (!head) throw new NotFound("no such session in this team");
    const share: ShareRecord = {
      // The reading's caches are keyed by this id: it names the one session, not only the team.
      id: `team:${teamId}:${owner}:${sessionId}`,
      userId: owner,
      sessionId,
      sessionCreatedAt: head.createdAt,
      createdAt: head.createdAt,
      expiresAt: "9999-12-31T23:59:59.999Z",
      maskSecrets: true,
    };
    return { share, head, owner };
  }

  /** The owners and ids of the team's sessions whose owners are `userId`'s fellow members (search reads them). */
  async sessionIds(userId: string, teamId: string): Promise<Map<string, string[]>> {
    await this.membership(userId, teamId);
    const members = new Set((await this.teams.memberships({ teamId })).map((m) => m.userId));
    const byOwner = new Map<string, string[]>();
    for (const r of await this.teams.teamSessions(teamId)) {
      if (members.has(r.owner)) byOwner.set(r.owner, [...(byOwner.get(r.owner) ?? []), r.sessionId]);
    }
    return byOwner;
  }

  /**
   * What a team's insights add up (members): each member's sessions in the team, whether the
   * caller sees the split by member (owners and admins), and titles masked as the list's.
   */
  async insightsOf(userId: string, teamId: string) {
    const { role } = await this.membership(userId, teamId);
    const byOwner = await this.sessionIds(userId, teamId);
    return {
      parts: [...byOwner].map(([owner, ids]) => ({ userId: owner, sessionIds: new Set(ids) })),
      perMember: ADMINS.has(role),
      title: async (card: SessionCard) => {
        const shown = await this.masked({ ...card, owner: "", addedAt: "" });
        return shown.name || shown.firstMessage || card.sessionId;
      },
    };
  }

  /** The team's members, earliest first (members). */
  async members(userId: string, teamId: string): Promise<MembershipRecord[]> {
    await this.membership(userId, teamId);
    return (await this.teams.memberships({ teamId })).sort(
      (a, b) => a.joinedAt.localeCompare(b.joinedAt) || a.userId.localeCompare(b.userId),
    );
  }

  /**
   * Removes a member (an owner or admin, or the member leaving); their sessions leave the team
   * with them. The owner cannot be removed. @throws NotFound for a user who is not a member
   */
  async removeMember(actor: string, teamId: string, user: string): Promise<void> {
    const self = actor === user;
    await this.membership(actor, teamId, !self);
    checkId("user", user);
    const [target] = await this.teams.memberships({ teamId, userId: user });
    if (!target) throw new NotFound("no such member");
    if (target.role === "owner") throw new Forbidden("the team's owner cannot be removed", "forbidden");
    const sessions = await this.teams.removeMembership(teamId, user);
    for (const s of sessions) {
      this.moved(teamId, s.owner, s.sessionId);
      await this.audit(teamId, actor, "session.removed", { target: `${s.owner}:${s.sessionId}` });
    }
    await this.audit(teamId, actor, "member.removed", { target: user });
  }

  /** Replaces the team's policy (owner or admin). */
  async setPolicy(userId: string, teamId: string, policy: TeamPolicy): Promise<TeamPolicy> {
    await this.membership(userId, teamId, true);
    await this.teams.setPolicy(teamId, policy);
    await this.audit(teamId, userId, "policy.changed", { details: { policy: JSON.stringify(policy) } });
    return policy;
  }

  /** A page of the team's audit log, newest first (owner or admin). */
  async auditLog(userId: string, teamId: string, page: { limit: number; cursor?: string }): Promise<AuditPage> {
    await this.membership(userId, teamId, true);
    try {
      return await this.teams.listAudit(teamId, page);
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new BadRequest(error.message, "bad_query");
      throw error;
    }
  }

  /**
   * The share-link rules of a session's team: Forbidden `team_policy` when its team's policy
   * allows no public links (called before a share is made).
   */
  async checkShare(owner: string, sessionId: string): Promise<void> {
    const team = await this.teamOf(owner, sessionId);
    if (team && !team.policy.publicLinks) {
      throw new Forbidden("this session's team does not allow public links", "team_policy");
    }
  }

  /** Whether an existing link of a session still opens under its team's policy. */
  async shareAllowed(share: ShareRecord): Promise<boolean> {
    const team = await this.teamOf(share.userId, share.sessionId);
    return !team || team.policy.publicLinks;
  }

  /** Records a share made of a team session in its team's audit log. */
  async shared(share: ShareRecord): Promise<void> {
    const teamId = await this.teams.sessionTeam(share.userId, share.sessionId);
    if (teamId) {
      await this.audit(teamId, share.userId, "share.created", {
        target: `${share.userId}:${share.sessionId}`,
        details: { share: share.id },
      });
    }
  }
}
