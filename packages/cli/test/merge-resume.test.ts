/**
 * After a merge each machine resumes its own branch: two machines' files and the cloud copy run
 * through `decideMerge` round after round as `sync.ts` applies it (the cloud's lines appended to
 * the file, the file's to the cloud), pi's own SessionManager writing each machine's turns.
 * pi 0.73.1 and 1.6.0 open every file a round writes (under a time guard), land on that machine's
 * own last turn, and show both branches; the copies converge in a bounded number of lines.
 * Forged cloud lines (an id of the common part, a cycle, a dangling parent) are never taken.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { assistantMessage } from "@pisync/testing";
import { bunPath } from "@pisync/testing/omp";
import { type PiVersion, piTree } from "@pisync/testing/pi1";
import { afterAll, describe, expect, it } from "vitest";
import { decideMerge, joinLines, RESUME_MARKER, resumeMarker } from "../src/merge.js";

const temp = mkdtempSync(join(tmpdir(), "pisync-merge-resume-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** One machine: its file, and the common part as the sync state keeps it (file offset, cloud offset). */
interface Machine {
  name: string;
  path: string;
  sent: number;
  cloudAt: number;
}

/** A session started on machine A, "pulled" on B: both files and the cloud hold the same bytes. */
function start() {
  const dir = mkdtempSync(join(temp, "s-"));
  const sm = SessionManager.create("/home/dev/project", dir);
  sm.appendMessage({ role: "user", content: "started on A", timestamp: 1 });
  sm.appendMessage(assistantMessage("ok"));
  const a = sm.getSessionFile() as string;
  const text = readFileSync(a);
  const b = join(dir, "b.jsonl");
  writeFileSync(b, text);
  const world = {
    cloud: Buffer.from(text),
    machines: [
      { name: "A", path: a, sent: text.length, cloudAt: text.length },
      { name: "B", path: b, sent: text.length, cloudAt: text.length },
    ] as Machine[],
    /** Every file text a round wrote, for pi to open. */
    written: [] as string[],
  };
  return world;
}
type World = ReturnType<typeof start>;

/** One sync round on `m` as `sync.ts` runs it; the lines it moved (markers included). */
function round(world: World, m: Machine): number {
  const file = readFileSync(m.path);
  const decision = decideMerge(file.subarray(m.sent), world.cloud.subarray(m.cloudAt), {
    common: file.subarray(0, m.sent),
    marker: resumeMarker,
  });
  if (decision.kind !== "merge") throw new Error(`not merged: ${decision.reason}`);
  world.cloud = Buffer.concat([world.cloud, joinLines(decision.toCloud)]);
  const next = Buffer.concat([file, joinLines(decision.toLocal)]);
  writeFileSync(m.path, next);
  if (decision.toLocal.length > 0) world.written.push(next.toString("utf8"));
  m.sent = next.length;
  m.cloudAt = world.cloud.length;
  return decision.toCloud.length + decision.toLocal.length;
}

/** Rounds on each machine in turn until a whole pass moves nothing; how many passes it took. */
function settle(world: World): number {
  for (let pass = 1; pass <= 10; pass++) {
    let moved = 0;
    for (const m of world.machines) moved += round(world, m);
    if (moved === 0) return pass;
  }
  throw new Error("the copies never settle: the machines answer each other");
}

/** A turn written by pi itself on the machine's file (pi opens it, resumes on its leaf, appends). */
function turn(m: Machine, text: string) {
  const sm = SessionManager.open(m.path, join(m.path, ".."));
  sm.appendMessage({ role: "user", content: text, timestamp: 2 });
  sm.appendMessage(assistantMessage(`answer to ${text}`));
  return sm;
}

const lineCount = (bytes: Buffer | string) => bytes.toString().split("\n").filter(Boolean).length;
const entriesOf = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; type: string; customType?: string });

const repo = fileURLToPath(new URL("../../..", import.meta.url));

/** oh-my-pi (under Bun, with a time guard) resuming each file: its leaf and its context's message texts. */
function openInOmp(files: string[]): { leaf: string; texts: (string | null)[] }[] {
  const r = spawnSync(bunPath, [join(repo, "packages/cli/test/omp-probe.mjs"), ...files], {
    encoding: "utf8",
    timeout: 60_000,
    killSignal: "SIGKILL",
    env: { ...process.env, OMP_PROBE_DIR: temp },
  });
  if (r.status !== 0) throw new Error(`omp: ${r.error?.message ?? r.stderr}`);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** The message texts of a pi context, as the omp probe prints them. */
const textsOf = (context: { messages: unknown[] }) =>
  context.messages.map((m) => {
    const { content } = m as { content: string | { text?: string }[] };
    return typeof content === "string" ? content : (content?.[0]?.text ?? null);
  });

/** pi (both versions, each in a child process with a time guard) opens each text: its tree and default context. */
function openInPi(texts: string[]) {
  const answers: Record<PiVersion, ReturnType<typeof piTree>> = {
    "0.73.1": piTree(
      texts.map((text) => ({ text })),
      { pi: "0.73.1", timeoutMs: 60_000 },
    ),
    "1.6.0": piTree(
      texts.map((text) => ({ text })),
      { pi: "1.6.0", timeoutMs: 60_000 },
    ),
  };
  return answers;
}

describe("after a merge each machine resumes its own branch", () => {
  it("two machines that went on apart: each lands on its own last turn, both branches in the tree; the copies converge", () => {
    const world = start();
    const [a, b] = world.machines;
    const ownA = turn(a, "only on A");
    const ownB = turn(b, "only on B");
    const contextA = ownA.buildSessionContext();
    const contextB = ownB.buildSessionContext();
    const realLines = lineCount(readFileSync(a.path)) + 2;

    expect(settle(world)).toBeLessThanOrEqual(3);
    const [textA, textB] = [readFileSync(a.path, "utf8"), readFileSync(b.path, "utf8")];
    // The same entries everywhere, a few markers beyond the real lines.
    const sorted = (t: string | Buffer) => t.toString().split("\n").filter(Boolean).sort();
    expect(sorted(textA)).toEqual(sorted(world.cloud));
    expect(sorted(textB)).toEqual(sorted(world.cloud));
    expect(lineCount(textA) - realLines).toBeGreaterThan(0);
    expect(lineCount(textA) - realLines).toBeLessThanOrEqual(2);
    for (const e of entriesOf(textA).filter((e) => e.type === "custom")) expect(e.customType).toBe(RESUME_MARKER);

    // pi 0.73.1 in process: open, resume, the machine's own context.
    expect(SessionManager.open(a.path, temp).buildSessionContext()).toEqual(contextA);
    expect(SessionManager.open(b.path, temp).buildSessionContext()).toEqual(contextB);
    // Both pi versions, every file a round wrote: they return; the final files land on their own turns.
    const answers = openInPi([...world.written, textA, textB]);
    for (const version of ["0.73.1", "1.6.0"] as const) {
      const trees = answers[version];
      const [treeA, treeB] = trees.slice(-2);
      expect(treeA.contexts[0][1], version).toEqual(JSON.parse(JSON.stringify(contextA)));
      expect(treeB.contexts[0][1], version).toEqual(JSON.parse(JSON.stringify(contextB)));
      for (const tree of [treeA, treeB]) {
        const ids = new Set(tree.nodes.map((n) => n.id));
        expect(ids.has(ownA.getLeafId() as string)).toBe(true);
        expect(ids.has(ownB.getLeafId() as string)).toBe(true);
        expect(tree.roots).toHaveLength(1);
      }
    }

    // oh-my-pi resumes the same way: its own last turn on each machine.
    const [ompA, ompB] = openInOmp([a.path, b.path]);
    expect(ompA.texts).toEqual(textsOf(contextA));
    expect(ompB.texts).toEqual(textsOf(contextB));
    expect(ompA.texts.at(-1)).toBe("answer to only on A");

    // pi goes on from where it resumed on each machine, again apart: still each its own.
    const againA = turn(a, "A again");
    const againB = turn(b, "B again");
    expect(settle(world)).toBeLessThanOrEqual(3);
    expect(SessionManager.open(a.path, temp).buildSessionContext()).toEqual(againA.buildSessionContext());
    expect(SessionManager.open(b.path, temp).buildSessionContext()).toEqual(againB.buildSessionContext());
    // A goes on alone: B still resumes its own; A its own; a bounded number of markers.
    const onlyA = turn(a, "A alone");
    expect(settle(world)).toBeLessThanOrEqual(3);
    expect(SessionManager.open(a.path, temp).buildSessionContext()).toEqual(onlyA.buildSessionContext());
    expect(SessionManager.open(b.path, temp).buildSessionContext()).toEqual(againB.buildSessionContext());
    const markers = entriesOf(world.cloud.toString()).filter((e) => e.type === "custom").length;
    expect(markers).toBeLessThanOrEqual(6);
    const final = openInPi([readFileSync(a.path, "utf8"), readFileSync(b.path, "utf8")]);
    for (const version of ["0.73.1", "1.6.0"] as const) {
      expect(final[version][0].contexts[0][1]).toEqual(JSON.parse(JSON.stringify(onlyA.buildSessionContext())));
      expect(final[version][1].contexts[0][1]).toEqual(JSON.parse(JSON.stringify(againB.buildSessionContext())));
    }
    // Nothing more to do: no machine answers the other's markers.
    expect(settle(world)).toBe(1);
  }, 120_000);

  it("a machine that did nothing since its last pull follows the other: no marker", () => {
    const world = start();
    const [a, b] = world.machines;
    const ownA = turn(a, "only on A");
    expect(settle(world)).toBeLessThanOrEqual(2);
    expect(readFileSync(b.path, "utf8")).toBe(readFileSync(a.path, "utf8"));
    expect(readFileSync(b.path, "utf8")).not.toContain(RESUME_MARKER);
    expect(SessionManager.open(b.path, temp).buildSessionContext()).toEqual(ownA.buildSessionContext());
  });
});

describe("a merge takes only entries that are new and well-formed", () => {
  const header = `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/x" })}\n`;
  const entry = (id: string, parentId: string | null, text: string) =>
    `${JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: text, timestamp: 1 } })}\n`;
  const common = Buffer.from(header + entry("e0000001", null, "first") + entry("e0000002", "e0000001", "second"));
  const decide = (cloud: string, local = "") =>
    decideMerge(Buffer.from(local), Buffer.from(cloud), { common, marker: resumeMarker });

  it("the review's line: an id of the common part with other bytes (a cycle through it) is a conflict", () => {
    const forged = entry("e0000001", "e0000002", "injected");
    expect(decide(forged)).toEqual({ kind: "generation", reason: 'conflict on entry "e0000001"', cloudAt: 0 });
    // Without the cycle: it would replace the first message in pi's context.
    expect(decide(entry("e0000003", "e0000002", "ok") + entry("e0000001", null, "injected"))).toMatchObject({
      kind: "generation",
      reason: 'conflict on entry "e0000001"',
    });
    // The same bytes as the file's own line: already here, not appended again.
    expect(decide(entry("e0000001", null, "first"))).toEqual({ kind: "merge", toCloud: [], toLocal: [] });
  });

  it("a cycle among the cloud's new lines, a dangling parent, a parent that is not a string: not taken", () => {
    expect(decide(entry("c1", "c2", "x") + entry("c2", "c1", "y"))).toMatchObject({
      kind: "generation",
      reason: 'no parent for entry "c1"',
    });
    expect(decide(entry("c1", "c1", "self"))).toMatchObject({ reason: 'no parent for entry "c1"' });
    expect(decide(entry("c1", "e0000002", "fine") + entry("c2", "nowhere", "y"))).toMatchObject({
      reason: 'no parent for entry "c2"',
      cloudAt: entry("c1", "e0000002", "fine").length,
    });
    expect(
      decide(
        `${JSON.stringify({ type: "message", id: "c1", parentId: 7, message: { role: "user", content: "n" } })}\n`,
      ),
    ).toMatchObject({ reason: 'no parent for entry "c1"' });
    // A well-formed line: taken.
    const fine = decide(entry("c1", "e0000002", "fine") + entry("c2", "c1", "too"));
    expect(fine.kind).toBe("merge");
  });

  it("pi 0.73.1 and 1.6.0 return on the forged file a merge no longer writes (time guard), and on what it writes", () => {
    // What the merge used to append: pi would never finish reading it. Checked with the guard so
    // the test cannot hang; the files a merge does write are opened in the first case above.
    const forged = common.toString() + entry("e0000001", "e0000002", "injected");
    for (const pi of ["0.73.1", "1.6.0"] as const) {
      expect(() => piTree([{ text: forged }], { pi, timeoutMs: 3_000 })).toThrow(/ETIMEDOUT/);
    }
    const taken = decide(entry("c1", "e0000002", "fine"));
    if (taken.kind !== "merge") throw new Error("not merged");
    const written = common.toString() + Buffer.from(joinLines(taken.toLocal)).toString();
    for (const pi of ["0.73.1", "1.6.0"] as const) {
      const [tree] = piTree([{ text: written }], { pi, timeoutMs: 60_000 });
      expect(tree.leafId).toBe("c1");
    }
  }, 120_000);
});
