/**
 * The shares port's contract: kept by id, listed and paged per user, counted atomically, revoked with their session.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidCursorError, type ShareRecord } from "../src/index.js";
import { type ContractContext, head } from "./contract.js";

/** The shares port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeShareContract({ stores, user }: ContractContext) {
  describe("shares", () => {
    it("keeps shares by id and lists them per user, newest first", async () => {
      const u = user();
      const share = (id: string, createdAt: string) => ({
        id,
        userId: u,
        sessionId: "s",
        createdAt,
        expiresAt: "2099-01-01T00:00:00.000Z",
        maskSecrets: true,
      });
      await stores.meta.putShare(share(`a-${u}`, "2026-01-01T00:00:00.000Z"));
      await stores.meta.putShare(share(`b-${u}`, "2026-01-02T00:00:00.000Z"));
      expect((await stores.meta.getShare(`a-${u}`))?.sessionId).toBe("s");
      expect((await stores.meta.listShares(u)).map((s) => s.id)).toEqual([`b-${u}`, `a-${u}`]);
      await stores.meta.putShare({
        ...share(`a-${u}`, "2026-01-01T00:00:00.000Z"),
        revokedAt: "2026-01-03T00:00:00.000Z",
      });
      expect((await stores.meta.getShare(`a-${u}`))?.revokedAt).toBe("2026-01-03T00:00:00.000Z");
    });

    it("pages a user's shares newest first, and refuses another user's cursor", async () => {
      const [u, other] = [user(), user()];
      const share = (owner: string, id: string, createdAt: string): ShareRecord => ({
        id,
        userId: owner,
        sessionId: "s",
        createdAt,
        expiresAt: "2099-01-01T00:00:00.000Z",
        maskSecrets: true,
      });
      const ids = Array.from({ length: 5 }, () => randomUUID());
      for (const [i, id] of ids.entries())
        await stores.meta.putShare(share(u, id, `2026-01-0${1 + (i % 3)}T00:00:00.000Z`));
      await stores.meta.putShare(share(other, randomUUID(), "2026-01-09T00:00:00.000Z"));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await stores.meta.listSharePage(u, { limit: 2, cursor });
        expect(page.shares.length).toBeLessThanOrEqual(2);
        seen.push(...page.shares.map((s) => `${s.createdAt} ${s.id}`));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toHaveLength(5);
      expect(seen).toEqual([...seen].sort().reverse());
      const first = await stores.meta.listSharePage(u, { limit: 2 });
      await expect(stores.meta.listSharePage(other, { limit: 2, cursor: first.cursor })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
    });

    it("counts share views and downloads atomically, apart; rewriting the record keeps them; unknown ids change nothing", async () => {
      const u = user();
      const share = {
        id: `v-${u}`,
        userId: u,
        sessionId: "s",
        createdAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2099-01-01T00:00:00.000Z",
        maskSecrets: true,
      };
      await stores.meta.putShare(share);
      expect((await stores.meta.getShare(share.id))?.views ?? 0).toBe(0);
      expect((await stores.meta.getShare(share.id))?.lastViewedAt).toBeUndefined();
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          stores.meta.recordShareView(share.id, `2026-01-02T00:00:${String(i).padStart(2, "0")}.000Z`),
        ),
      );
      const viewed = await stores.meta.getShare(share.id);
      expect(viewed?.views).toBe(12);
      expect(viewed?.lastViewedAt).toMatch(/^2026-01-02T00:00:\d\d\.000Z$/);
      expect(viewed?.downloads ?? 0).toBe(0);
      await Promise.all(Array.from({ length: 7 }, () => stores.meta.recordShareDownload(share.id)));
      expect(await stores.meta.getShare(share.id)).toMatchObject({ views: 12, downloads: 7 });
      await stores.meta.putShare({ ...share, revokedAt: "2026-01-03T00:00:00.000Z", views: 0, downloads: 0 });
      const [listed] = await stores.meta.listShares(u);
      expect(listed).toMatchObject({ revokedAt: "2026-01-03T00:00:00.000Z", views: 12, downloads: 7 });
      await stores.meta.recordShareView(`missing-${u}`, "2026-01-04T00:00:00.000Z");
      await stores.meta.recordShareDownload(`missing-${u}`);
      expect(await stores.meta.getShare(`missing-${u}`)).toBeUndefined();
    });

    it("deleting a session revokes its shares in the same commit, and nobody else's", async () => {
      const [u, other] = [user(), user()];
      const share = (id: string, userId: string, sessionId: string, revokedAt?: string) => ({
        id: `${id}-${userId}`,
        userId,
        sessionId,
        sessionCreatedAt: "2026-01-01T00:00:00.000Z",
        createdAt: "2026-01-02T00:00:00.000Z",
        expiresAt: "2099-01-01T00:00:00.000Z",
        maskSecrets: true,
        ...(revokedAt ? { revokedAt } : {}),
      });
      for (const s of ["a", "b"]) {
        await stores.meta.commit({ head: head(u, s, 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      }
      await stores.meta.commit({ head: head(other, "a", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      await stores.meta.putShare(share("live", u, "a"));
      await stores.meta.putShare(share("pinned", u, "a"));
      await stores.meta.putShare(share("old", u, "a", "2026-01-03T00:00:00.000Z"));
      await stores.meta.putShare(share("kept", u, "b"));
      await stores.meta.putShare(share("theirs", other, "a"));
      await stores.meta.deleteSession(u, "a", "2026-01-05T00:00:00.000Z");
      const revokedAt = async (id: string) => (await stores.meta.getShare(id))?.revokedAt;
      expect(await revokedAt(`live-${u}`)).toBe("2026-01-05T00:00:00.000Z");
      expect(await revokedAt(`pinned-${u}`)).toBe("2026-01-05T00:00:00.000Z");
      expect(await revokedAt(`old-${u}`)).toBe("2026-01-03T00:00:00.000Z");
      expect(await revokedAt(`kept-${u}`)).toBeUndefined();
      expect(await revokedAt(`theirs-${other}`)).toBeUndefined();
      expect((await stores.meta.getShare(`live-${u}`))?.sessionCreatedAt).toBe("2026-01-01T00:00:00.000Z");
      expect((await stores.meta.listShares(u)).filter((s) => s.revokedAt)).toHaveLength(3);
      expect(await stores.meta.getHead(other, "a")).toBeDefined();
    });
  });
}
