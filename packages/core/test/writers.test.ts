/**
 * Who wrote what: runs grow, join and stay bounded; an append records its device in its own
 * commit (no extra write); the run holding an offset is found.
 */
import { describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { advanceWriters, MAX_WRITER_RUNS, writerAt, writersView } from "../src/writers.js";
import { memoryStores } from "./memory-stores.js";

const enc = (text: string) => new TextEncoder().encode(text);
const header = `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
const line = (n: number) =>
  `${JSON.stringify({ type: "message", id: `m${n}`, parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `${n}`, timestamp: 1 } })}\n`;

describe("writer runs", () => {
  it("a device's next append joins its run; another device starts one", () => {
    let runs = advanceWriters(undefined, 0, "lap");
    runs = advanceWriters(runs, 10, "lap");
    runs = advanceWriters(runs, 20, "desk");
    runs = advanceWriters(runs, 30, "lap");
    expect(runs).toEqual([
      { offset: 0, device: "lap" },
      { offset: 20, device: "desk" },
      { offset: 30, device: "lap" },
    ]);
  });

  it(`keeps at most ${MAX_WRITER_RUNS} runs: the oldest are dropped`, () => {
    let runs = advanceWriters(undefined, 0, "d0");
    for (let i = 1; i < 1000; i++) runs = advanceWriters(runs, i * 10, `d${i % 2}`);
    expect(runs).toHaveLength(MAX_WRITER_RUNS);
    expect(runs.at(-1)).toEqual({ offset: 9990, device: "d1" });
    expect(runs[0].offset).toBe((1000 - MAX_WRITER_RUNS) * 10);
  });

  it("finds the run holding an offset; none before the first", () => {
    const runs = [
      { offset: 5, device: "a" },
      { offset: 20, device: "b" },
      { offset: 40, device: "a" },
    ];
    expect(writerAt(runs, 4)).toBeUndefined();
    expect(writerAt(runs, 5)?.device).toBe("a");
    expect(writerAt(runs, 39)?.device).toBe("b");
    expect(writerAt(runs, 1e9)?.offset).toBe(40);
  });

  it("names runs by the given tokens only", () => {
    const tokens = [{ hash: "h", userId: "alice", id: "t1", name: "Laptop", createdAt: "" }];
    expect(
      writersView(
        [
          { offset: 0, device: "t1" },
          { offset: 9, device: "t2" },
          { offset: 12, device: "" },
        ],
        tokens,
      ),
    ).toEqual([
      { offset: 0, device: "Laptop" },
      { offset: 9, device: "removed device" },
      { offset: 12, device: "unknown device" },
    ]);
  });

  it("an append records its device in the commit of its bytes: one commit each", async () => {
    const stores = memoryStores();
    const appender = new Appender(stores);
    const first = header + line(1);
    await appender.append({ userId: "u", sessionId: "s1", offset: 0, body: enc(first), device: "lap" });
    const commits = stores.meta.commits;
    await appender.append({
      userId: "u",
      sessionId: "s1",
      offset: enc(first).length,
      body: enc(line(2)),
      device: "desk",
    });
    expect(stores.meta.commits).toBe(commits + 1);
    expect((await stores.meta.getHead("u", "s1"))?.current.writers).toEqual([
      { offset: 0, device: "lap" },
      { offset: enc(first).length, device: "desk" },
    ]);
  });
});
