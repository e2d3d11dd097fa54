import { describe, expect, it } from "vitest";
import type { FileState } from "../src/state.js";
import { describeSyncStatus, sessionSyncStatus } from "../src/sync-status.js";

const base: FileState = {
  sessionId: "s",
  generation: 1,
  sent: 100,
  fingerprint: "v2:100:x",
  local: 100,
  updatedAt: "",
};

describe("sessionSyncStatus", () => {
  it("a file never sent, or with complete lines beyond what was confirmed, is pending", () => {
    expect(sessionSyncStatus(undefined, 10)).toEqual({ state: "pending" });
    expect(sessionSyncStatus(base, 150)).toEqual({ state: "pending" });
  });
  it("a file whose complete lines are all confirmed is in sync", () => {
    expect(sessionSyncStatus(base, 100)).toEqual({ state: "in-sync" });
    expect(sessionSyncStatus(base, undefined)).toEqual({ state: "in-sync" });
  });
  it("a merge says how many entries came from where, and from which devices", () => {
    const state = { ...base, cloudAt: 100, merged: { fromCloud: 2, toCloud: 1, devices: ["laptop"] } };
    const status = sessionSyncStatus(state, 100);
    expect(status).toEqual({ state: "merged", fromCloud: 2, toCloud: 1, devices: ["laptop"] });
    expect(describeSyncStatus(status)).toBe("merged: 2 entries from the cloud (laptop), 1 entry sent from here");
    expect(sessionSyncStatus(state, 120).state).toBe("pending");
  });
  it("a diverged generation says why, before anything pending", () => {
    const state = { ...base, diverged: true, reason: "conflict on entry a1 (written on laptop)" };
    expect(sessionSyncStatus(state, 200)).toEqual({
      state: "diverged",
      reason: "conflict on entry a1 (written on laptop)",
    });
    expect(describeSyncStatus(sessionSyncStatus(state))).toBe(
      "diverged: conflict on entry a1 (written on laptop); a new generation was made",
    );
  });
});
