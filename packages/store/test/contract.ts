/**
 * The one suite every storage adapter must pass (run by embedded.test.ts and aws.test.ts).
 * It pins down the port's error contract: missing blobs are NotFoundError, stale commits are
 * RevisionConflictError carrying the stored head, and a failed commit writes nothing.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type CardFilter,
  type CardPageRequest,
  cardMatches,
  changedUsageDays,
  type GenerationState,
  type IndexPage,
  InvalidCursorError,
  listedCard,
  NotFoundError,
  RevisionConflictError,
  type SessionHead,
  type ShareRecord,
  StorageUnavailableError,
  type Stores,
  type ToolRow,
  type UsageRow,
} from "../src/index.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function generation(n: number, length = 0): GenerationState {
  return { generation: n, length, lines: 0, values: 0, segments: [], createdAt: "2026-01-01T00:00:00.000Z" };
}

export function head(userId: string, sessionId: string, revision: number, updatedAt: string): SessionHead {
  return {
    userId,
    sessionId,
    revision,
    current: generation(1, revision * 10),
    generations: 1,
    summary: { hasHeader: true, entries: revision, tokens: 0, cost: 0, leafId: null, problemCount: 0, problems: [] },
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt,
  };
}

function page(generationNumber: number, start: number, end: number): IndexPage {
  return {
    generation: generationNumber,
    start,
    end,
    records: [
      { line: 1, offset: start, length: end - start - 1, value: 1, isObject: true, parentId: null, id: `e${start}` },
    ],
    problems: [],
  };
}

/**
 * @param unreachable stores of the same adapter whose servers cannot be reached (when the
 *   adapter has servers): every call is `StorageUnavailableError`, never a vendor error
 */
export function describeStoreContract(
  name: string,
  makeStores: () => Promise<Stores>,
  unreachable?: () => Promise<Stores>,
) {
  describe(`storage contract: ${name}`, () => {
    if (unreachable) {
      it("a store that cannot be reached is StorageUnavailableError on every port, reads and writes", async () => {
        const down = await unreachable();
        const u = user();
        const calls: [string, () => Promise<unknown>][] = [
          ["blobs.put", () => down.blobs.put(`t/${u}/a`, bytes("x\n"))],
          ["blobs.get", () => down.blobs.get(`t/${u}/a`)],
          ["blobs.list", () => down.blobs.list(`t/${u}/`)],
          ["blobs.delete", () => down.blobs.delete([`t/${u}/a`])],
          ["meta.getHead", () => down.meta.getHead(u, "s")],
          [
            "meta.commit",
            () => down.meta.commit({ head: head(u, "s", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null }),
          ],
          ["meta.findToken", () => down.meta.findToken("0".repeat(64))],
        ];
        for (const [what, call] of calls) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, what).toBeInstanceOf(StorageUnavailableError);
        }
      }, 60_000);
    }

    let stores: Stores;
    // Every test uses fresh ids, so the suite needs no cleanup between tests.
    const user = () => `u-${randomUUID()}`;
    beforeAll(async () => {
      stores = await makeStores();
    });

    it("keeps the first server id it is given: later and concurrent candidates answer it", async () => {
      const ids = await Promise.all([randomUUID(), randomUUID(), randomUUID()].map((c) => stores.meta.serverId(c)));
      expect(new Set(ids).size).toBe(1);
      expect(await stores.meta.serverId(randomUUID())).toBe(ids[0]);
    });

    describe("blobs", () => {
      it("put then get returns the bytes; a range returns that slice", async () => {
        const key = `t/${randomUUID()}/a`;
        await stores.blobs.put(key, bytes("hello, world\n"));
        expect(text(await stores.blobs.get(key))).toBe("hello, world\n");
        expect(text(await stores.blobs.get(key, { start: 7, end: 12 }))).toBe("world");
        expect(text(await stores.blobs.get(key, { start: 3, end: 3 }))).toBe("");
      });

      it("a range past the object's end gives the bytes there are: the end's, or none", async () => {
        const key = `t/${randomUUID()}/a`;
        await stores.blobs.put(key, bytes("hello, world\n"));
        expect(text(await stores.blobs.get(key, { start: 7, end: 100 }))).toBe("world\n");
        expect(text(await stores.blobs.get(key, { start: 13, end: 20 }))).toBe("");
        expect(text(await stores.blobs.get(key, { start: 50, end: 60 }))).toBe("");
      });

      it("put replaces an object whole", async () => {
        const key = `t/${randomUUID()}/a`;
        await stores.blobs.put(key, bytes("first version, longer"));
        await stores.blobs.put(key, bytes("second"));
        expect(text(await stores.blobs.get(key))).toBe("second");
      });

      it("a missing object is NotFoundError, whole or ranged", async () => {
        const key = `t/${randomUUID()}/missing`;
        await expect(stores.blobs.get(key)).rejects.toBeInstanceOf(NotFoundError);
        await expect(stores.blobs.get(key, { start: 0, end: 4 })).rejects.toBeInstanceOf(NotFoundError);
      });

      it("lists keys under a prefix in order, and deletes (missing keys ignored)", async () => {
        const prefix = `t/${randomUUID()}/`;
        for (const k of ["b/2", "a/1", "b/1"]) await stores.blobs.put(`${prefix}${k}`, bytes(k));
        await stores.blobs.put(`t/${randomUUID()}/other`, bytes("x"));
        expect(await stores.blobs.list(prefix)).toEqual([`${prefix}a/1`, `${prefix}b/1`, `${prefix}b/2`]);
        await stores.blobs.delete([`${prefix}a/1`, `${prefix}nope`]);
        expect(await stores.blobs.list(prefix)).toEqual([`${prefix}b/1`, `${prefix}b/2`]);
      });

      it("lists objects under a prefix in key order, with their sizes and when they were written", async () => {
        const prefix = `t/${randomUUID()}/`;
        // S3 keeps LastModified to the second: the window is widened by that much each side.
        const before = Date.now() - 1000;
        await stores.blobs.put(`${prefix}b`, bytes("twelve bytes"));
        await stores.blobs.put(`${prefix}a/1`, bytes("four"));
        await stores.blobs.put(`t/${randomUUID()}/other`, bytes("x"));
        const after = Date.now() + 1000;
        const listed = await stores.blobs.listObjects(prefix);
        expect(listed.map(({ key, size }) => ({ key, size }))).toEqual([
          { key: `${prefix}a/1`, size: 4 },
          { key: `${prefix}b`, size: 12 },
        ]);
        for (const { modifiedAt } of listed) {
          expect(modifiedAt).toBeInstanceOf(Date);
          expect(modifiedAt.getTime()).toBeGreaterThanOrEqual(before);
          expect(modifiedAt.getTime()).toBeLessThanOrEqual(after);
        }
        await stores.blobs.delete([`${prefix}b`]);
        expect((await stores.blobs.listObjects(prefix)).map((o) => o.key)).toEqual([`${prefix}a/1`]);
      });

      it("binary bytes survive as they are (broken UTF-8, NUL, CRLF)", async () => {
        const key = `t/${randomUUID()}/bin`;
        const data = new Uint8Array([0x7b, 0xe2, 0x80, 0x00, 0x0d, 0x0a, 0xff, 0x0a]);
        await stores.blobs.put(key, data);
        expect([...(await stores.blobs.get(key))]).toEqual([...data]);
      });
    });

    describe("metadata", () => {
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

      it("keeps tokens by hash, lists them per user, revokes by id for their owner only", async () => {
        const [a, b] = [user(), user()];
        const token = {
          hash: randomUUID(),
          userId: a,
          id: "t1",
          name: "laptop",
          createdAt: "2026-01-01T00:00:00.000Z",
        };
        await stores.meta.putToken(token);
        expect(await stores.meta.findToken(token.hash)).toEqual(token);
        expect(await stores.meta.findToken("nope")).toBeUndefined();
        expect(await stores.meta.listTokens(a)).toEqual([token]);
        expect(await stores.meta.deleteToken(b, "t1")).toBe(false);
        expect(await stores.meta.deleteToken(a, "t1")).toBe(true);
        expect(await stores.meta.findToken(token.hash)).toBeUndefined();
      });

      it("records a token's last use, and a touch never brings a deleted token back", async () => {
        const u = user();
        const token = {
          hash: randomUUID(),
          userId: u,
          id: "t1",
          name: "laptop",
          createdAt: "2026-01-01T00:00:00.000Z",
        };
        await stores.meta.putToken(token);
        await stores.meta.touchToken(token.hash, "2026-01-02T00:00:00.000Z");
        expect(await stores.meta.findToken(token.hash)).toEqual({ ...token, lastUsedAt: "2026-01-02T00:00:00.000Z" });
        expect((await stores.meta.listTokens(u))[0]?.lastUsedAt).toBe("2026-01-02T00:00:00.000Z");
        await stores.meta.deleteToken(u, "t1");
        await stores.meta.touchToken(token.hash, "2026-01-03T00:00:00.000Z");
        expect(await stores.meta.findToken(token.hash)).toBeUndefined();
        expect(await stores.meta.listTokens(u)).toEqual([]);
      });

      it("a sign-in link is consumed once: of many concurrent redemptions exactly one gets it", async () => {
        const link = {
          hash: randomUUID(),
          userId: user(),
          next: "/sessions/a",
          createdAt: "2026-01-01T00:00:00.000Z",
          expiresAt: "2026-01-01T00:01:00.000Z",
        };
        await stores.meta.putLoginLink(link);
        const results = await Promise.all(Array.from({ length: 8 }, () => stores.meta.consumeLoginLink(link.hash)));
        expect(results.filter(Boolean)).toEqual([link]);
        expect(await stores.meta.consumeLoginLink(link.hash)).toBeUndefined();
        expect(await stores.meta.consumeLoginLink(randomUUID())).toBeUndefined();
      });

      it("renames a token for its owner only, keeping its last use", async () => {
        const [a, b] = [user(), user()];
        const token = { hash: randomUUID(), userId: a, id: "r1", name: "old", createdAt: "2026-01-01T00:00:00.000Z" };
        await stores.meta.putToken(token);
        await stores.meta.touchToken(token.hash, "2026-01-02T00:00:00.000Z");
        expect(await stores.meta.renameToken(b, "r1", "stolen")).toBe(false);
        expect(await stores.meta.renameToken(a, "nope", "x")).toBe(false);
        expect(await stores.meta.renameToken(a, "r1", "laptop")).toBe(true);
        expect(await stores.meta.findToken(token.hash)).toEqual({
          ...token,
          name: "laptop",
          lastUsedAt: "2026-01-02T00:00:00.000Z",
        });
      });

      it("keeps a device code by its user code: one live code per user code, swapped and consumed atomically", async () => {
        const userCode = randomUUID().replaceAll("-", "").slice(0, 8).toUpperCase();
        const code = {
          userCode,
          deviceHash: randomUUID(),
          name: "laptop",
          createdAt: "2026-01-01T00:00:00.000Z",
          expiresAt: "2026-01-01T00:15:00.000Z",
          interval: 5,
          status: "pending" as const,
        };
        expect(await stores.meta.putDeviceCode(code)).toBe(true);
        // A live code keeps its user code; an expired one gives it away.
        expect(await stores.meta.putDeviceCode({ ...code, deviceHash: "other" })).toBe(false);
        expect(await stores.meta.getDeviceCode(userCode)).toEqual(code);
        expect(await stores.meta.getDeviceCode("ZZZZZZZZ")).toBeUndefined();
        const polled = { ...code, lastPolledAt: "2026-01-01T00:00:05.000Z" };
        expect(await stores.meta.updateDeviceCode(polled, "approved")).toBe(false);
        expect(await stores.meta.updateDeviceCode(polled, "pending")).toBe(true);
        const approved = { ...polled, status: "approved" as const, userId: user() };
        expect(await stores.meta.updateDeviceCode(approved, "pending")).toBe(true);
        // A poll that read it pending before the approval does not undo it.
        expect(await stores.meta.updateDeviceCode({ ...polled, interval: 10 }, "pending")).toBe(false);
        expect(await stores.meta.consumeDeviceCode(userCode, "pending")).toBeUndefined();
        const results = await Promise.all(
          Array.from({ length: 8 }, () => stores.meta.consumeDeviceCode(userCode, "approved")),
        );
        expect(results.filter(Boolean)).toEqual([approved]);
        expect(await stores.meta.getDeviceCode(userCode)).toBeUndefined();
        expect(await stores.meta.updateDeviceCode(approved, "approved")).toBe(false);
        const later = { ...code, createdAt: "2026-01-01T00:20:00.000Z", expiresAt: "2026-01-01T00:35:00.000Z" };
        expect(await stores.meta.putDeviceCode(later)).toBe(true);
        const again = {
          ...later,
          deviceHash: "again",
          createdAt: "2026-01-01T00:40:00.000Z",
          expiresAt: "2026-01-01T00:55:00.000Z",
        };
        expect(await stores.meta.putDeviceCode(again)).toBe(true);
        expect(await stores.meta.getDeviceCode(userCode)).toEqual(again);
      });

      it("keeps browser sessions by hash, lists them per user, touches and revokes them for their owner only", async () => {
        const [a, b] = [user(), user()];
        const session = (id: string, userId: string, createdAt: string) => ({
          hash: randomUUID(),
          userId,
          id,
          createdAt,
          lastUsedAt: createdAt,
          userAgent: "Chrome on Linux",
        });
        const first = session("s1", a, "2026-01-01T00:00:00.000Z");
        const second = session("s2", a, "2026-01-02T00:00:00.000Z");
        const theirs = session("s1", b, "2026-01-01T00:00:00.000Z");
        for (const s of [second, first, theirs]) await stores.meta.putBrowserSession(s);
        expect(await stores.meta.findBrowserSession(first.hash)).toEqual(first);
        expect(await stores.meta.findBrowserSession(randomUUID())).toBeUndefined();
        expect(await stores.meta.listBrowserSessions(a)).toEqual([first, second]);
        await stores.meta.touchBrowserSession(first.hash, "2026-01-05T00:00:00.000Z");
        expect((await stores.meta.findBrowserSession(first.hash))?.lastUsedAt).toBe("2026-01-05T00:00:00.000Z");
        expect((await stores.meta.listBrowserSessions(a))[0]?.lastUsedAt).toBe("2026-01-05T00:00:00.000Z");
        expect(await stores.meta.deleteBrowserSession(b, "s2")).toBe(false);
        expect(await stores.meta.deleteBrowserSession(a, "s2")).toBe(true);
        expect(await stores.meta.deleteBrowserSession(a, "s2")).toBe(false);
        await stores.meta.touchBrowserSession(second.hash, "2026-01-06T00:00:00.000Z");
        expect(await stores.meta.findBrowserSession(second.hash)).toBeUndefined();
        await stores.meta.putBrowserSession(session("s3", a, "2026-01-03T00:00:00.000Z"));
        expect(await stores.meta.deleteBrowserSessions(a)).toBe(2);
        expect(await stores.meta.listBrowserSessions(a)).toEqual([]);
        expect(await stores.meta.findBrowserSession(first.hash)).toBeUndefined();
        expect(await stores.meta.listBrowserSessions(b)).toEqual([theirs]);
      });

      it("pages a user's tokens (by id) and browser sessions (oldest first), nobody else's; refuses another's cursor", async () => {
        const [a, b] = [user(), user()];
        const ids = Array.from({ length: 7 }, (_, i) => `t${i}`);
        for (const id of [...ids].reverse()) {
          await stores.meta.putToken({
            hash: randomUUID(),
            userId: a,
            id,
            name: id,
            createdAt: "2026-01-01T00:00:00.000Z",
          });
        }
        await stores.meta.putToken({
          hash: randomUUID(),
          userId: b,
          id: "t3x",
          name: "b",
          createdAt: "2026-01-01T00:00:00.000Z",
        });
        for (let i = 0; i < 5; i++) {
          const createdAt = `2026-01-0${1 + (i % 2)}T00:00:00.000Z`;
          for (const owner of [a, b]) {
            await stores.meta.putBrowserSession({
              hash: randomUUID(),
              userId: owner,
              id: `b${i}`,
              createdAt,
              lastUsedAt: createdAt,
              userAgent: "Firefox on Linux",
            });
          }
        }
        const tokenPages: string[][] = [];
        let cursor: string | undefined;
        do {
          const page = await stores.meta.listTokenPage(a, { limit: 3, cursor });
          tokenPages.push(page.tokens.map((t) => t.id));
          cursor = page.cursor;
        } while (cursor && tokenPages.length < 10);
        expect(tokenPages).toEqual([["t0", "t1", "t2"], ["t3", "t4", "t5"], ["t6"]]);
        const browserPages: string[][] = [];
        do {
          const page = await stores.meta.listBrowserSessionPage(a, { limit: 2, cursor });
          browserPages.push(page.sessions.map((s) => `${s.userId === a ? "" : "!"}${s.id}`));
          cursor = page.cursor;
        } while (cursor && browserPages.length < 10);
        expect(browserPages).toEqual([["b0", "b2"], ["b4", "b1"], ["b3"]]);
        const theirs = await stores.meta.listTokenPage(b, { limit: 1 });
        expect(theirs.tokens.map((t) => t.id)).toEqual(["t3x"]);
        const theirBrowsers = await stores.meta.listBrowserSessionPage(b, { limit: 1 });
        for (const bad of [theirBrowsers.cursor, "not a cursor"]) {
          await expect(stores.meta.listTokenPage(a, { limit: 3, cursor: bad })).rejects.toBeInstanceOf(
            InvalidCursorError,
          );
          await expect(stores.meta.listBrowserSessionPage(a, { limit: 3, cursor: bad })).rejects.toBeInstanceOf(
            InvalidCursorError,
          );
        }
      });

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

      it("lists every session of a user as a card kept by each commit, and nobody else's", async () => {
        const [u, other] = [user(), user()];
        const withFacts = (h: SessionHead): SessionHead => ({
          ...h,
          summary: {
            ...h.summary,
            cwd: "/w/app",
            name: "fix <b>",
            models: ["anthropic/claude"],
            lastEntryAt: "2025-03-01T00:00:00.000Z",
          },
        });
        await stores.meta.commit({
          head: withFacts(head(u, "a", 1, "2026-01-01T00:00:00.000Z")),
          expectedRevision: null,
        });
        await stores.meta.commit({ head: head(u, "b", 1, "2026-01-02T00:00:00.000Z"), expectedRevision: null });
        await stores.meta.commit({ head: head(other, "c", 1, "2026-01-03T00:00:00.000Z"), expectedRevision: null });
        const cards = (await stores.meta.listCards(u)).sort((x, y) => x.sessionId.localeCompare(y.sessionId));
        expect(cards.map((c) => c.sessionId)).toEqual(["a", "b"]);
        expect(cards[0]).toMatchObject({
          cwd: "/w/app",
          name: "fix <b>",
          models: ["anthropic/claude"],
          lastAt: "2025-03-01T00:00:00.000Z",
          updatedAt: "2026-01-01T00:00:00.000Z",
          entries: 1,
          bytes: 10,
        });
        // Without an entry time, the last backup stands in for it.
        expect(cards[1]).toMatchObject({ models: [], lastAt: "2026-01-02T00:00:00.000Z" });
        await stores.meta.commit({ head: head(u, "a", 2, "2026-01-04T00:00:00.000Z"), expectedRevision: 1 });
        const moved = (await stores.meta.listCards(u)).find((c) => c.sessionId === "a");
        expect(moved).toMatchObject({ entries: 2, bytes: 20, lastAt: "2026-01-04T00:00:00.000Z", models: [] });
        await stores.meta.deleteSession(u, "b", "2026-01-05T00:00:00.000Z");
        expect((await stores.meta.listCards(u)).map((c) => c.sessionId)).toEqual(["a"]);
        expect(await stores.meta.listCards(user())).toEqual([]);
      });

      describe("the library's list, a page at a time", () => {
        /** A head whose card has these facts. */
        const card = (u: string, id: string, lastAt: string, cwd: string, models: string[]): SessionHead => {
          const h = head(u, id, 1, "2026-06-01T00:00:00.000Z");
          return { ...h, summary: { ...h.summary, cwd, models, lastEntryAt: lastAt } };
        };
        /** Every page of a listing, followed to its end. */
        async function pages(u: string, request: Omit<CardPageRequest, "cursor">) {
          const all: string[][] = [];
          let cursor: string | undefined;
          do {
            const page = await stores.meta.listCardPage(u, { ...request, cursor });
            all.push(page.cards.map((c) => c.sessionId));
            cursor = page.cursor;
          } while (cursor && all.length < 100);
          return all;
        }

        it("lists cards latest conversation first (ties by id), a cursor resuming after the page, and nobody else's", async () => {
          const [u, other] = [user(), user()];
          const facts: [string, string][] = [
            ["a", "2025-01-03T00:00:00.000Z"],
            ["b", "2025-01-01T00:00:00.000Z"],
            ["c", "2025-01-03T00:00:00.000Z"],
            ["d", "2025-01-02T00:00:00.000Z"],
            ["e", "2025-01-05T00:00:00.000Z"],
          ];
          for (const [id, at] of facts) {
            await stores.meta.commit({ head: card(u, id, at, "/w", ["p/m"]), expectedRevision: null });
          }
          await stores.meta.commit({
            head: card(other, "z", "2025-01-04T00:00:00.000Z", "/w", ["p/m"]),
            expectedRevision: null,
          });
          expect(await pages(u, { limit: 2 })).toEqual([["e", "c"], ["a", "d"], ["b"]]);
          const first = await stores.meta.listCardPage(u, { limit: 5 });
          expect(first.cursor).toBeUndefined();
          expect(first.cards[0]).toMatchObject({ sessionId: "e", cwd: "/w", models: ["p/m"], entries: 1 });
          // A commit moves a card in the list; a delete takes it out.
          const moved = { ...card(u, "b", "2025-01-09T00:00:00.000Z", "/w", ["p/m"]), revision: 2 };
          await stores.meta.commit({ head: moved, expectedRevision: 1 });
          await stores.meta.deleteSession(u, "c", "2025-02-01T00:00:00.000Z");
          expect(await pages(u, { limit: 10 })).toEqual([["b", "e", "a", "d"]]);
          expect((await stores.meta.listCardPage(user(), { limit: 10 })).cards).toEqual([]);
        });

        it("filters by folder (and the folders inside it), model (full or short name) and days, on every page", async () => {
          const u = user();
          for (let i = 0; i < 30; i++) {
            const at = `2025-03-${String(1 + (i % 28)).padStart(2, "0")}T12:00:00.000Z`;
            const cwd = i % 3 === 0 ? "/w/app" : i % 3 === 1 ? "/w/app/sub" : "/w/apple";
            await stores.meta.commit({
              head: card(
                u,
                `s${String(i).padStart(2, "0")}`,
                at,
                cwd,
                i % 4 === 1 ? ["openrouter/anthropic/claude"] : i % 2 ? ["anthropic/claude"] : ["openai/gpt"],
              ),
              expectedRevision: null,
            });
          }
          const all = (await stores.meta.listCards(u)).map((c) => listedCard(c));
          const expected = (filter: CardFilter) =>
            all
              .filter((c) => cardMatches(c, filter))
              .sort((x, y) =>
                x.lastAt === y.lastAt ? (x.sessionId < y.sessionId ? 1 : -1) : x.lastAt < y.lastAt ? 1 : -1,
              )
              .map((c) => c.sessionId);
          const filters: CardFilter[] = [
            { cwd: "/w/app" },
            { model: "claude" },
            { model: "anthropic/claude" },
            { model: "openrouter/anthropic/claude" },
            { model: "router/anthropic/claude" },
            { model: "openai/gpt", cwd: "/w/apple" },
            { from: "2025-03-05", to: "2025-03-10" },
            { from: "2025-03-20" },
            { to: "2025-03-02", model: "gpt" },
            { cwd: "/nowhere" },
          ];
          for (const filter of filters) {
            const found = (await pages(u, { limit: 3, filter })).flat();
            expect(found, JSON.stringify(filter)).toEqual(expected(filter));
          }
          // Not everything: the folder filter leaves out the folder that only starts the same.
          expect(expected({ cwd: "/w/app" })).toHaveLength(20);
        });

        it("a filtered page follows a session that moves, changes folder or models, or is deleted; deep and odd folders too", async () => {
          const [u, other] = [user(), user()];
          const deep = "/a/b/c/d/e/f/g/h/i";
          const odd = `/w/odd#dir ${"x".repeat(3000)}/"q"`;
          const commits: [string, string, string, string[]][] = [
            ["s1", "2025-01-01T00:00:00.000Z", "/w/one", ["p/m"]],
            ["s2", "2025-01-02T00:00:00.000Z", "/w/two", ["p/n"]],
            ["s3", "2025-01-03T00:00:00.000Z", `${deep}/j`, ["x/y/z/w"]],
            ["s4", "2025-01-04T00:00:00.000Z", odd, ["p/m"]],
            ["s5", "2025-01-05T00:00:00.000Z", `${deep}x`, ["p/m"]],
          ];
          for (const [id, at, cwd, models] of commits) {
            await stores.meta.commit({ head: card(u, id, at, cwd, models), expectedRevision: null });
          }
          await stores.meta.commit({
            head: card(other, "s9", "2025-01-09T00:00:00.000Z", "/w/one", ["p/m"]),
            expectedRevision: null,
          });
          const ids = async (filter: CardFilter) => (await pages(u, { limit: 2, filter })).flat();
          expect(await ids({ cwd: "/w" })).toEqual(["s4", "s2", "s1"]);
          expect(await ids({ cwd: odd })).toEqual(["s4"]);
          expect(await ids({ cwd: "/w/odd#dir" })).toEqual([]);
          expect(await ids({ cwd: deep })).toEqual(["s3"]);
          expect(await ids({ cwd: `${deep}/j` })).toEqual(["s3"]);
          expect(await ids({ cwd: "/a/b" })).toEqual(["s5", "s3"]);
          expect(await ids({ cwd: "/" })).toEqual(["s5", "s4", "s3", "s2", "s1"]);
          expect(await ids({ model: "m" })).toEqual(["s5", "s4", "s1"]);
          expect(await ids({ model: "z/w" })).toEqual(["s3"]);
          expect(await ids({ model: "y/z/w" })).toEqual(["s3"]);
          // s1 moves to the top and to another folder and model; s2 is deleted.
          await stores.meta.commit({
            head: { ...card(u, "s1", "2025-02-01T00:00:00.000Z", "/v", ["q/r"]), revision: 2 },
            expectedRevision: 1,
          });
          await stores.meta.deleteSession(u, "s2", "2025-02-02T00:00:00.000Z");
          expect(await ids({ cwd: "/w" })).toEqual(["s4"]);
          expect(await ids({ model: "m" })).toEqual(["s5", "s4"]);
          expect(await ids({ model: "r" })).toEqual(["s1"]);
          expect(await ids({ cwd: "/" })).toEqual(["s1", "s5", "s4", "s3"]);
          // s4 moves within its folder: listed once, at its new place.
          await stores.meta.commit({
            head: { ...card(u, "s4", "2025-03-01T00:00:00.000Z", odd, ["p/m"]), revision: 2 },
            expectedRevision: 1,
          });
          expect(await ids({ model: "p/m" })).toEqual(["s4", "s5"]);
          expect(await ids({ cwd: "/w", from: "2025-02-01" })).toEqual(["s4"]);
          expect(await ids({ cwd: "/w", to: "2025-02-01" })).toEqual([]);
          // Nobody else's.
          expect((await pages(other, { limit: 5, filter: { cwd: "/w" } })).flat()).toEqual(["s9"]);
        });

        it("refuses a cursor another user's list gave, or one no list gave", async () => {
          const [u, other] = [user(), user()];
          for (const [owner, id] of [
            [u, "mine"],
            [other, "theirs-1"],
            [other, "theirs-2"],
          ]) {
            await stores.meta.commit({
              head: card(owner, id, "2025-01-01T00:00:00.000Z", "/w", []),
              expectedRevision: null,
            });
          }
          const theirs = await stores.meta.listCardPage(other, { limit: 1 });
          expect(theirs.cursor).toBeDefined();
          for (const cursor of [theirs.cursor, "not a cursor", Buffer.from("[1,2]").toString("base64url")]) {
            await expect(stores.meta.listCardPage(u, { limit: 10, cursor })).rejects.toBeInstanceOf(InvalidCursorError);
          }
          const shared = await stores.meta.listSharePage(other, { limit: 1 });
          expect(shared.cursor).toBeUndefined();
        });

        it("gives the cards of named sessions, only the user's own", async () => {
          const [u, other] = [user(), user()];
          await stores.meta.commit({
            head: card(u, "a", "2025-01-01T00:00:00.000Z", "/w", []),
            expectedRevision: null,
          });
          await stores.meta.commit({
            head: card(other, "b", "2025-01-01T00:00:00.000Z", "/w", []),
            expectedRevision: null,
          });
          const cards = await stores.meta.getCards(u, ["a", "b", "a", "missing"]);
          expect(cards.map((c) => c.sessionId)).toEqual(["a"]);
          expect(cards[0].usage).toBeUndefined();
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

    describe("insights' usage by day", () => {
      /** A head of `revision` whose rollup has these rows (and tools), in folder `cwd`. */
      const withUsage = (
        u: string,
        id: string,
        revision: number,
        rows: UsageRow[],
        tools: ToolRow[] = [],
        cwd = "/w/app",
      ): SessionHead => {
        const h = head(u, id, revision, `2026-01-0${revision}T00:00:00.000Z`);
        return { ...h, summary: { ...h.summary, cwd, usage: { rows, tools } } };
      };
      const row = (day: string, model: string, cost: number): UsageRow => [
        day,
        model,
        "dev1",
        10,
        5,
        0,
        0,
        cost,
        100,
        1,
      ];
      /** Commits `next` over `before`, with the days it changes, as core's appends do. */
      const commitOver = (before: SessionHead | undefined, next: SessionHead) =>
        stores.meta.commit({
          head: next,
          expectedRevision: before?.revision ?? null,
          usageDays: changedUsageDays(before, next),
        });
      type Usages = Record<string, { cwd?: string; rows: UsageRow[]; tools: ToolRow[] }>;
      /** What a report of the range must read: every head's rollup rows in it, by session. */
      const expected = async (u: string, from: string, to: string) => {
        const sessions: Usages = {};
        for (const card of await stores.meta.listCards(u)) {
          const rows = card.usage?.rows.filter((r) => r[0] >= from && r[0] <= to) ?? [];
          const tools = card.usage?.tools.filter((r) => r[0] >= from && r[0] <= to) ?? [];
          if (rows.length || tools.length) sessions[card.sessionId] = { cwd: card.cwd, rows, tools };
        }
        return sessions;
      };
      /** Each session's rows and tools by day, then bucket or tool (stores give them in any order). */
      const sorted = (sessions: Usages) => {
        const byDay = (a: unknown[], b: unknown[]) =>
          String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]));
        for (const s of Object.values(sessions)) {
          s.rows.sort(byDay);
          s.tools.sort(byDay);
        }
        return sessions;
      };
      const read = async (u: string, from: string, to: string) => {
        const usage = await stores.meta.listUsage(u, { from, to });
        const sessions: Usages = {};
        for (const s of usage.sessions) sessions[s.sessionId] = { cwd: s.cwd, rows: s.rows, tools: s.tools };
        return { sessions: sorted(sessions), uncounted: usage.uncounted };
      };

      it("a report reads the days of its range: every session's usage in it, as commits left it, and nobody else's", async () => {
        const [u, other] = [user(), user()];
        const a1 = withUsage(
          u,
          "a",
          1,
          [row("2025-01-01", "m/x", 1), row("2025-01-03", "m/x", 2)],
          [["2025-01-03", "read", 2, 40]],
        );
        await commitOver(undefined, a1);
        const b1 = withUsage(u, "b", 1, [row("2025-01-03", "m/y", 4)], [], "/w/other");
        await commitOver(undefined, b1);
        // A head from before rollups were kept: counted apart, never summed.
        const legacy = head(u, "c", 1, "2026-01-01T00:00:00.000Z");
        await commitOver(undefined, legacy);
        await commitOver(undefined, withUsage(other, "a", 1, [row("2025-01-03", "m/z", 8)]));

        expect(await read(u, "2025-01-02", "2025-01-31")).toEqual({
          sessions: {
            a: { cwd: "/w/app", rows: [row("2025-01-03", "m/x", 2)], tools: [["2025-01-03", "read", 2, 40]] },
            b: { cwd: "/w/other", rows: [row("2025-01-03", "m/y", 4)], tools: [] },
          },
          uncounted: 1,
        });
        expect((await read(u, "2025-02-01", "2025-02-28")).sessions).toEqual({});

        // The next commit moves a day and adds one; a new generation leaves days behind.
        const a2 = withUsage(u, "a", 2, [
          row("2025-01-01", "m/x", 1),
          row("2025-01-03", "m/x", 3),
          row("2025-02-01", "m/w", 1),
        ]);
        await commitOver(a1, a2);
        expect((await read(u, "2025-01-01", "2025-12-31")).sessions).toEqual(
          sorted(await expected(u, "2025-01-01", "2025-12-31")),
        );
        const a3 = withUsage(u, "a", 3, [row("2025-02-01", "m/w", 5)]);
        await commitOver(a2, a3);
        expect((await read(u, "2025-01-01", "2025-12-31")).sessions.a).toEqual({
          cwd: "/w/app",
          rows: [row("2025-02-01", "m/w", 5)],
          tools: [],
        });

        // A deleted session leaves every day; another user's days were never read.
        await stores.meta.deleteSession(u, "b", "2026-01-05T00:00:00.000Z");
        await stores.meta.deleteSession(u, "c", "2026-01-05T00:00:00.000Z");
        expect(await read(u, "2025-01-01", "2025-12-31")).toEqual({
          sessions: { a: { cwd: "/w/app", rows: [row("2025-02-01", "m/w", 5)], tools: [] } },
          uncounted: 0,
        });
        expect((await read(other, "2025-01-01", "2025-12-31")).sessions).toEqual({
          a: { cwd: "/w/app", rows: [row("2025-01-03", "m/z", 8)], tools: [] },
        });
        expect(await read(user(), "2025-01-01", "2025-12-31")).toEqual({ sessions: {}, uncounted: 0 });
      });

      it("a report of more days than a store reads at once gets them all, the same answer while nothing moved and a new one after a commit", {
        timeout: 120_000,
      }, async () => {
        const u = user();
        const start = Date.parse("2024-01-01");
        const days = Array.from({ length: 900 }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
        const heads = ["a", "b", "c"].map((id, n) =>
          withUsage(
            u,
            id,
            1,
            days.map((day) => row(day, "m/x", n + 1)),
          ),
        );
        for (const h of heads) await commitOver(undefined, h);
        const range = { from: days[0], to: days[days.length - 1] };
        const first = await stores.meta.listUsage(u, range);
        expect(first.sessions.map((s) => [s.sessionId, s.rows.length]).sort()).toEqual([
          ["a", 900],
          ["b", 900],
          ["c", 900],
        ]);
        // Asked again with nothing moved: the same answer (a store may settle its first read first).
        const second = await stores.meta.listUsage(u, range);
        expect(second).toEqual(first);
        expect(await stores.meta.listUsage(u, range)).toBe(second);
        const moved = withUsage(u, "a", 2, [row(days[0], "m/x", 9)]);
        await commitOver(heads[0], moved);
        const after = await stores.meta.listUsage(u, range);
        expect(after).not.toBe(second);
        expect(after.sessions.find((s) => s.sessionId === "a")?.rows).toEqual([row(days[0], "m/x", 9)]);
      });

      it("sessions of one user committing the same days at once all land, each as its last commit left it", async () => {
        const u = user();
        const days = ["2025-03-01", "2025-03-02", "2025-03-03"];
        await Promise.all(
          Array.from({ length: 6 }, async (_, n) => {
            let before: SessionHead | undefined;
            for (let revision = 1; revision <= 4; revision++) {
              const rows = days.slice(0, 1 + (revision % 3)).map((day, i) => row(day, `m/${n % 2}`, revision + i));
              const next = withUsage(u, `s${n}`, revision, rows, [[days[0], "bash", revision, 10]]);
              await commitOver(before, next);
              before = next;
            }
          }),
        );
        const want = sorted(await expected(u, "2025-01-01", "2025-12-31"));
        expect(Object.keys(want)).toHaveLength(6);
        expect((await read(u, "2025-01-01", "2025-12-31")).sessions).toEqual(want);
      });
    });
  });
}
