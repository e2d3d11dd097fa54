/** The small rules behind the habits: "did you mean", id prefixes, folder filters and maps. */
import type { SessionSummary } from "@pisync/protocol";
import { describe, expect, it } from "vitest";
import { pickByPrefix } from "../src/commands/ids.js";
import { filterSessions, mapFolder, underPrefix } from "../src/commands/session-filters.js";
import { closest } from "../src/suggest.js";

describe("did you mean", () => {
  const commands = ["login", "logout", "whoami", "watch", "push", "status", "ls", "pull", "rm", "share", "shares"];
  it("names the command a typo most likely meant, and nothing for nonsense", () => {
    expect(closest("pul", commands)).toBe("pull");
    expect(closest("psuh", commands)).toBe("push");
    expect(closest("stauts", commands)).toBe("status");
    expect(closest("whoamii", commands)).toBe("whoami");
    expect(closest("nonsense", commands)).toBeUndefined();
    expect(closest("x".repeat(10_000), commands)).toBeUndefined();
  });
});

describe("id prefixes", () => {
  const ids = ["0196a1b2-aaaa", "0196a1b2-bbbb", "0197ffff-cccc"];
  it("a whole id or a unique prefix of 6 or more stands for the id; shorter or ambiguous ones do not", () => {
    expect(pickByPrefix("0196a1b2-bbbb", ids, "session", "pisync ls")).toBe("0196a1b2-bbbb");
    expect(pickByPrefix("0197ff", ids, "session", "pisync ls")).toBe("0197ffff-cccc");
    expect(() => pickByPrefix("0197f", ids, "session", "pisync ls")).toThrow(/a prefix needs 6 characters/);
    expect(() => pickByPrefix("0196a1", ids, "session", "pisync ls")).toThrow(
      /ambiguous: it starts 2 sessions[\s\S]*0196a1b2-aaaa\n {2}0196a1b2-bbbb/,
    );
    try {
      pickByPrefix("0196a1", ids, "session", "pisync ls");
    } catch (error) {
      expect((error as { code: number }).code).toBe(2);
    }
    try {
      pickByPrefix("ffffff", ids, "session", "pisync ls");
    } catch (error) {
      expect((error as { code: number }).code).toBe(4);
    }
  });
});

describe("folders", () => {
  it("a prefix holds whole path segments only", () => {
    expect(underPrefix("/home/a/src", "/home/a")).toBe(true);
    expect(underPrefix("/home/a", "/home/a/")).toBe(true);
    expect(underPrefix("/home/ab", "/home/a")).toBe(false);
    expect(underPrefix("/anything", "/")).toBe(true);
  });

  it("maps a folder by the longest map that holds it", () => {
    const maps = [
      { from: "/home/old", to: "/home/new" },
      { from: "/home/old/src/app", to: "/srv/app" },
    ];
    expect(mapFolder("/home/old", maps)).toBe("/home/new");
    expect(mapFolder("/home/old/x/y", maps)).toBe("/home/new/x/y");
    expect(mapFolder("/home/old/src/app/sub", maps)).toBe("/srv/app/sub");
    expect(mapFolder("/home/older", maps)).toBeUndefined();
    expect(mapFolder("/srv/x", maps)).toBeUndefined();
    expect(mapFolder("/home/old/x", [{ from: "/home/old/", to: "/" }])).toBe("/x");
  });

  it("filters by folder and by the conversation's own last entry", () => {
    const at = (lastAt: string | undefined, cwd: string, updatedAt = "2026-12-01T00:00:00.000Z") =>
      ({ id: cwd, cwd, lastAt, updatedAt }) as SessionSummary;
    const now = Date.parse("2026-12-04T00:00:00.000Z");
    const sessions = [
      at("2026-12-03T00:00:00.000Z", "/home/a/x"),
      // Backed up yesterday, but its conversation is a year old: not recent.
      at("2025-12-01T00:00:00.000Z", "/home/a/y"),
      at(undefined, "/home/b"),
    ];
    expect(filterSessions(sessions, { since: 7 * 86400 }, now).map((s) => s.cwd)).toEqual(["/home/a/x", "/home/b"]);
    expect(filterSessions(sessions, { cwd: "/home/a" }, now).map((s) => s.cwd)).toEqual(["/home/a/x", "/home/a/y"]);
  });
});
