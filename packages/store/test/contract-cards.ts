/**
 * The cards port's contract: every session's card kept by each commit, the library's list a page at a time, filtered, and named cards.
 */
import { describe, expect, it } from "vitest";
import {
  type CardFilter,
  type CardPageRequest,
  cardMatches,
  InvalidCursorError,
  listedCard,
  type SessionHead,
} from "../src/index.js";
import { type ContractContext, head } from "./contract.js";

/** The cards port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeCardContract({ stores, user }: ContractContext) {
  describe("cards", () => {
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
    });
  });
}
