/**
 * The sign-in port's contract: sign-in links and device codes, each consumed exactly once.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ContractContext } from "./contract.js";

/** The sign-in port's part of the storage contract, run by `describeStoreContract` on every store. */
export function describeSignInContract({ stores, user }: ContractContext) {
  describe("sign-in links and device codes", () => {
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
  });
}
