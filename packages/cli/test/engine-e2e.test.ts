/**
 * The backup engine end to end, against `npm start` and the bundled CLI: a file truncated,
 * rewritten in place or replaced by a rename becomes a new generation (with `push` and with
 * `watch`), `watch` waits for roots that do not exist yet, stops with code 3 on a refused or
 * revoked token, comes back within seconds of a server's return (checked by the order of
 * events and the delays the watcher logs, not by wall time), pulls land in pi 1.x's folder
 * and file names, and a piped command does not crash when its reader goes away.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { assistantMessage } from "@pisync/testing";
import {
  cliPath,
  cloud,
  completeBytes,
  eventually,
  machine,
  npmStartForFile,
  switchableProxy,
} from "@pisync/testing/cli";
import { describe, expect, it } from "vitest";
import { Api, createLogger, StateStore, syncFile } from "../src/index.js";
import { piFolderName } from "../src/paths.js";
import { MAX_PROBE_MS } from "../src/watch.js";

const server = npmStartForFile();

const auth = () => ({ Authorization: `Bearer ${server.token}` });

/** Waits until the cloud copy equals the file's complete lines, in the given generation. */
async function expectInCloud(path: string, id: string, expectedGeneration: number, timeoutMs = 60_000) {
  const failure = await eventually(async () => {
    const stored = await cloud(server).bytes(id);
    const local = completeBytes(path);
    if (!stored?.equals(local)) return `cloud ${stored?.length} bytes, local ${local.length}`;
    const g = await cloud(server).generation(id);
    return g === expectedGeneration ? undefined : `generation ${g}, expected ${expectedGeneration}`;
  }, timeoutMs);
  expect(failure).toBeUndefined();
}

/** A session with a long line in the middle (a change there is far from both ends). */
function longSession(root: string, cwd: string) {
  const sm = SessionManager.create(cwd, join(root, piFolderName(cwd)));
  sm.appendMessage({ role: "user", content: "start", timestamp: 1 });
  sm.appendMessage(assistantMessage(`${"a".repeat(10_000)}MIDDLE${"b".repeat(10_000)}`));
  sm.appendMessage({ role: "user", content: "the last line", timestamp: 2 });
  return { sm, path: sm.getSessionFile() as string, id: sm.getSessionId() };
}

/** The three ways a file stops continuing what was backed up. */
const changes: [string, (path: string) => void][] = [
  [
    "truncated (last line removed)",
    (path) => {
      const bytes = readFileSync(path);
      writeFileSync(path, bytes.subarray(0, bytes.lastIndexOf(10, bytes.length - 2) + 1));
    },
  ],
  [
    "rewritten in place (same length, other bytes in the middle)",
    (path) => {
      const text = readFileSync(path, "utf8");
      expect(text).toContain("MIDDLE");
      writeFileSync(path, text.replace("MIDDLE", "CENTRE"));
    },
  ],
  [
    "replaced by a rename",
    (path) => {
      const text = readFileSync(path, "utf8");
      writeFileSync(`${path}.tmp`, text.replace("CENTRE", "MIDDLE"));
      renameSync(`${path}.tmp`, path);
    },
  ],
];

describe("a file that no longer continues its backup becomes a new generation", () => {
  it("with push: truncate, rewrite in place, replace by rename; pull brings back the new bytes", async () => {
    const a = machine(server.url, server.token);
    const b = machine(server.url, server.token);
    try {
      const { path, id } = longSession(a.sessionsRoot, "/home/dev/trunc-push");
      expect(a.run(["push"]).code).toBe(0);
      await expectInCloud(path, id, 1);
      let expected = 1;
      for (const [what, change] of changes) {
        const before = readFileSync(path);
        change(path);
        expect(readFileSync(path).equals(before), what).toBe(false);
        const pushed = a.run(["push"]);
        expect(pushed.code, `${what}: ${pushed.stderr}`).toBe(0);
        await expectInCloud(path, id, ++expected);
        const out = join(b.home, `pulled-${expected}.jsonl`);
        const pulled = b.run(["pull", id, "--out", out]);
        expect(pulled.code, pulled.stderr).toBe(0);
        expect(readFileSync(out).equals(completeBytes(path)), what).toBe(true);
        const status = JSON.parse(a.run(["status", "--json"]).stdout) as {
          files: { file: string; local: number; stored: number; generation: number; pending: number }[];
        };
        const row = status.files.find((f) => f.file === path);
        expect(row, what).toMatchObject({ local: completeBytes(path).length, generation: expected, pending: 0 });
        expect(row?.stored).toBe(row?.local);
      }
      // The first generation is kept whole.
      const first = await fetch(`${server.url}/v1/sessions/${id}/raw?generation=1`, { headers: auth() });
      expect(await first.text()).toContain("the last line");
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 120_000);

  it("with watch: the same three changes, each a generation, the cloud equal to the file", async () => {
    const m = machine(server.url, server.token);
    try {
      const watcher = m.watch();
      const { path, id } = longSession(m.sessionsRoot, "/home/dev/trunc-watch");
      await expectInCloud(path, id, 1);
      let expected = 1;
      for (const [, change] of changes) {
        change(path);
        await expectInCloud(path, id, ++expected);
      }
      // Growing again after a new generation is an append to it, not another generation.
      appendFileSync(
        path,
        `${JSON.stringify({ type: "label", id: "l0000001", parentId: null, timestamp: new Date().toISOString(), targetId: "x", label: "after" })}\n`,
      );
      await expectInCloud(path, id, expected);
      expect(watcher.log()).toContain("the file is shorter than what was backed up");
      watcher.child.kill("SIGTERM");
    } finally {
      await m.cleanup();
    }
  }, 120_000);
  it("through the library call the pi package makes (syncFile): the same three changes", async () => {
    const m = machine(server.url, server.token);
    try {
      const { path, id } = longSession(m.sessionsRoot, "/home/dev/trunc-library");
      // As the pi package backs up the session pi has open: a fresh state store per run.
      const backUp = async () => {
        const state = new StateStore(server.url, m.env);
        await syncFile(path, {
          api: new Api({ endpoint: server.url, token: server.token }, { attempts: 3 }),
          state,
          log: createLogger(false, () => {}),
        });
        state.flush();
      };
      await backUp();
      await expectInCloud(path, id, 1);
      let expected = 1;
      for (const [, change] of changes) {
        change(path);
        await backUp();
        await expectInCloud(path, id, ++expected, 5000);
      }
    } finally {
      await m.cleanup();
    }
  }, 60_000);
});

describe("watch", () => {
  it("waits for a sessions folder that does not exist yet, then backs it up", async () => {
    const m = machine(server.url, server.token);
    try {
      rmSync(m.sessionsRoot, { recursive: true });
      const later = join(m.home, "later-root");
      const watcher = m.watch(["--root", m.sessionsRoot, "--root", later]);
      expect(
        await eventually(async () => (watcher.log().includes('"event":"waiting"') ? undefined : "no wait")),
      ).toBeUndefined();
      const sm = SessionManager.create("/home/dev/fresh", join(m.sessionsRoot, piFolderName("/home/dev/fresh")));
      sm.appendMessage({ role: "user", content: "first session on a fresh machine", timestamp: 1 });
      sm.appendMessage(assistantMessage("hello"));
      await expectInCloud(sm.getSessionFile() as string, sm.getSessionId(), 1);
      mkdirSync(join(later, "--x--"), { recursive: true });
      const other = SessionManager.create("/x", join(later, "--x--"));
      other.appendMessage({ role: "user", content: "in the second root", timestamp: 1 });
      other.appendMessage(assistantMessage("ok"));
      await expectInCloud(other.getSessionFile() as string, other.getSessionId(), 1);
      expect(watcher.child.exitCode).toBeNull();
      watcher.child.kill("SIGTERM");
    } finally {
      await m.cleanup();
    }
  }, 120_000);

  it("a refused token stops it with code 3 and a message, from the start or revoked mid-watch", async () => {
    const wrong = machine(server.url, `pst_${"x".repeat(43)}`);
    const created = (await (
      await fetch(`${server.url}/v1/tokens`, {
        method: "POST",
        headers: { ...auth(), "Content-Type": "application/json" },
        body: JSON.stringify({ name: "revoked mid-watch" }),
      })
    ).json()) as { id: string; token: string };
    const revoked = machine(server.url, created.token);
    try {
      // Wrong from the start, with nothing to send yet.
      const first = wrong.watch();
      const code = await new Promise((resolve) => first.child.once("exit", resolve));
      expect(code).toBe(3);
      expect(first.log()).toContain("pisync login");

      const watcher = revoked.watch();
      const sm = SessionManager.create(
        "/home/dev/revoked",
        join(revoked.sessionsRoot, piFolderName("/home/dev/revoked")),
      );
      sm.appendMessage({ role: "user", content: "before", timestamp: 1 });
      sm.appendMessage(assistantMessage("ok"));
      await expectInCloud(sm.getSessionFile() as string, sm.getSessionId(), 1);
      const exited = new Promise((resolve) => watcher.child.once("exit", resolve));
      const r = await fetch(`${server.url}/v1/tokens/${created.id}`, { method: "DELETE", headers: auth() });
      expect(r.status).toBe(204);
      sm.appendMessage({ role: "user", content: "after the token was revoked", timestamp: 2 });
      expect(await exited).toBe(3);
      expect(watcher.log()).toContain("pisync login");
    } finally {
      await wrong.cleanup();
      await revoked.cleanup();
    }
  }, 120_000);

  it("after an outage, the next request comes right after the server answers again", async () => {
    const proxy = await switchableProxy(server.url);
    const m = machine(proxy.url, server.token);
    try {
      const watcher = m.watch();
      const sm = SessionManager.create("/home/dev/outage", join(m.sessionsRoot, piFolderName("/home/dev/outage")));
      sm.appendMessage({ role: "user", content: "before the outage", timestamp: 1 });
      sm.appendMessage(assistantMessage("ok"));
      const path = sm.getSessionFile() as string;
      await expectInCloud(path, sm.getSessionId(), 1);

      proxy.setDown(true);
      sm.appendMessage({ role: "user", content: "written during the outage", timestamp: 2 });
      // Offline, probing: wait for a few probes so that the backoff has reached its cap.
      const probes = () =>
        watcher
          .log()
          .split("\n")
          .filter((l) => l.includes('"event":"probe"')).length;
      expect(await eventually(async () => (probes() >= 5 ? undefined : `${probes()} probes`), 90_000)).toBeUndefined();
      proxy.setDown(false);
      await expectInCloud(path, sm.getSessionId(), 1);
      // The bytes can land before the watcher has logged its answer: wait for that line too.
      const syncedAfterOnline = () => {
        const text = watcher.log();
        return text.indexOf('"event":"synced"', text.lastIndexOf('"event":"online"')) > 0;
      };
      expect(
        await eventually(async () => (syncedAfterOnline() ? undefined : "not synced yet"), 30_000),
      ).toBeUndefined();

      // Every wait while the server was away was capped (well under 5 s).
      const log = watcher
        .log()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; inMs?: number });
      const delays = log.filter((e) => e.event === "probe").map((e) => e.inMs as number);
      expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_PROBE_MS);
      expect(MAX_PROBE_MS).toBeLessThan(5000);
      // While down, only cheap probes (after the first failed sync); the first request after
      // the server is back is served, and the watcher goes online, then syncs.
      const { events } = proxy;
      const up = events.findIndex((e) => e.kind === "up");
      const after = events.slice(up + 1);
      expect(after[0]).toMatchObject({ kind: "request", served: true });
      const downEvents = events.slice(events.findIndex((e) => e.kind === "down") + 1, up);
      expect(downEvents.filter((e) => e.method === "HEAD" && e.path === "/healthz").length).toBeGreaterThanOrEqual(5);
      const order = log.map((e) => e.event).filter((e) => ["offline", "online", "synced"].includes(e));
      expect(order.slice(order.indexOf("offline"))).toEqual(["offline", "online", "synced"]);
      watcher.child.kill("SIGTERM");
    } finally {
      await m.cleanup();
      await proxy.close();
    }
  }, 180_000);
});

describe("pull names files as pi 1.x does, inside the sessions root", () => {
  it("a cwd with a trailing slash, a timestamp with slashes", async () => {
    const a = machine(server.url, server.token);
    const b = machine(server.url, server.token);
    try {
      const id = `paths-${Date.now()}`;
      const file = join(a.sessionsRoot, "--anywhere--", `${id}.jsonl`);
      mkdirSync(join(a.sessionsRoot, "--anywhere--"));
      writeFileSync(
        file,
        `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026/01/02/../../evil", cwd: "/home/dev/app/" })}\n` +
          `${JSON.stringify({ type: "message", id: "m0000001", parentId: null, timestamp: "2026-01-02T00:00:00.000Z", message: { role: "user", content: "hi", timestamp: 1 } })}\n`,
      );
      expect(a.run(["push"]).code).toBe(0);
      const pulled = b.run(["pull", id]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const target = pulled.stdout.trim();
      expect(target).toBe(join(b.sessionsRoot, "--home-dev-app--", `2026-01-02-------evil_${id}.jsonl`));
      expect(readFileSync(target).equals(readFileSync(file))).toBe(true);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 60_000);
});

describe("a piped command whose reader goes away", () => {
  it("ends quietly, without an EPIPE stack trace", () => {
    const m = machine(server.url, server.token);
    try {
      const sm = SessionManager.create("/home/dev/pipe", join(m.sessionsRoot, piFolderName("/home/dev/pipe")));
      for (let i = 0; i < 200; i++) sm.appendMessage(assistantMessage(`line ${i} `.repeat(100)));
      const file = sm.getSessionFile() as string;
      expect(existsSync(file)).toBe(true);
      const result = spawnSync(
        "bash",
        ["-c", `set -o pipefail; "${process.execPath}" "${cliPath}" context "${file}" | head -1`],
        { env: m.env, encoding: "utf8" },
      );
      expect(result.stdout).toBe("{\n");
      expect(result.stderr).not.toMatch(/EPIPE|\n\s+at /);
      expect(result.status).toBe(0);
    } finally {
      void m.cleanup();
    }
  }, 60_000);
});
