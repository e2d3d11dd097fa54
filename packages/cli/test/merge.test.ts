import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendWholeLines } from "../src/local-append.js";
import { decideMerge, devicesAt, type EntryLine, joinLines } from "../src/merge.js";

const line = (id: string, text = id, parentId: string | null = null) =>
  `${JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: text } })}\n`;
const bytes = (...lines: string[]) => Buffer.from(lines.join(""));
const text = (lines: EntryLine[]) => Buffer.from(joinLines(lines)).toString();

describe("decideMerge", () => {
  it("each side's new lines go to the other, in their own order, bytes exact", () => {
    const decision = decideMerge(bytes(line("a1"), line("a2", "é ✓", "a1")), bytes(line("b1"), line("b2", "x", "b1")));
    expect(decision.kind).toBe("merge");
    if (decision.kind !== "merge") return;
    expect(text(decision.toCloud)).toBe(line("a1") + line("a2", "é ✓", "a1"));
    expect(text(decision.toLocal)).toBe(line("b1") + line("b2", "x", "b1"));
  });

  it("lines already on the other side with the same bytes are not repeated: rounds converge", () => {
    // A crash after the cloud append: the cloud holds b1 then a1; the file a1 only.
    const decision = decideMerge(bytes(line("a1")), bytes(line("b1"), line("a1")));
    expect(decision).toMatchObject({ kind: "merge", toCloud: [] });
    if (decision.kind === "merge") expect(text(decision.toLocal)).toBe(line("b1"));
    // Both hold the same entries in another order: nothing to do.
    expect(decideMerge(bytes(line("a1"), line("b1")), bytes(line("b1"), line("a1")))).toEqual({
      kind: "merge",
      toCloud: [],
      toLocal: [],
    });
  });

  it("a file behind the cloud gets the cloud's lines; a cloud behind the file gets the file's", () => {
    const behind = decideMerge(bytes(), bytes(line("b1")));
    expect(behind.kind === "merge" && text(behind.toLocal)).toBe(line("b1"));
    const ahead = decideMerge(bytes(line("a1")), bytes());
    expect(ahead.kind === "merge" && text(ahead.toCloud)).toBe(line("a1"));
  });

  it("the same id with other bytes is a conflict, named by its id", () => {
    expect(decideMerge(bytes(line("x1", "here")), bytes(line("b1"), line("x1", "there")))).toEqual({
      kind: "generation",
      reason: 'conflict on entry "x1"',
      cloudAt: line("b1").length,
    });
    // An id twice on one side.
    expect(decideMerge(bytes(line("a1"), line("a1", "again")), bytes())).toMatchObject({
      reason: 'conflict on entry "a1"',
    });
    expect(decideMerge(bytes(), bytes(line("b1"), line("b1")))).toMatchObject({ reason: 'conflict on entry "b1"' });
    // A hostile id is shown quoted and short.
    const long = `\u001b[31m${"z".repeat(200)}`;
    const reason = decideMerge(bytes(line(long, "1")), bytes(line(long, "2")));
    expect(reason.kind === "generation" && reason.reason.length).toBeLessThan(100);
    expect(reason.kind === "generation" && reason.reason).toContain("\\u001b");
  });

  it("lines that are not entries of a pi session, a second header, or a partial line are not merged", () => {
    const header = `${JSON.stringify({ type: "session", version: 3, id: "s2", cwd: "/x", timestamp: "t" })}\n`;
    expect(decideMerge(bytes(header), bytes())).toEqual({ kind: "generation", reason: "another header" });
    expect(decideMerge(bytes(), bytes(line("b1"), "not json\n"))).toEqual({
      kind: "generation",
      reason: "not a pi session",
    });
    expect(decideMerge(bytes('{"type":"message"}\n'), bytes())).toMatchObject({ reason: "not a pi session" });
    expect(decideMerge(bytes('["a"]\n'), bytes())).toMatchObject({ reason: "not a pi session" });
    expect(decideMerge(bytes(line("a1").trimEnd()), bytes())).toMatchObject({ reason: "not a pi session" });
  });
});

describe("devicesAt", () => {
  it("names the device of the run holding each offset, each once", () => {
    const writers = [
      { offset: 0, device: "desktop" },
      { offset: 500, device: "laptop" },
      { offset: 900, device: "desktop" },
    ];
    expect(devicesAt(writers, [600, 700, 950, 10])).toEqual(["laptop", "desktop"]);
    expect(devicesAt([], [5])).toEqual([]);
  });
});

describe("appendWholeLines", () => {
  const file = () => {
    const dir = mkdtempSync(join(tmpdir(), "pisync-append-"));
    return join(dir, "s.jsonl");
  };

  it("appends only while the file is exactly as long as when it was read", () => {
    const path = file();
    writeFileSync(path, line("a1"));
    const size = line("a1").length;
    expect(appendWholeLines(path, bytes(line("b1")), size)).toBe("appended");
    expect(readFileSync(path, "utf8")).toBe(line("a1") + line("b1"));
    // pi wrote since (or is writing: a partial line pending): nothing is written.
    appendFileSync(path, '{"type":"mess');
    const before = readFileSync(path);
    expect(appendWholeLines(path, bytes(line("c1")), size + line("b1").length)).toBe("busy");
    expect(readFileSync(path).equals(before)).toBe(true);
    rmSync(path);
  });
});
