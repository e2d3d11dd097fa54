/**
 * Built indexes are kept per session version: one build per version however many requests
 * ask at once, a new one when the session grows, none kept past the budget; and each request
 * reads through its own view, so entries one request loads (a share's masked ones) are never
 * what another (the owner) reads.
 */
import { parseSession, SessionIndex } from "@pisync/format";
import { describe, expect, it } from "vitest";
import { type BuiltIndex, IndexCache } from "../src/index-cache.js";

const lines = [
  { type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" },
  { type: "message", id: "a", parentId: null, message: { role: "user", content: "secret" } },
  { type: "message", id: "b", parentId: "a", message: { role: "user", content: "two" } },
  { type: "message", id: "c", parentId: "a", message: { role: "user", content: "three" } },
];
const bytes = new TextEncoder().encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));

/** An index as the reader builds it: records only, entries loaded by `prime`. */
function built(): BuiltIndex {
  const parsed = parseSession(bytes).index;
  const index = new SessionIndex({
    header: undefined,
    version: 3,
    records: parsed.records.map((r) => ({ ...r })),
    problems: [],
    completeLength: bytes.length,
    load: () => {
      throw new Error("not loaded");
    },
  });
  return { index, previews: {} };
}

function counting() {
  let builds = 0;
  return {
    build: async () => {
      builds++;
      await new Promise((resolve) => setImmediate(resolve));
      return built();
    },
    get builds() {
      return builds;
    },
  };
}

describe("the index cache", () => {
  it("builds a version once for requests at once and after, and again when the session grew", async () => {
    const cache = new IndexCache(4, 1000);
    const b = counting();
    const [x, y] = await Promise.all([cache.get("k", 10, b.build), cache.get("k", 10, b.build)]);
    expect(b.builds).toBe(1);
    await cache.get("k", 10, b.build);
    expect(b.builds).toBe(1);
    // Views share the tree, not themselves.
    expect(x.index).not.toBe(y.index);
    expect(x.index.byId("b")).toBe(y.index.byId("b"));
    expect(x.index.leafIds()).toEqual(["b", "c"]);
    await cache.get("k", 20, b.build);
    expect(b.builds).toBe(2);
    await cache.get("k", 20, b.build);
    expect(b.builds).toBe(2);
    await cache.get("other", 20, b.build);
    expect(b.builds).toBe(3);
  });

  it("keeps no index past its budget of records, and forgets a deleted session's", async () => {
    const small = new IndexCache(4, 2);
    const b = counting();
    await small.get("k", 10, b.build);
    await small.get("k", 10, b.build);
    expect(b.builds).toBe(2); // three records weigh more than the budget
    const cache = new IndexCache(4, 1000);
    await cache.get("u/s/t/1/t", 10, b.build);
    cache.forget("u/s/");
    await cache.get("u/s/t/1/t", 10, b.build);
    expect(b.builds).toBe(4);
  });

  it("gives each request its own loaded entries: what one primed (masked) another never reads", async () => {
    const cache = new IndexCache(4, 1000);
    const b = counting();
    const share = (await cache.get("k", 10, b.build)).index;
    const owner = (await cache.get("k", 10, b.build)).index;
    const a = share.byId("a");
    if (!a) throw new Error("no a");
    share.prime([[a.line, { ...lines[1], message: { role: "user", content: "[masked]" } }]]);
    expect((share.entry(a) as { message: { content: string } }).message.content).toBe("[masked]");
    expect(() => owner.entry(a)).toThrow("not loaded");
    const later = (await cache.get("k", 10, b.build)).index;
    expect(() => later.entry(a)).toThrow("not loaded");
    owner.prime([[a.line, lines[1]]]);
    expect((owner.entry(a) as { message: { content: string } }).message.content).toBe("secret");
    expect((share.entry(a) as { message: { content: string } }).message.content).toBe("[masked]");
  });
});
