/**
 * The credentials port's contract: tokens kept by hash, listed per user, renamed, touched and revoked for their owner only.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ContractContext } from "./contract.js";

/** The tokens port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeTokenContract({ stores, user }: ContractContext) {
  describe("tokens", () => {
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
  });
}
