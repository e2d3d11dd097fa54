/**
 * oh-my-pi sessions renamed, end to end: files written by omp 18's own `SessionManager` (under
 * Bun), `pisync push` and `pisync watch` against `npm start` on both store pairs. A rename (omp
 * overwrites its title slot in place and appends a `title_change`) is sent as a rename: the
 * cloud's bytes are the file's exactly, in the same generation, and the title follows. A rename
 * on one machine while another appends converges: every entry once everywhere, the last
 * rename's slot in every copy, one generation.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
import { ompWrite, TITLE_SLOT_BYTES } from "@pisync/testing/omp";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

type Machine = ReturnType<typeof machine>;

/** omp's folder of a session under a machine's home (omp's own default root). */
function ompDir(m: Machine): string {
  const dir = join(m.home, ".omp", "agent", "sessions", "-proj");
  mkdirSync(dir, { recursive: true });
  return dir;
}

const lines = (bytes: Buffer) =>
  bytes
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => `${l}\n`);

function suite(server: Server, name: string) {
  const meta = async (id: string) =>
    (await (
      await fetch(`${server.url}/v1/sessions/${id}`, { headers: { Authorization: `Bearer ${server.token}` } })
    ).json()) as { generation: number; name?: string; generations?: number };
  const sessionIdOf = (file: string) => (JSON.parse(lines(readFileSync(file))[1]) as { id: string }).id;
  const syncOf = (m: Machine, id: string) =>
    (
      JSON.parse(m.run(["status", "--json"]).stdout) as {
        files: { session: string; sync: { state: string; reason?: string } }[];
      }
    ).files.find((f) => f.session === id)?.sync;

  it(`${name}: a rename through push is a rename, not a new generation`, async () => {
    const m = machine(server.url, server.token);
    try {
      const sessionDir = ompDir(m);
      const file = ompWrite({
        home: m.home,
        sessionDir,
        ops: [
          { kind: "user", text: "why does the build fail?" },
          { kind: "assistant", text: "a missing lockfile" },
        ],
      });
      const id = sessionIdOf(file);
      expect(m.run(["push"]).code).toBe(0);
      for (const title of ["Fix the build", "Fix the build, at last"]) {
        ompWrite({ file, home: m.home, sessionDir, ops: [{ kind: "rename", title }] });
        const before = readFileSync(file);
        const pushed = m.run(["push", "--json"]);
        expect(pushed.code, pushed.stderr).toBe(0);
        expect(await cloud(server).bytes(id)).toEqual(before);
        expect(await cloud(server).generation(id)).toBe(1);
        expect((await meta(id)).name).toBe(title);
      }
      expect(syncOf(m, id)?.state).toBe("in-sync");
      // `pisync ls` shows the latest title.
      expect(m.run(["ls"]).stdout).toContain("Fix the build, at last");
      // The file goes on after the renames: appended, still one generation.
      ompWrite({ file, home: m.home, sessionDir, ops: [{ kind: "user", text: "and the tests?" }] });
      expect(m.run(["push"]).code).toBe(0);
      expect(await cloud(server).bytes(id)).toEqual(readFileSync(file));
      expect(await cloud(server).generation(id)).toBe(1);
      // pull is byte-exact with the new title.
      const other = machine(server.url, server.token);
      try {
        const pulled = other.run(["pull", id]);
        expect(pulled.code, pulled.stderr).toBe(0);
        expect(readFileSync(pulled.stdout.trim().split("\n").at(-1) as string)).toEqual(readFileSync(file));
      } finally {
        await other.cleanup();
      }
    } finally {
      await m.cleanup();
    }
  }, 120_000);

  it(`${name}: a state kept before title slots were (no slot in it): a rename is still no new generation`, async () => {
    const m = machine(server.url, server.token);
    try {
      const sessionDir = ompDir(m);
      const file = ompWrite({
        home: m.home,
        sessionDir,
        ops: [
          { kind: "user", text: "old state" },
          { kind: "assistant", text: "ok" },
        ],
      });
      const id = sessionIdOf(file);
      expect(m.run(["push"]).code).toBe(0);
      const stateDir = join(m.env.XDG_STATE_HOME as string, "pisync");
      for (const name of readdirSync(stateDir).filter((f) => f.startsWith("state-"))) {
        const state = JSON.parse(readFileSync(join(stateDir, name), "utf8")) as {
          files: Record<string, { slot?: unknown }>;
        };
        for (const f of Object.values(state.files)) delete f.slot;
        writeFileSync(join(stateDir, name), JSON.stringify(state));
      }
      ompWrite({ file, home: m.home, sessionDir, ops: [{ kind: "rename", title: "Renamed after an upgrade" }] });
      expect(m.run(["push"]).code).toBe(0);
      expect(await cloud(server).bytes(id)).toEqual(readFileSync(file));
      expect(await cloud(server).generation(id)).toBe(1);
    } finally {
      await m.cleanup();
    }
  }, 120_000);

  it(`${name}: a rename under a running watch is a rename`, async () => {
    const m = machine(server.url, server.token);
    try {
      const sessionDir = ompDir(m);
      const watcher = m.watch();
      const file = ompWrite({
        home: m.home,
        sessionDir,
        ops: [
          { kind: "user", text: "hello" },
          { kind: "assistant", text: "hi" },
        ],
      });
      const id = sessionIdOf(file);
      const same = async () => {
        const stored = await cloud(server).bytes(id);
        return stored?.equals(completeBytes(file)) ? undefined : "the cloud is not the file";
      };
      expect(await eventually(same, 30_000), watcher.log()).toBeUndefined();
      ompWrite({ file, home: m.home, sessionDir, ops: [{ kind: "rename", title: "Greetings" }] });
      expect(await eventually(same, 30_000), watcher.log()).toBeUndefined();
      expect(await cloud(server).generation(id)).toBe(1);
      expect((await meta(id)).name).toBe("Greetings");
      expect(watcher.log()).toContain('"renamed"');
      expect(watcher.log()).not.toContain('"event":"generation"');
    } finally {
      await m.cleanup();
    }
  }, 120_000);

  it(`${name}: a rename on one machine while the other appends converges, in one generation`, async () => {
    const [a, b] = [machine(server.url, server.token), machine(server.url, server.token)];
    try {
      const fileA = ompWrite({
        home: a.home,
        sessionDir: ompDir(a),
        ops: [
          { kind: "user", text: "shared start" },
          { kind: "assistant", text: "ok" },
        ],
      });
      const id = sessionIdOf(fileA);
      expect(a.run(["push"]).code).toBe(0);
      const pulled = b.run(["pull", id]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const fileB = pulled.stdout.trim().split("\n").at(-1) as string;
      const logs = [a.watch(["--poll-cloud", "0.5"]).log, b.watch(["--poll-cloud", "0.5"]).log];
      ompWrite({ file: fileA, home: a.home, sessionDir: ompDir(a), ops: [{ kind: "rename", title: "Renamed on A" }] });
      ompWrite({
        file: fileB,
        home: b.home,
        sessionDir: ompDir(b),
        ops: [
          { kind: "user", text: "meanwhile on B" },
          { kind: "assistant", text: "B answers" },
        ],
      });
      const failure = await eventually(async () => {
        const stored = await cloud(server).bytes(id);
        if (!stored) return "not in the cloud";
        const copies = [stored, completeBytes(fileA), completeBytes(fileB)];
        const slots = copies.map((c) => c.subarray(0, TITLE_SLOT_BYTES).toString("utf8"));
        if (new Set(slots).size !== 1) return `the slots differ: ${slots.join(" | ")}`;
        if (!slots[0].includes("Renamed on A")) return "the slot is not the rename's";
        const sets = copies.map((c) => new Set(lines(c)));
        if (sets.some((s, i) => s.size !== lines(copies[i]).length)) return "a line twice";
        if (sets.some((s) => s.size !== sets[0].size || [...s].some((l) => !sets[0].has(l)))) return "the lines differ";
        return undefined;
      }, 40_000);
      expect(failure, logs.map((l) => l()).join("\n---\n")).toBeUndefined();
      expect(await cloud(server).generation(id)).toBe(1);
      expect((await meta(id)).name).toBe("Renamed on A");
      const text = readFileSync(fileB, "utf8");
      expect(text).toContain("meanwhile on B");
      expect(text).toContain('"type":"title_change"');
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 150_000);
}

describe("omp renames, npm start (files + SQLite)", () => {
  const server = npmStartForFile();
  suite(server, "files");
});

describe("omp renames, npm start --store aws (S3 + DynamoDB)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "pisync-omp-aws-"));
  let running: Server | undefined;
  beforeAll(async () => {
    buildCli();
    const env = testAwsEnv(
      { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint"), bucket: inject("s3Bucket") },
      `pisync-omp-${randomUUID()}`,
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
  suite(server, "aws");
});
