/**
 * The teams part of the storage contract (see contract.ts): every adapter's {@link TeamStore}
 * keeps teams, memberships, one-time invites, team sessions and the append-only audit log alike.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { InvalidCursorError, MAX_TEAM_PAGE, type TeamRecord, type TeamStore } from "../src/index.js";

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

    it("a team's list reads most recently active first, a page at a time; a cursor of another team is refused", async () => {
      const [t, other] = [id(), id()];
      const [mia, ann] = [user(), user()];
      const put = (owner: string, sessionId: string, lastAt?: string) =>
        teams.setSessionTeam(owner, sessionId, { teamId: t, owner, sessionId, addedAt: at(0), lastAt });
      await put(mia, "a", at(10));
      await put(mia, "b", at(30));
      await put(ann, "c", at(20));
      // The same instant: the owner, then the id, break the tie (both descending).
      await put(ann, "d", at(30));
      await put(mia, "e", at(30));
      // No activity known (a session from before the list kept it): last.
      await put(ann, "f");
      await teams.setSessionTeam(mia, "x", {
        teamId: other,
        owner: mia,
        sessionId: "x",
        addedAt: at(0),
        lastAt: at(59),
      });
      const order = [`${mia}:e`, `${mia}:b`, `${ann}:d`, `${ann}:c`, `${mia}:a`, `${ann}:f`].sort((x, y) => {
        // Owners are random: the expected order is the tuple's, computed the same way.
        const key = (ref: string) => {
          const [owner, s] = ref.split(":") as [string, string];
          const lastAt = { a: at(10), b: at(30), c: at(20), d: at(30), e: at(30), f: "" }[s] ?? "";
          return [lastAt, owner, s].join("\u0000");
        };
        return key(x) < key(y) ? 1 : -1;
      });
      const refs: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await teams.teamSessionPage(t, { limit: 4, cursor });
        expect(page.sessions.length).toBeLessThanOrEqual(4);
        for (const s of page.sessions) {
          expect(s.teamId).toBe(t);
          expect(s.addedAt).toBe(at(0));
          refs.push(`${s.owner}:${s.sessionId}`);
        }
        cursor = page.cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(2);
      expect(refs).toEqual(order);
      const first = await teams.teamSessionPage(t, { limit: 2 });
      expect(first.sessions.map((s) => s.lastAt)).toEqual([at(30), at(30)]);
      expect((await teams.teamSessionPage(t, { limit: 6 })).cursor).toBeUndefined();
      await expect(teams.teamSessionPage(other, { limit: 2, cursor: first.cursor })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
      for (const bad of ["", "x", Buffer.from("[1,2]").toString("base64url"), "%%%"]) {
        if (bad)
          await expect(teams.teamSessionPage(t, { limit: 2, cursor: bad })).rejects.toBeInstanceOf(InvalidCursorError);
      }
      expect(await teams.teamSessionPage(id(), { limit: 2 })).toEqual({ sessions: [] });
      // What teamSessions reads back is the record, without the list's key.
      expect((await teams.teamSessions(other))[0]).toEqual({
        teamId: other,
        owner: mia,
        sessionId: "x",
        addedAt: at(0),
      });
    });

    it("a page holds 1 to MAX_TEAM_PAGE sessions, whatever the limit asked", async () => {
      const t = id();
      const owner = user();
      await Promise.all(
        Array.from({ length: MAX_TEAM_PAGE + 1 }, (_, i) =>
          teams.setSessionTeam(owner, `s${i}`, {
            teamId: t,
            owner,
            sessionId: `s${i}`,
            addedAt: at(0),
            lastAt: at(i % 60),
          }),
        ),
      );
      const most = await teams.teamSessionPage(t, { limit: 10_000 });
      expect(most.sessions).toHaveLength(MAX_TEAM_PAGE);
      expect(most.cursor).toBeDefined();
      expect((await teams.teamSessionPage(t, { limit: 10_000, cursor: most.cursor })).sessions).toHaveLength(1);
      expect((await teams.teamSessionPage(t, { limit: 0 })).sessions).toHaveLength(1);
      expect((await teams.teamSessionPage(t, { limit: -5 })).sessions).toHaveLength(1);
    });

    it("activity moves a session up its team's list, never down; a session in no team is left alone", async () => {
      const t = id();
      const owner = user();
      for (const [s, minute] of [
        ["old", 1],
        ["mid", 2],
        ["new", 3],
      ] as const) {
        await teams.setSessionTeam(owner, s, { teamId: t, owner, sessionId: s, addedAt: at(0), lastAt: at(minute) });
      }
      const list = async () => (await teams.teamSessionPage(t, { limit: 10 })).sessions.map((s) => s.sessionId);
      expect(await list()).toEqual(["new", "mid", "old"]);
      await teams.touchTeamSession(owner, "old", t, at(4));
      expect(await list()).toEqual(["old", "new", "mid"]);
      expect((await teams.teamSessionPage(t, { limit: 1 })).sessions[0]?.lastAt).toBe(at(4));
      // An earlier activity (a late write racing a newer one) does not move it back.
      await teams.touchTeamSession(owner, "old", t, at(2));
      expect(await list()).toEqual(["old", "new", "mid"]);
      // The session stays in its team, with its record.
      expect(await teams.sessionTeam(owner, "old")).toBe(t);
      expect((await teams.teamSessions(t)).map((s) => s.sessionId).sort()).toEqual(["mid", "new", "old"]);
      const record = (await teams.teamSessions(t)).find((s) => s.sessionId === "old");
      expect(record).toMatchObject({ teamId: t, owner, sessionId: "old", addedAt: at(0) });
      // Not in a team: nothing is made.
      await teams.touchTeamSession(owner, "loose", t, at(9));
      expect(await teams.sessionTeam(owner, "loose")).toBeUndefined();
      expect(await list()).toEqual(["old", "new", "mid"]);
      // Read in another team than the one it is in now (it moved meanwhile): neither list moves.
      const elsewhere = id();
      await teams.touchTeamSession(owner, "mid", elsewhere, at(10));
      expect(await list()).toEqual(["old", "new", "mid"]);
      expect((await teams.teamSessionPage(elsewhere, { limit: 10 })).sessions).toEqual([]);
      expect(await teams.sessionTeam(owner, "mid")).toBe(t);
    });

    it("a session that leaves its team leaves its list: taken out, moved, or its owner removed", async () => {
      const [t, other] = [id(), id()];
      const [owner, leaving] = [user(), user()];
      await teams.createTeam(team(t), { teamId: t, userId: owner, role: "owner", joinedAt: at(0) });
      await teams.putMembership({ teamId: t, userId: leaving, role: "member", joinedAt: at(1) });
      const put = (who: string, s: string, teamId = t) =>
        teams.setSessionTeam(who, s, { teamId, owner: who, sessionId: s, addedAt: at(2), lastAt: at(5) });
      await put(owner, "kept");
      await put(owner, "out");
      await put(owner, "moved");
      await put(leaving, "theirs");
      const list = async (teamId = t) =>
        (await teams.teamSessionPage(teamId, { limit: 10 })).sessions.map((s) => s.sessionId).sort();
      expect(await list()).toEqual(["kept", "moved", "out", "theirs"]);
      await teams.setSessionTeam(owner, "out", null);
      await put(owner, "moved", other);
      await teams.removeMembership(t, leaving);
      expect(await list()).toEqual(["kept"]);
      expect(await list(other)).toEqual(["moved"]);
      // A touch of a session gone from the team brings nothing back.
      await teams.touchTeamSession(owner, "out", t, at(50));
      await teams.touchTeamSession(owner, "moved", t, at(50));
      await teams.touchTeamSession(leaving, "theirs", t, at(50));
      expect(await list()).toEqual(["kept"]);
      expect(await list(other)).toEqual(["moved"]);
      expect((await teams.teamSessionPage(other, { limit: 1 })).sessions[0]?.lastAt).toBe(at(5));
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
