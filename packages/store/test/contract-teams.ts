/**
 * The teams part of the storage contract (see contract.ts): every adapter's {@link TeamStore}
 * keeps teams, memberships, one-time invites, team sessions and the append-only audit log alike.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { InvalidCursorError, type TeamRecord, type TeamStore } from "../src/index.js";

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();

function team(id: string): TeamRecord {
  return { id, name: `Team ${id}`, createdAt: at(0), createdBy: "owner", policy: { publicLinks: true } };
}

/** The teams contract on the store `makeTeams` opens. */
export function describeTeamContract(name: string, makeTeams: () => Promise<TeamStore>) {
  describe(`teams contract: ${name}`, () => {
    let teams: TeamStore;
    const id = () => `t${randomUUID().replaceAll("-", "").slice(0, 16)}`;
    const user = () => `u-${randomUUID()}`;
    beforeAll(async () => {
      teams = await makeTeams();
    });

    it("a team is made with its owner; members are listed by team and teams by member", async () => {
      const t = id();
      const [owner, other] = [user(), user()];
      await teams.createTeam(team(t), { teamId: t, userId: owner, role: "owner", joinedAt: at(0) });
      expect(await teams.getTeam(t)).toEqual(team(t));
      expect(await teams.getTeam(id())).toBeUndefined();
      await teams.putMembership({ teamId: t, userId: other, role: "member", joinedAt: at(1) });
      expect((await teams.memberships({ teamId: t })).map((m) => [m.userId, m.role]).sort()).toEqual(
        [
          [owner, "owner"],
          [other, "member"],
        ].sort(),
      );
      expect(await teams.memberships({ teamId: t, userId: other })).toEqual([
        { teamId: t, userId: other, role: "member", joinedAt: at(1) },
      ]);
      expect(await teams.memberships({ teamId: t, userId: user() })).toEqual([]);
      expect((await teams.memberships({ userId: other })).map((m) => m.teamId)).toEqual([t]);
      // A role changes in place.
      await teams.putMembership({ teamId: t, userId: other, role: "admin", joinedAt: at(1) });
      expect((await teams.memberships({ teamId: t, userId: other }))[0]?.role).toBe("admin");
    });

    it("a second team of the same id is refused", async () => {
      const t = id();
      await teams.createTeam(team(t), { teamId: t, userId: user(), role: "owner", joinedAt: at(0) });
      await expect(
        teams.createTeam(team(t), { teamId: t, userId: user(), role: "owner", joinedAt: at(0) }),
      ).rejects.toThrow();
    });

    it("the policy is replaced whole", async () => {
      const t = id();
      await teams.createTeam(team(t), { teamId: t, userId: user(), role: "owner", joinedAt: at(0) });
      await teams.setPolicy(t, { publicLinks: false });
      expect((await teams.getTeam(t))?.policy).toEqual({ publicLinks: false });
    });

    it("an invite is redeemed once, of any number of concurrent redemptions", async () => {
      const hash = randomUUID().replaceAll("-", "").padEnd(64, "0");
      const invite = {
        hash,
        teamId: id(),
        role: "member" as const,
        createdBy: user(),
        createdAt: at(0),
        expiresAt: at(60),
      };
      await teams.putInvite(invite);
      // Reading it spends nothing; a spent one reads as none.
      expect(await teams.getInvite(hash)).toEqual(invite);
      expect(await teams.getInvite(hash)).toEqual(invite);
      const results = await Promise.all(Array.from({ length: 5 }, () => teams.consumeInvite(hash)));
      expect(results.filter((r) => r !== undefined)).toEqual([invite]);
      expect(await teams.consumeInvite(hash)).toBeUndefined();
      expect(await teams.getInvite(hash)).toBeUndefined();
      expect(await teams.consumeInvite("f".repeat(64))).toBeUndefined();
    });

    it("a session is in one team at most; moving it leaves the first; null takes it out", async () => {
      const [a, b] = [id(), id()];
      const owner = user();
      expect(await teams.sessionTeam(owner, "s1")).toBeUndefined();
      expect(await teams.setSessionTeam(owner, "s1", { teamId: a, owner, sessionId: "s1", addedAt: at(1) })).toBe(
        undefined,
      );
      await teams.setSessionTeam(owner, "s2", { teamId: a, owner, sessionId: "s2", addedAt: at(2) });
      expect(await teams.sessionTeam(owner, "s1")).toBe(a);
      expect((await teams.teamSessions(a)).map((s) => s.sessionId).sort()).toEqual(["s1", "s2"]);
      expect(await teams.setSessionTeam(owner, "s1", { teamId: b, owner, sessionId: "s1", addedAt: at(3) })).toBe(a);
      expect((await teams.teamSessions(a)).map((s) => s.sessionId)).toEqual(["s2"]);
      expect(await teams.teamSessions(b)).toEqual([{ teamId: b, owner, sessionId: "s1", addedAt: at(3) }]);
      expect(await teams.setSessionTeam(owner, "s1", null)).toBe(b);
      expect(await teams.teamSessions(b)).toEqual([]);
      expect(await teams.sessionTeam(owner, "s1")).toBeUndefined();
      // Another owner's session of the same id is another session.
      expect(await teams.sessionTeam(user(), "s2")).toBeUndefined();
    });

    it("removing a member takes their sessions out of the team, and only theirs", async () => {
      const t = id();
      const [owner, leaving] = [user(), user()];
      await teams.createTeam(team(t), { teamId: t, userId: owner, role: "owner", joinedAt: at(0) });
      await teams.putMembership({ teamId: t, userId: leaving, role: "member", joinedAt: at(1) });
      await teams.setSessionTeam(owner, "mine", { teamId: t, owner, sessionId: "mine", addedAt: at(2) });
      await teams.setSessionTeam(leaving, "theirs", { teamId: t, owner: leaving, sessionId: "theirs", addedAt: at(3) });
      const removed = await teams.removeMembership(t, leaving);
      expect(removed.map((s) => s.sessionId)).toEqual(["theirs"]);
      expect((await teams.teamSessions(t)).map((s) => s.sessionId)).toEqual(["mine"]);
      expect(await teams.sessionTeam(leaving, "theirs")).toBeUndefined();
      expect(await teams.memberships({ teamId: t, userId: leaving })).toEqual([]);
      expect(await teams.memberships({ userId: leaving })).toEqual([]);
    });

    it("the audit log reads newest first, a page at a time; a foreign cursor is refused", async () => {
      const t = id();
      for (let i = 0; i < 5; i++) {
        await teams.appendAudit({ teamId: t, at: at(i), actor: "a", action: "member.joined", target: `u${i}` });
      }
      // Two events at the same instant are both kept.
      await teams.appendAudit({ teamId: t, at: at(4), actor: "a", action: "policy.changed" });
      const first = await teams.listAudit(t, { limit: 4 });
      expect(first.events.map((e) => e.at)).toEqual([at(4), at(4), at(3), at(2)]);
      expect(first.cursor).toBeDefined();
      const second = await teams.listAudit(t, { limit: 4, cursor: first.cursor });
      expect(second.events.map((e) => e.target)).toEqual(["u1", "u0"]);
      expect(second.cursor).toBeUndefined();
      await expect(teams.listAudit(id(), { limit: 4, cursor: first.cursor })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
      expect(await teams.listAudit(id(), { limit: 4 })).toEqual({ events: [] });
    });
  });
}
