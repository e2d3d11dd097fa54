/**
 * The append rules over in-memory ports: retries are recognised by their bytes, offsets and
 * generations are checked, a crash or a lost race leaves the old state and no orphan, and
 * segments are merged so that reading costs a bounded number of GETs however many appends
 * built a session. (The HTTP tests pin the same rules end to end on the real stores.)
 */
import { parseSegmentKey, type SessionHead, StorageUnavailableError, sessionPrefix } from "@pisync/store";
import { beforeEach, describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { GenerationMismatch, NotFound, OffsetConflict } from "../src/errors.js";
import { Reader } from "../src/reader.js";
import { MAX_SEGMENTS, mergePlan, readRange } from "../src/segments.js";
import { faultyCommits, memoryStores } from "./memory-stores.js";

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

/** The session's bytes as a reader gets them. */
async function readable() {
  return new TextDecoder().decode((await new Reader(stores).raw("alice", "s1")).bytes);
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
  it("a commit that keeps failing before it applies answers 503 and leaves the old state; the retry lands", async () => {
    await append(0, header("s1"));
    const commit = stores.meta.commit.bind(stores.meta);
    stores.meta.commit = () => Promise.reject(new Error("injected"));
    const offset = enc(header("s1")).length;
    const failed = await append(offset, line(1, null)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StorageUnavailableError);
    expect((failed as Error).cause).toMatchObject({ message: "injected" });
    expect((await stored()).length).toBe(offset);
    stores.meta.commit = commit;
    expect(await append(offset, line(1, null))).toMatchObject({ retry: false });
    expect(await readable()).toBe(header("s1") + line(1, null));
    expect(stores.blobs.deleted).toEqual([]);
  });

  it("of two appends racing at one offset, one lands; the other conflicts; nothing is deleted", async () => {
    await append(0, header("s1"));
    const offset = enc(header("s1")).length;
    const outcomes = await Promise.allSettled([append(offset, line(1, null)), append(offset, line(2, null))]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const lost = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(OffsetConflict);
    // The loser's segment is named by no head: the sweep removes it by age, never the request.
    expect((await stored()).orphans).toHaveLength(1);
    expect(stores.blobs.deleted).toEqual([]);
    expect([header("s1") + line(1, null), header("s1") + line(2, null)]).toContain(await readable());
  });
});

describe("ambiguous outcomes: a commit whose answer is lost is resolved by reading the head", () => {
  const first = () => header("s1");
  const second = line(1, null);
  const offset = () => enc(first()).length;

  it("answer lost after the commit applied: success, and the session stays readable", async () => {
    await append(0, first());
    faultyCommits(stores.meta, ["lost-after"]);
    expect(await append(offset(), second)).toMatchObject({ offset: offset() + enc(second).length, retry: false });
    expect(await readable()).toBe(first() + second);
    expect(stores.blobs.deleted).toEqual([]);
    expect(await append(offset() + enc(second).length, line(2, idOf(1)))).toMatchObject({ retry: false });
  });

  it("answer lost after apply on a session's first append: success", async () => {
    faultyCommits(stores.meta, ["lost-after"]);
    expect(await append(0, first())).toMatchObject({ offset: offset(), generation: 1, retry: false });
    expect(await readable()).toBe(first());
  });

  it("answer lost after apply and the head unreadable too: 503, nothing deleted; the client's retry is recognised", async () => {
    await append(0, first());
    faultyCommits(stores.meta, ["lost-after"]);
    const getHead = stores.meta.getHead.bind(stores.meta);
    let reads = 0;
    stores.meta.getHead = async (userId, sessionId) => {
      if (++reads === 2) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      return getHead(userId, sessionId);
    };
    await expect(append(offset(), second)).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(stores.blobs.deleted).toEqual([]);
    expect(await readable()).toBe(first() + second);
    expect(await append(offset(), second)).toMatchObject({ retry: true, offset: offset() + enc(second).length });
  });

  it("request lost before it applied: sent again with the same idempotency token, and it lands", async () => {
    await append(0, first());
    const { sent } = faultyCommits(stores.meta, ["lost-before", "lost-before"]);
    expect(await append(offset(), second)).toMatchObject({ retry: false, offset: offset() + enc(second).length });
    expect(sent).toHaveLength(3);
    expect(sent[0]?.token).toMatch(/^[\w-]{1,36}$/);
    expect(new Set(sent.map((c) => c.token)).size).toBe(1);
    expect(await readable()).toBe(first() + second);
  });

  it("a commit lost before applying every time: 503 after a bounded number of sendings, the head unchanged", async () => {
    await append(0, first());
    const { sent } = faultyCommits(stores.meta, Array(20).fill("lost-before"));
    await expect(append(offset(), second)).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.length).toBeLessThanOrEqual(5);
    expect(await readable()).toBe(first());
    expect(stores.blobs.deleted).toEqual([]);
  });

  it("throttled once after the client's retries: sent again, and it lands", async () => {
    await append(0, first());
    faultyCommits(stores.meta, ["throttled"]);
    expect(await append(offset(), second)).toMatchObject({ retry: false });
    expect(await readable()).toBe(first() + second);
  });

  it("throttled every time: 503 (storage unavailable), nothing committed, nothing deleted", async () => {
    await append(0, first());
    faultyCommits(stores.meta, Array(20).fill("throttled"));
    await expect(append(offset(), second)).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(await readable()).toBe(first());
    expect(stores.blobs.deleted).toEqual([]);
  });

  it("a retry that met its own applied commit (a failed condition naming our segment) is success", async () => {
    await append(0, first());
    faultyCommits(stores.meta, ["retried-after"]);
    expect(await append(offset(), second)).toMatchObject({ retry: false, offset: offset() + enc(second).length });
    expect(await readable()).toBe(first() + second);
    expect(stores.blobs.deleted).toEqual([]);
  });

  it("a PUT whose answer was lost after apply: success, the new generation readable", async () => {
    await append(0, first());
    faultyCommits(stores.meta, ["lost-after"]);
    const replaced = header("s1") + line(5, null);
    expect(await append(0, replaced, { replace: true })).toMatchObject({ generation: 2, retry: false });
    expect(await readable()).toBe(replaced);
  });

  it("a conflict (another writer committed first): the loser conflicts, the winner's bytes stay whole", async () => {
    await append(0, first());
    const getHead = stores.meta.getHead.bind(stores.meta);
    let raced = false;
    // The other writer commits between this append's head read and its commit.
    stores.meta.getHead = async (userId, sessionId) => {
      const head = await getHead(userId, sessionId);
      if (!raced) {
        raced = true;
        await append(offset(), line(7, null));
      }
      return head;
    };
    await expect(append(offset(), second)).rejects.toBeInstanceOf(OffsetConflict);
    expect(await readable()).toBe(first() + line(7, null));
    expect(stores.blobs.deleted).toEqual([]);
  });

  it("a merge never deletes what a head named: a retry whose head read came before a merge is still recognised", async () => {
    let body = header("s1");
    await append(0, body);
    for (let i = 1; i < MAX_SEGMENTS; i++) {
      const next = line(i, i === 1 ? null : idOf(i - 1));
      await append(enc(body).length, next);
      body += next;
    }
    const retried = line(MAX_SEGMENTS - 1, idOf(MAX_SEGMENTS - 2));
    const retriedAt = enc(body).length - enc(retried).length;
    const getHead = stores.meta.getHead.bind(stores.meta);
    let stalled = false;
    // The retry's head read, then (while it stalls) more appends and a merge, then its byte check.
    stores.meta.getHead = async (userId, sessionId) => {
      const head = await getHead(userId, sessionId);
      if (!stalled) {
        stalled = true;
        for (let i = MAX_SEGMENTS; i < MAX_SEGMENTS + 3; i++) {
          const next = line(i, idOf(i - 1));
          await append(enc(body).length, next);
          body += next;
        }
      }
      return head;
    };
    const named = async () => (await getHead("alice", "s1"))?.current.segments.map((s) => s.key) ?? [];
    const before = await named();
    expect(await append(retriedAt, retried)).toMatchObject({ retry: true });
    const after = await named();
    expect(before.filter((key) => !after.includes(key)).length).toBeGreaterThan(1); // merged meanwhile
    expect(stores.blobs.deleted).toEqual([]);
    expect(await readable()).toBe(body);
  });

  it("a reader holding a head from before a merge reads the exact bytes", async () => {
    let body = header("s1");
    await append(0, body);
    for (let i = 1; i < MAX_SEGMENTS; i++) {
      const next = line(i, i === 1 ? null : idOf(i - 1));
      await append(enc(body).length, next);
      body += next;
    }
    const old = (await stores.meta.getHead("alice", "s1")) as SessionHead;
    await append(enc(body).length, line(MAX_SEGMENTS, idOf(MAX_SEGMENTS - 1)));
    const merged = (await stores.meta.getHead("alice", "s1")) as SessionHead;
    expect(merged.current.segments.length).toBeLessThan(MAX_SEGMENTS);
    const bytes = await readRange(stores.blobs, old.current.segments, 0, old.current.length);
    expect(new TextDecoder().decode(bytes)).toBe(body);
  });
});

describe("reads after the sweep", () => {
  it("a head read before the sweep removed its merged-away segments is read again: the dictionary is exact", async () => {
    let body = header("s1");
    await append(0, body);
    for (let i = 1; i <= MAX_SEGMENTS; i++) {
      const next = line(i, i === 1 ? null : idOf(i - 1));
      await append(enc(body).length, next);
      body += next;
    }
    const getHead = stores.meta.getHead.bind(stores.meta);
    const current = (await getHead("alice", "s1")) as SessionHead;
    // An old head naming superseded segments, which the sweep then removes.
    const superseded = (await stored()).orphans;
    expect(superseded.length).toBeGreaterThan(0);
    const old = {
      ...current,
      current: {
        ...current.current,
        segments: superseded.map((key) => {
          const range = parseSegmentKey(key);
          return { key, start: range?.start ?? 0, end: range?.end ?? 0 };
        }),
      },
    };
    await stores.blobs.delete(superseded);
    let first = true;
    stores.meta.getHead = async (userId, sessionId) => {
      if (!first) return getHead(userId, sessionId);
      first = false;
      return structuredClone(old);
    };
    const dictionary = await appender.dictionary("alice", "s1", enc(body).length);
    const all = enc(body);
    expect(Buffer.from(dictionary).equals(Buffer.from(all.subarray(Math.max(0, all.length - dictionary.length))))).toBe(
      true,
    );
  });
});

describe("cut answers", () => {
  it("a merge whose read of a segment is cut short stores nothing: the bytes stay whole", async () => {
    const get = stores.blobs.get.bind(stores.blobs);
    let cut = 0;
    // Every ranged or whole read answers one byte short, as a connection closed early would.
    stores.blobs.get = async (key, range) => {
      const bytes = await get(key, range);
      if (!key.includes("/s1/")) return bytes;
      cut++;
      return bytes.subarray(0, Math.max(0, bytes.length - 1));
    };
    let offset = 0;
    let expected = "";
    for (let i = 0; i <= MAX_SEGMENTS; i++) {
      const text = (i === 0 ? header("s1") : "") + line(i, i === 0 ? null : idOf(i - 1));
      await append(offset, text);
      offset += enc(text).length;
      expected += text;
    }
    expect(cut).toBeGreaterThan(0); // the merge read, and was cut
    await expect(
      readRange(stores.blobs, (await stores.meta.getHead("alice", "s1"))?.current.segments ?? [], 0, offset),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
    stores.blobs.get = get;
    expect(await readable()).toBe(expected);
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

it("after 10,000 single-line appends, raw and context cost at most 10 GETs; only superseded copies are unnamed", async () => {
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
  // Merged-away segments are left for the sweep: each holds exactly the committed bytes of its range.
  const all = enc(expected);
  const superseded = (await stored()).orphans.filter((key) => {
    const range = parseSegmentKey(key);
    const object = stores.blobs.objects.get(key);
    return range && object && Buffer.from(object).equals(all.subarray(range.start, range.end));
  });
  expect(superseded).toEqual((await stored()).orphans);
  expect(stores.blobs.deleted).toEqual([]);

  const reader = new Reader(stores);
  stores.blobs.gets = 0;
  const { bytes } = await reader.raw("alice", "s1");
  expect(new TextDecoder().decode(bytes)).toBe(expected);
  expect(stores.blobs.gets).toBeLessThanOrEqual(10);

  stores.blobs.gets = 0;
  const context = await reader.context("alice", "s1");
  expect(context.messages).toHaveLength(appends);
  expect(stores.blobs.gets).toBeLessThanOrEqual(10);
}, 240_000); // 31 s on a quiet 2-core machine; several times that while other work shares it
