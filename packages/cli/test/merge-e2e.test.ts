/**
 * One session continued on two and three machines (separate homes, each with its own
 * `pisync watch`, pi's real SessionManager writing), against `npm start` on both store pairs:
 * the copies are merged by entry id, every entry once in the cloud and in every file, bytes
 * exact; each file opens in pi with every machine's branch, each leaf's context the one that
 * machine built itself; rounds converge. Conflicts still make a generation, with the reason.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { assistantMessage } from "@pisync/testing";
import {
  buildCli,
  cloud,
  completeBytes,
  eventually,
  machine,
  npmStartForFile,
  type Server,
  startServer,
  testAwsEnv,
} from "@pisync/testing/cli";
import { piContexts, piTree } from "@pisync/testing/pi1";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { piFolderName } from "../src/paths.js";

type Machine = ReturnType<typeof machine>;
/** The running test's watcher logs, printed when the copies do not settle. */
const watchLogs: (() => string)[] = [];

const lines = (bytes: Buffer) =>
  bytes
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => `${l}\n`);

/** Every line once, the same set of lines in each copy: undefined, else what differs. */
function sameEntries(copies: Record<string, Buffer>): string | undefined {
  const sets = Object.entries(copies).map(([name, bytes]) => {
    const all = lines(bytes);
    const unique = new Set(all);
    return { name, all, unique };
  });
  for (const s of sets) if (s.unique.size !== s.all.length) return `${s.name}: a line twice`;
  const [first, ...rest] = sets;
  for (const s of rest) {
    if (s.unique.size !== first.unique.size || [...s.unique].some((l) => !first.unique.has(l))) {
      return `${s.name} (${s.all.length} lines) and ${first.name} (${first.all.length} lines) differ`;
    }
  }
  return undefined;
}

/** Each machine's file opens in pi with every machine's leaf, whose context is the one that machine built. */
function expectBranches(files: string[], writers: SessionManager[]) {
  for (const file of files) {
    const opened = SessionManager.open(file);
    const ids = new Set(opened.getEntries().map((e) => e.id));
    expect(opened.getTree().length).toBeGreaterThan(0);
    for (const own of writers) {
      const leaf = own.getLeafId() as string;
      expect(ids.has(leaf)).toBe(true);
      opened.branch(leaf);
      expect(opened.buildSessionContext()).toEqual(own.buildSessionContext());
    }
  }
}

/** A session started on the first machine, pushed, pulled on the others; each opened in pi there. */
async function startOn(machines: Machine[], cwd: string) {
  const [first, ...others] = machines;
  const sm = SessionManager.create(cwd, join(first.sessionsRoot, piFolderName(cwd)));
  sm.appendMessage({ role: "user", content: "started here", timestamp: 1 });
  sm.appendMessage(assistantMessage("ok"));
  expect(first.run(["push"]).code).toBe(0);
  const writers = [sm];
  for (const m of others) {
    const pulled = m.run(["pull", sm.getSessionId()]);
    expect(pulled.code, pulled.stderr).toBe(0);
    writers.push(SessionManager.open(pulled.stdout.trim()));
  }
  return { id: sm.getSessionId(), writers, files: writers.map((w) => w.getSessionFile() as string) };
}

/**
 * The same in pi 1.6.0 (under Node 22): in each merged file, each machine's leaf has the context
 * pi 1.6.0 builds from that machine's own file (the header and its own lines, in its order).
 */
function expectPi1Branches(files: string[], writers: SessionManager[]) {
  const leaves = writers.map((w) => w.getLeafId() as string);
  // pi 1.6.0's getTree() holds every machine's branch: each leaf a node, nothing continuing it
  // but the merge's resume markers (custom entries, outside the model's context).
  for (const [i, tree] of piTree(files.map((f) => ({ text: readFileSync(f, "utf8") }))).entries()) {
    const nodes = new Map(tree.nodes.map((n) => [n.id, n]));
    for (const leaf of leaves) {
      const after = nodes.get(leaf)?.children.filter((c) => nodes.get(c)?.type !== "custom");
      expect(after, `file ${i}, leaf ${leaf}`).toEqual([]);
    }
    expect(new Set(leaves).size).toBe(writers.length);
  }
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const [header, ...rest] = lines(Buffer.from(text));
    for (const own of writers) {
      const ids = new Set(own.getEntries().map((e) => e.id));
      const ownText = header + rest.filter((l) => ids.has((JSON.parse(l) as { id: string }).id)).join("");
      const leaf = own.getLeafId() as string;
      const [merged, alone] = piContexts([
        { text, leaves: [leaf] },
        { text: ownText, leaves: [leaf] },
      ]);
      expect(merged[0][1]).toBeTruthy();
      expect(merged).toEqual(alone);
    }
  }
}

function mergeSuite(server: Server, name: string) {
  const cloudBytes = (id: string) => cloud(server).bytes(id);

  async function settled(id: string, files: string[]) {
    const failure = await eventually(async () => {
      const stored = await cloudBytes(id);
      if (!stored) return "not in the cloud";
      const copies: Record<string, Buffer> = { cloud: stored };
      for (const [i, f] of files.entries()) copies[`machine ${i}`] = completeBytes(f);
      return sameEntries(copies);
    }, 30_000);
    if (failure) {
      const stored = lines((await cloudBytes(id)) as Buffer);
      for (const [i, f] of files.entries()) {
        const mine = new Set(lines(completeBytes(f)));
        console.log(
          `machine ${i} lacks`,
          stored.filter((l) => !mine.has(l)).map((l) => l.slice(0, 120)),
        );
      }
      for (const [i, log] of watchLogs.entries()) console.log(`watcher ${i}`, log());
    }
    expect(failure).toBeUndefined();
  }

  async function expectConverged(id: string, files: string[]) {
    const sizes = async () => [(await cloudBytes(id))?.length, ...files.map((f) => readFileSync(f).length)];
    const before = await sizes();
    await new Promise((r) => setTimeout(r, 3000));
    expect(await sizes()).toEqual(before);
  }

  it(`${name}: two machines write at the same time; both files and the cloud end with every entry once`, async () => {
    const machines = [machine(server.url, server.token), machine(server.url, server.token)];
    try {
      const { id, writers, files } = await startOn(machines, `/home/dev/merge-${randomUUID()}`);
      watchLogs.length = 0;
      for (const m of machines) watchLogs.push(m.watch(["--poll-cloud", "0.5"]).log);
      for (let round = 0; round < 8; round++) {
        for (const [i, w] of writers.entries()) {
          w.appendMessage({ role: "user", content: `round ${round} on machine ${i}`, timestamp: 10 + round });
          w.appendMessage(assistantMessage(`answer ${round} from ${i} ${"é".repeat(round * 30)}`));
        }
        await new Promise((r) => setTimeout(r, Math.random() * 300));
      }
      await settled(id, files);
      expect(await cloud(server).generation(id)).toBe(1);
      expectBranches(files, writers);
      expectPi1Branches(files, writers);
      await expectConverged(id, files);
      for (const m of machines) {
        const status = JSON.parse(m.run(["status", "--json"]).stdout) as {
          files: { session: string; sync: { state: string; fromCloud?: number; toCloud?: number } }[];
        };
        const sync = status.files.find((f) => f.session === id)?.sync;
        expect(sync?.state).toBe("merged");
        expect((sync?.fromCloud ?? 0) + (sync?.toCloud ?? 0)).toBeGreaterThan(0);
      }
      // pi goes on writing on each machine after the merge: still joined.
      writers[0].appendMessage({ role: "user", content: "after the merge", timestamp: 99 });
      writers[0].appendMessage(assistantMessage("still fine"));
      await settled(id, files);
      expectBranches(files, writers);
    } finally {
      for (const m of machines) await m.cleanup();
    }
  }, 180_000);

  it(`${name}: three machines`, async () => {
    const machines = [0, 1, 2].map(() => machine(server.url, server.token));
    try {
      const { id, writers, files } = await startOn(machines, `/home/dev/three-${randomUUID()}`);
      for (const [i, w] of writers.entries()) {
        w.appendMessage({ role: "user", content: `offline on machine ${i}`, timestamp: 20 });
        w.appendMessage(assistantMessage(`machine ${i} answers`));
      }
      watchLogs.length = 0;
      for (const m of machines) watchLogs.push(m.watch(["--poll-cloud", "0.5"]).log);
      await settled(id, files);
      for (const [i, w] of writers.entries()) {
        w.appendMessage({ role: "user", content: `online on machine ${i}`, timestamp: 30 });
        w.appendMessage(assistantMessage(`machine ${i} again`));
      }
      await settled(id, files);
      expect(await cloud(server).generation(id)).toBe(1);
      expectBranches(files, writers);
      await expectConverged(id, files);
    } finally {
      for (const m of machines) await m.cleanup();
    }
  }, 180_000);
}

describe("merge, npm start (files + SQLite)", () => {
  const server = npmStartForFile();
  mergeSuite(server, "files");
  const cloudBytes = (id: string) => cloud(server).bytes(id);

  const entry = (id: string, parentId: string, content: string) =>
    `${JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:09.000Z", message: { role: "user", content, timestamp: 9 } })}\n`;
  const syncOf = (m: Machine, id: string) =>
    (
      JSON.parse(m.run(["status", "--json"]).stdout) as {
        files: { session: string; sync: { state: string; reason?: string } }[];
      }
    ).files.find((f) => f.session === id)?.sync;

  it("what is not a merge still makes a generation, and status says why", async () => {
    const machines = [machine(server.url, server.token), machine(server.url, server.token)];
    const [a, b] = machines;
    try {
      const { id, writers, files } = await startOn(machines, `/home/dev/conflict-${randomUUID()}`);
      const leaf = writers[0].getLeafId() as string;
      // The same id written with other bytes on each machine: a conflict on that entry.
      appendFileSync(files[0], entry("same-id", leaf, "written on A"));
      appendFileSync(files[1], entry("same-id", leaf, "written on B"));
      expect(a.run(["push"]).code).toBe(0);
      expect(b.run(["push"]).code).toBe(0);
      expect(await cloud(server).generation(id)).toBe(2);
      expect((await cloudBytes(id))?.equals(completeBytes(files[1]))).toBe(true);
      // The server names who wrote the cloud's side of the conflict (the token's name).
      expect(syncOf(b, id)).toEqual({
        state: "diverged",
        reason: expect.stringMatching(/^conflict on entry "same-id" \(written on .+\)$/),
      });
      // A's file was not touched by B's generation: nothing is appended across generations.
      expect(readFileSync(files[0], "utf8")).toContain("written on A");
      expect(readFileSync(files[0], "utf8")).not.toContain("written on B");

      // Rewritten here while the other machine appended: a generation, "rewritten".
      appendFileSync(files[1], entry("b-more", "same-id", "more on B"));
      expect(b.run(["push"]).code).toBe(0);
      const before = readFileSync(files[0], "utf8");
      writeFileSync(files[0], before.replace("written on A", "changed on A"));
      expect(a.run(["push"]).code).toBe(0);
      expect(await cloud(server).generation(id)).toBe(3);
      expect(syncOf(a, id)).toEqual({ state: "diverged", reason: "rewritten" });

      // Truncated on B after A's generation: B's file is shorter than what B confirmed.
      appendFileSync(files[0], entry("a-more", "same-id", "more on A"));
      expect(a.run(["push"]).code).toBe(0);
      const bLines = lines(readFileSync(files[1]));
      writeFileSync(files[1], bLines.slice(0, -1).join(""));
      expect(b.run(["push"]).code).toBe(0);
      expect(await cloud(server).generation(id)).toBe(4);
      expect(syncOf(b, id)).toEqual({ state: "diverged", reason: "truncated" });
    } finally {
      for (const m of machines) await m.cleanup();
    }
  }, 120_000);

  it("a forged cloud line (an id this file holds, a dangling parent) is not merged: a generation, and status says why", async () => {
    const machines = [machine(server.url, server.token), machine(server.url, server.token)];
    const [a, b] = machines;
    try {
      const { id, files } = await startOn(machines, `/home/dev/forged-${randomUUID()}`);
      const [, first, second] = lines(readFileSync(files[0])).map((l) => JSON.parse(l) as { id: string });
      // Another device of the account appends the review's line: the first entry's id again,
      // its parent the second entry (a cycle pi would never finish reading).
      appendFileSync(files[0], entry(first.id, second.id, "injected"));
      expect(a.run(["push"]).code).toBe(0);
      appendFileSync(files[1], entry("b-own", second.id, "B's own"));
      expect(b.run(["push"]).code).toBe(0);
      expect(syncOf(b, id)).toEqual({
        state: "diverged",
        reason: expect.stringMatching(new RegExp(`^conflict on entry "${first.id}" \\(written on .+\\)$`)),
      });
      // B's file has nothing of the forged line: its own bytes are the new generation.
      expect(readFileSync(files[1], "utf8")).not.toContain("injected");
      expect((await cloudBytes(id))?.equals(completeBytes(files[1]))).toBe(true);
      // A dangling parent, then.
      appendFileSync(files[1], entry("b-more", "b-own", "more on B"));
      expect(b.run(["push"]).code).toBe(0);
      const c = machine(server.url, server.token);
      machines.push(c);
      const pulled = c.run(["pull", id]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const cFile = pulled.stdout.trim();
      appendFileSync(files[1], entry("dangling", "no-such-entry", "dangling"));
      expect(b.run(["push"]).code).toBe(0);
      appendFileSync(cFile, entry("c-own", "b-more", "C's own"));
      expect(c.run(["push"]).code).toBe(0);
      expect(syncOf(c, id)).toEqual({
        state: "diverged",
        reason: expect.stringMatching(/^no parent for entry "dangling"/),
      });
      expect(readFileSync(cFile, "utf8")).not.toContain("dangling");
    } finally {
      for (const m of machines) await m.cleanup();
    }
  }, 120_000);

  it("--no-merge and PISYNC_MERGE=off keep the old rule: a new generation", async () => {
    const machines = [machine(server.url, server.token), machine(server.url, server.token)];
    const [a, b] = machines;
    try {
      const { id, writers } = await startOn(machines, `/home/dev/nomerge-${randomUUID()}`);
      for (const w of writers) w.appendMessage({ role: "user", content: "each its own", timestamp: 5 });
      expect(a.run(["push", "--no-merge"]).code).toBe(0);
      expect(b.run(["push"], { PISYNC_MERGE: "off" }).code).toBe(0);
      expect(await cloud(server).generation(id)).toBe(2);
      expect(syncOf(b, id)).toEqual({ state: "diverged", reason: "merge turned off" });
      const bad = b.run(["push"], { PISYNC_MERGE: "maybe" });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("PISYNC_MERGE is on or off");
    } finally {
      for (const m of machines) await m.cleanup();
    }
  }, 120_000);
});

describe("merge, npm start --store aws (S3 + DynamoDB)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pisync-merge-aws-"));
  let running: Server | undefined;
  beforeAll(async () => {
    buildCli();
    const env = testAwsEnv(
      { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint"), bucket: inject("s3Bucket") },
      `pisync-merge-${randomUUID()}`,
    );
    running = await startServer(dataDir, { args: ["--store", "aws", "--create"], env });
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const server: Server = {
    get url() {
      return (running as Server).url;
    },
    get token() {
      return (running as Server).token;
    },
    stop: async () => {},
  };
  mergeSuite(server, "aws");
});
