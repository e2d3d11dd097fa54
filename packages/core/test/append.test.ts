/**
 * The append rules over in-memory ports: retries are recognised by their bytes, offsets and
 * generations are checked, a crash or a lost race leaves the old state and no orphan, and
 * segments are merged so that reading costs a bounded number of GETs however many appends
 * built a session. (The HTTP tests pin the same rules end to end on the real stores.)
 */
import { sessionPrefix } from "@pisync/store";
import { beforeEach, describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { GenerationMismatch, NotFound, OffsetConflict } from "../src/errors.js";
import { Reader } from "../src/reader.js";
import { MAX_SEGMENTS, mergePlan } from "../src/segments.js";
import { memoryStores } from "./memory-stores.js";

const enc = (text: string) => new TextEncoder().encode(text);
const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
const line = (n: number, parentId: string | null) =>
  `${JSON.stringify({
    type: "message",
    id: idOf(n),
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: `line ${n}`, timestamp: 1 },
  })}\n`;
const idOf = (n: number) => `m${n.toString(16).padStart(7, "0")}`;

let stores: ReturnType<typeof memoryStores>;
let appender: Appender;
const append = (offset: number, text: string, more: { generation?: number; replace?: boolean } = {}) =>
  appender.append({ userId: "alice", sessionId: "s1", offset, body: enc(text), ...more });

/** The stored state: committed length, and whether every object under the session is listed by its head. */
async function stored() {
  const head = await stores.meta.getHead("alice", "s1");
  const objects = await stores.blobs.list(sessionPrefix("alice", "s1"));
  const listed = head?.current.segments.map((s) => s.key).sort() ?? [];
  return { length: head?.current.length ?? 0, orphans: objects.filter((key) => !listed.includes(key)) };
}

beforeEach(() => {
  stores = memoryStores();
  appender = new Appender(stores);
});

describe("retry detection", () => {
  it("a body equal to committed bytes at its offset is a retry: nothing stored, nothing committed", async () => {
    const first = header("s1") + line(1, null);
    expect(await append(0, first)).toMatchObject({ offset: enc(first).length, retry: false, generation: 1 });
    const objects = stores.blobs.objects.size;
    const commits = stores.meta.commits;
    expect(await append(0, first)).toMatchObject({ offset: enc(first).length, retry: true });
    expect(stores.blobs.objects.size).toBe(objects);
    expect(stores.meta.commits).toBe(commits);
  });

  it("an older append sent again after later ones is still a retry; other bytes there conflict", async () => {
    const first = header("s1");
    const second = line(1, null);
    await append(0, first);
    await append(enc(first).length, second);
    await append(enc(first + second).length, line(2, idOf(1)));
    expect(await append(enc(first).length, second)).toMatchObject({ retry: true, offset: enc(first + second).length });
    const other = await append(enc(first).length, line(9, null)).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(OffsetConflict);
    expect((other as OffsetConflict).committed).toBe(enc(first + second + line(2, idOf(1))).length);
  });

  it("a retried PUT finds its own generation", async () => {
    await append(0, header("s1"));
    const replaced = header("s1") + line(1, null);
    expect(await append(0, replaced, { replace: true })).toMatchObject({ generation: 2, retry: false });
    expect(await append(0, replaced, { replace: true })).toMatchObject({ generation: 2, retry: true });
    expect((await stores.meta.getArchived("alice", "s1")).map((g) => g.generation)).toEqual([1]);
  });
});

describe("offsets and generations", () => {
  it("a first append must start at 0; a gap or an overlap with other bytes conflicts", async () => {
    await expect(append(5, header("s1"))).rejects.toBeInstanceOf(NotFound);
    await append(0, header("s1"));
    const gap = await append(enc(header("s1")).length + 1, line(1, null)).catch((e: unknown) => e);
    expect(gap).toBeInstanceOf(OffsetConflict);
    expect(gap).toMatchObject({ committed: enc(header("s1")).length, generation: 1 });
  });

  it("an If-Match generation other than the current one is a mismatch, with the current state", async () => {
    await append(0, header("s1"));
    await append(0, header("s1") + line(1, null), { replace: true });
    const length = (await stored()).length;
    const mismatch = await append(length, line(2, null), { generation: 1 }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(GenerationMismatch);
    expect(mismatch).toMatchObject({ generation: 2, committed: length });
    expect(await append(length, line(2, null), { generation: 2 })).toMatchObject({ retry: false });
  });

  it("an If-Match generation for a session that does not exist is not found", async () => {
    await expect(append(0, header("s1"), { generation: 1 })).rejects.toBeInstanceOf(NotFound);
  });
});

describe("crashes and races", () => {
  it("a failed commit leaves the old state and no orphan; the retry lands", async () => {
    await append(0, header("s1"));
    const commit = stores.meta.commit.bind(stores.meta);
    stores.meta.commit = () => Promise.reject(new Error("injected"));
    const offset = enc(header("s1")).length;
    await expect(append(offset, line(1, null))).rejects.toThrow("injected");
    expect(await stored()).toEqual({ length: offset, orphans: [] });
    stores.meta.commit = commit;
    expect(await append(offset, line(1, null))).toMatchObject({ retry: false });
    expect(await stored()).toEqual({ length: offset + enc(line(1, null)).length, orphans: [] });
  });

  it("of two appends racing at one offset, one lands; the other conflicts and leaves no orphan", async () => {
    await append(0, header("s1"));
    const offset = enc(header("s1")).length;
    const outcomes = await Promise.allSettled([append(offset, line(1, null)), append(offset, line(2, null))]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const lost = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(OffsetConflict);
    expect((await stored()).orphans).toEqual([]);
  });
});

describe("merge planning", () => {
  const segments = (sizes: number[]) => {
    const starts = sizes.map((_, i) => sizes.slice(0, i).reduce((sum, size) => sum + size, 0));
    return sizes.map((size, i) => ({ key: `k${i}`, start: starts[i] as number, end: (starts[i] as number) + size }));
  };

  it("merges nothing while a generation has few enough segments", () => {
    expect(mergePlan(segments(Array(MAX_SEGMENTS).fill(10)))).toBeUndefined();
  });

  it("merges the run of neighbours with the fewest bytes, down to five segments", () => {
    // Nine segments: a run of five is merged; the big old ones stay.
    expect(mergePlan(segments([1000, 900, 5, 5, 5, 5, 5, 800, 700]))).toEqual({ from: 2, to: 7 });
    expect(mergePlan(segments([5, 5, 5, 5, 5, 5, 5, 5, 5]))).toEqual({ from: 4, to: 9 });
    const plan = mergePlan(segments(Array(20).fill(1))) as { from: number; to: number };
    expect(20 - (plan.to - plan.from) + 1).toBe(5);
  });
});

it("after 10,000 single-line appends, raw and context cost at most 10 GETs, and no orphan is left", async () => {
  const appends = 10_000;
  let offset = 0;
  let expected = "";
  let parent: string | null = null;
  for (let i = 1; i <= appends; i++) {
    const body = (i === 1 ? header("s1") : "") + line(i, parent);
    parent = idOf(i);
    const result = await append(offset, body);
    expect(result.retry).toBe(false);
    offset = result.offset;
    expected += body;
  }
  const head = await stores.meta.getHead("alice", "s1");
  expect(head?.current.segments.length).toBeLessThanOrEqual(MAX_SEGMENTS);
  expect((await stored()).orphans).toEqual([]);

  const reader = new Reader(stores);
  stores.blobs.gets = 0;
  const { bytes } = await reader.raw("alice", "s1");
  expect(new TextDecoder().decode(bytes)).toBe(expected);
  expect(stores.blobs.gets).toBeLessThanOrEqual(10);

  stores.blobs.gets = 0;
  const context = await reader.context("alice", "s1");
  expect(context.messages).toHaveLength(appends);
  expect(stores.blobs.gets).toBeLessThanOrEqual(10);
}, 60_000);
