/**
 * A large index built a chunk at a time (as a server builds one from stored records) is the
 * index the constructor builds in one go: same problems, leaves, paths and primed entries.
 */
import { describe, expect, it } from "vitest";
import { indexSession, type LineRecord, pathTo, SessionIndex } from "../src/index.js";

const HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';

function line(id: string, parentId: string | null, text: string): string {
  return JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: text },
  });
}

/** 70,000 entries (more than two chunks): a main line, a branch every 1,000, a repeated id, a missing parent. */
function largeSession(): string {
  const lines = [HEADER];
  for (let i = 0; i < 70_000; i++) {
    const parent = i === 0 ? null : i % 1000 === 999 ? `e${i - 5}` : `e${i - 1}`;
    lines.push(line(`e${i}`, parent, `entry ${i}`));
  }
  lines.push(line("e123", "e122", "the same id again"));
  lines.push(line("lost", "nowhere", "an orphan"));
  lines.push(line("tip", "e69998", "the last entry"));
  return `${lines.join("\n")}\n`;
}

/** A session whose parents come after their children (no scan walk can be kept). */
function parentsLater(): string {
  return `${[HEADER, line("b", "a", "child first"), line("a", null, "root later"), line("c", "b", "tip")].join("\n")}\n`;
}

/** The parts a store keeps: records without the scan's walk. */
function storedParts(text: string) {
  const scanned = indexSession(new TextEncoder().encode(text));
  const copy = () => scanned.records.map(({ index: _i, v1: _v, ...r }) => structuredClone(r) as LineRecord);
  return (records = copy()) => ({
    header: undefined,
    version: 3,
    records,
    problems: [],
    completeLength: text.length,
    load: (record: LineRecord) => JSON.parse(text.split("\n")[record.line - 1]),
  });
}

const LARGE = largeSession();
/** The large session without its repeated id (which puts a parent after its children). */
const LARGE_PARENTS_FIRST = LARGE.replace(`${line("e123", "e122", "the same id again")}\n`, "");

describe("an index built a chunk at a time", () => {
  for (const [name, text] of [
    ["a large session with branches", LARGE],
    ["a session whose parents come later", parentsLater()],
  ] as const) {
    it(`is the index built in one go (${name})`, async () => {
      const parts = storedParts(text);
      const whole = new SessionIndex(parts());
      let pauses = 0;
      const stepwise = await SessionIndex.build(parts(), async () => {
        pauses++;
      });
      if (text.length > 100_000) expect(pauses).toBeGreaterThan(4);
      expect(stepwise.problems).toEqual(whole.problems);
      expect(stepwise.parentsFirst).toBe(whole.parentsFirst);
      expect(stepwise.leafIds()).toEqual(whole.leafIds());
      for (const id of [...whole.leafIds().slice(0, 8), whole.defaultLeafId ?? ""]) {
        const leaf = whole.byId(id);
        if (!leaf) continue;
        const at = (index: SessionIndex) => pathTo(index, index.byId(id) as never).records.map((r) => r.line);
        expect(at(stepwise)).toEqual(at(whole));
      }
    });
  }

  it("walks the default branch while it builds, when parents come first", async () => {
    const index = await SessionIndex.build(storedParts(LARGE_PARENTS_FIRST)(), async () => {});
    const walked = index.defaultPath?.map((r) => r.id);
    expect(walked?.at(-1)).toBe("tip");
    expect(walked?.[0]).toBe("e0");
    expect(walked).toEqual(
      pathTo(new SessionIndex(storedParts(LARGE_PARENTS_FIRST)()), index.defaultLeaf as never).records.map((r) => r.id),
    );
    expect((await SessionIndex.build(storedParts(parentsLater())(), async () => {})).defaultPath).toBeUndefined();
  });

  it("leaves are worked out once, and callers get their own list", async () => {
    const index = await SessionIndex.build(storedParts(parentsLater())(), async () => {});
    const leaves = index.leafIds();
    leaves.push("changed");
    expect(index.leafIds()).toEqual(["c"]);
  });

  it("is primed with the entries of the lines it is given, and no others", () => {
    const text = LARGE;
    const index = new SessionIndex({
      ...storedParts(text)(),
      load: () => {
        throw new Error("not loaded");
      },
    });
    const tip = index.byId("tip");
    const first = index.byId("e0");
    index.prime([
      [tip?.line ?? 0, { type: "message", id: "tip", parentId: "e69998", message: { role: "user", content: "x" } }],
      [10_000_000, { type: "message", id: "none" }],
    ]);
    expect(index.entry(tip as never)).toMatchObject({ id: "tip" });
    expect(index.atLine(10_000_000)).toBeUndefined();
    expect(() => index.entry(first as never)).toThrow("not loaded");
  });
});
