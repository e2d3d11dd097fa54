/**
 * The browser sessions port's contract: kept by hash, listed and paged per user, touched and revoked for their owner only.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidCursorError } from "../src/index.js";
import type { ContractContext } from "./contract.js";

/** The browser sessions port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeBrowserSessionContract({ stores, user }: ContractContext) {
  describe("browser sessions", () => {
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
  });
}
