/**
 * The sessions port's contract: heads committed conditionally on their revision, pages and archives, lists of heads, deletes, the server id.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RevisionConflictError } from "../src/index.js";
import { type ContractContext, generation, head, page } from "./contract.js";

/** The sessions port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeSessionContract({ stores, user }: ContractContext) {
  describe("sessions and commits", () => {
    it("keeps the first server id it is given: later and concurrent candidates answer it", async () => {
      const ids = await Promise.all([randomUUID(), randomUUID(), randomUUID()].map((c) => stores.meta.serverId(c)));
      expect(new Set(ids).size).toBe(1);
      expect(await stores.meta.serverId(randomUUID())).toBe(ids[0]);
    });

    it("lists every user that has a session, and none that has only tokens or shares", async () => {
      const [a, b, tokenOnly] = [user(), user(), user()];
      await stores.meta.commit({ head: head(a, "s1", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      await stores.meta.commit({ head: head(a, "s2", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      await stores.meta.commit({ head: head(b, "s1", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      await stores.meta.putToken({ hash: randomUUID(), userId: tokenOnly, id: "t1", name: "n", createdAt: "2026" });
      const users = await stores.meta.users();
      expect(users.filter((u) => [a, b, tokenOnly].includes(u)).sort()).toEqual([a, b].sort());
      expect(new Set(users).size).toBe(users.length);
    });

    it("a missing head is undefined", async () => {
      expect(await stores.meta.getHead(user(), "nope")).toBeUndefined();
    });

    it("creates a head only when none exists; a second create conflicts with the stored head", async () => {
      const u = user();
      const first = head(u, "s1", 1, "2026-01-01T00:00:01.000Z");
      await stores.meta.commit({ head: first, expectedRevision: null, pages: [page(1, 0, 10)] });
      expect(await stores.meta.getHead(u, "s1")).toEqual(first);
      const error = await stores.meta
        .commit({
          head: head(u, "s1", 1, "2026-01-01T00:00:02.000Z"),
          expectedRevision: null,
          pages: [page(1, 10, 20)],
        })
        .catch((e) => e);
      expect(error).toBeInstanceOf(RevisionConflictError);
      expect((error as RevisionConflictError).current).toEqual(first);
      // The failed commit wrote nothing: no page at 10.
      expect((await stores.meta.getPages(u, "s1", 1)).map((p) => p.start)).toEqual([0]);
    });

    it("updates conditionally on the revision; a stale revision conflicts and writes nothing", async () => {
      const u = user();
      await stores.meta.commit({ head: head(u, "s", 1, "2026-01-01T00:00:01.000Z"), expectedRevision: null });
      const second = head(u, "s", 2, "2026-01-01T00:00:02.000Z");
      await stores.meta.commit({ head: second, expectedRevision: 1, pages: [page(1, 0, 10)] });
      const stale = await stores.meta
        .commit({ head: head(u, "s", 2, "2026-01-01T00:00:03.000Z"), expectedRevision: 1, pages: [page(1, 10, 20)] })
        .catch((e) => e);
      expect(stale).toBeInstanceOf(RevisionConflictError);
      expect((stale as RevisionConflictError).current?.revision).toBe(2);
      expect(await stores.meta.getHead(u, "s")).toEqual(second);
      expect((await stores.meta.getPages(u, "s", 1)).map((p) => p.start)).toEqual([0]);
    });

    it("of eight concurrent commits at one revision, exactly one wins", async () => {
      const u = user();
      await stores.meta.commit({ head: head(u, "s", 1, "2026-01-01T00:00:01.000Z"), expectedRevision: null });
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          stores.meta.commit({
            head: { ...head(u, "s", 2, `2026-01-01T00:00:0${i + 2}.000Z`) },
            expectedRevision: 1,
            pages: [page(1, 100 + i, 200)],
          }),
        ),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(r.reason).toBeInstanceOf(RevisionConflictError);
      }
      expect(await stores.meta.getPages(u, "s", 1)).toHaveLength(1);
    });

    it("a commit replaces a page left at the same start by a head written back", async () => {
      const u = user();
      await stores.meta.commit({ head: head(u, "s", 1, "2026-01-01T00:00:01.000Z"), expectedRevision: null });
      const stale = { ...page(1, 10, 20), previews: { 1: "stale" } };
      await stores.meta.commit({
        head: head(u, "s", 2, "2026-01-01T00:00:02.000Z"),
        expectedRevision: 1,
        pages: [stale],
      });
      // The head goes back to what it was before that commit (its record lost), the page stays.
      await stores.meta.commit({ head: head(u, "s", 3, "2026-01-01T00:00:03.000Z"), expectedRevision: 2 });
      const again = { ...page(1, 10, 20), previews: { 1: "again" } };
      await stores.meta.commit({
        head: head(u, "s", 4, "2026-01-01T00:00:04.000Z"),
        expectedRevision: 3,
        pages: [again],
      });
      expect(await stores.meta.getPages(u, "s", 1)).toEqual([again]);
      expect((await stores.meta.getHead(u, "s"))?.revision).toBe(4);
    });

    it("pages come back by generation, in byte order; archives are kept", async () => {
      const u = user();
      await stores.meta.commit({
        head: head(u, "s", 1, "2026-01-01T00:00:01.000Z"),
        expectedRevision: null,
        pages: [page(1, 300, 400), page(1, 0, 100), page(1, 100, 300)],
      });
      await stores.meta.commit({
        head: head(u, "s", 2, "2026-01-01T00:00:02.000Z"),
        expectedRevision: 1,
        pages: [page(2, 0, 50)],
        archive: generation(1, 400),
      });
      expect((await stores.meta.getPages(u, "s", 1)).map((p) => p.start)).toEqual([0, 100, 300]);
      expect((await stores.meta.getPages(u, "s", 1, 100)).map((p) => p.start)).toEqual([100, 300]);
      expect((await stores.meta.getPages(u, "s", 1, 101)).map((p) => p.start)).toEqual([300]);
      expect((await stores.meta.getPages(u, "s", 2)).map((p) => p.start)).toEqual([0]);
      expect(await stores.meta.getArchived(u, "s")).toEqual([generation(1, 400)]);
    });

    it("many pages come back whole and in order, from any start", async () => {
      const u = user();
      const pages = Array.from({ length: 30 }, (_, i) => page(1, i * 10, i * 10 + 10));
      await stores.meta.commit({ head: head(u, "s", 1, "2026-01-01T00:00:01.000Z"), expectedRevision: null, pages });
      expect((await stores.meta.getPages(u, "s", 1)).map((p) => p.start)).toEqual(pages.map((p) => p.start));
      expect((await stores.meta.getPages(u, "s", 1, 95)).map((p) => p.start)).toEqual(
        pages.filter((p) => p.start >= 95).map((p) => p.start),
      );
    });

    it("lists a user's sessions newest first, page by page, and nobody else's", async () => {
      const u = user();
      for (let i = 1; i <= 5; i++) {
        await stores.meta.commit({
          head: head(u, `s${i}`, 1, `2026-01-0${i}T00:00:00.000Z`),
          expectedRevision: null,
        });
      }
      await stores.meta.commit({
        head: head(user(), "other", 1, "2026-02-01T00:00:00.000Z"),
        expectedRevision: null,
      });
      const first = await stores.meta.listHeads(u, { limit: 2 });
      expect(first.heads.map((h) => h.sessionId)).toEqual(["s5", "s4"]);
      const second = await stores.meta.listHeads(u, { limit: 2, cursor: first.cursor });
      expect(second.heads.map((h) => h.sessionId)).toEqual(["s3", "s2"]);
      const third = await stores.meta.listHeads(u, { limit: 2, cursor: second.cursor });
      expect(third.heads.map((h) => h.sessionId)).toEqual(["s1"]);
      expect(third.cursor).toBeUndefined();
    });

    it("a cursor this listing did not give fails nothing and shows nobody else's sessions", async () => {
      const [u, other] = [user(), user()];
      for (const [owner, id, day] of [
        [u, "mine", "01"],
        [other, "theirs-1", "02"],
        [other, "theirs-2", "03"],
      ] as const) {
        await stores.meta.commit({
          head: head(owner, id, 1, `2026-01-${day}T00:00:00.000Z`),
          expectedRevision: null,
        });
      }
      const theirs = await stores.meta.listHeads(other, { limit: 1 });
      expect(theirs.cursor).toBeDefined();
      const forged = [
        theirs.cursor,
        "not base64 json",
        Buffer.from(JSON.stringify({ pk: { S: `U#${other}` } })).toString("base64url"),
        Buffer.from("[1,2]").toString("base64url"),
      ];
      for (const cursor of forged) {
        const listed = await stores.meta.listHeads(u, { limit: 10, cursor });
        for (const h of listed.heads) expect(h.userId).toBe(u);
      }
    });

    it("deletes a session's head, pages and archives, and nothing else", async () => {
      const u = user();
      for (const s of ["a", "b"]) {
        await stores.meta.commit({
          head: head(u, s, 1, "2026-01-01T00:00:00.000Z"),
          expectedRevision: null,
          pages: [page(1, 0, 10)],
          archive: generation(0),
        });
      }
      await stores.meta.deleteSession(u, "a", "2026-01-05T00:00:00.000Z");
      expect(await stores.meta.getHead(u, "a")).toBeUndefined();
      expect(await stores.meta.getPages(u, "a", 1)).toEqual([]);
      expect(await stores.meta.getArchived(u, "a")).toEqual([]);
      expect(await stores.meta.getHead(u, "b")).toBeDefined();
      expect(await stores.meta.getPages(u, "b", 1)).toHaveLength(1);
    });
  });
}
