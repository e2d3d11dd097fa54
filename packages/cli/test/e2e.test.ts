/**
 * End to end against `npm start`: pi's real SessionManager writes sessions while the bundled
 * `pisync watch` runs, is killed with SIGKILL at random moments and restarted, and talks
 * through a proxy that fails requests (some answers lost after the server committed). At the
 * end every cloud copy equals its local file, byte for byte.
 */

import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { assistantMessage, usage } from "@pisync/testing";
import { cloud, completeBytes, eventually, faultyProxy, machine, npmStartForFile } from "@pisync/testing/cli";
import { inRepoCorpus } from "@pisync/testing/fixtures";
import { piContexts } from "@pisync/testing/pi1";
import { describe, expect, it } from "vitest";
import { piFileName, piFolderName } from "../src/paths.js";

const server = npmStartForFile();

const cloudBytes = (id: string) => cloud(server).bytes(id);
const generations = (id: string) => cloud(server).generation(id);

/** Waits until every file's cloud copy equals its complete lines. */
async function expectBackedUp(files: { path: string; id: string }[], timeoutMs = 60_000) {
  const failure = await eventually(async () => {
    for (const { path, id } of files) {
      const local = completeBytes(path);
      const stored = await cloudBytes(id);
      if (!stored) return `${id}: not in the cloud`;
      if (!stored.equals(local)) return `${id}: cloud ${stored.length} bytes, local ${local.length}`;
    }
    return undefined;
  }, timeoutMs);
  expect(failure).toBeUndefined();
}

describe("pisync watch, end to end", () => {
  it("pi writes, the watcher is SIGKILLed and restarted, requests fail: nothing lost, nothing twice", async () => {
    let failureRate = 0.2;
    const proxy = await faultyProxy(server.url, () => failureRate);
    const m = machine(proxy.url, server.token);
    try {
      let watcher = m.watch();
      const sessions = Array.from({ length: 4 }, (_, i) => {
        const cwd = `/home/dev/project-${i}`;
        return SessionManager.create(cwd, join(m.sessionsRoot, piFolderName(cwd)));
      });
      let kills = 0;
      for (let round = 0; round < 30; round++) {
        for (const [i, sm] of sessions.entries()) {
          sm.appendMessage({ role: "user", content: `round ${round} of session ${i}`, timestamp: Date.now() });
          sm.appendMessage(assistantMessage(`answer ${round}`.repeat(1 + (round % 5) * 40)));
          if (round % 7 === 3) sm.appendLabelChange(sm.getLeafId() as string, `mark ${round}`);
        }
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 60));
        if (round % 6 === 5 || Math.random() < 0.15) {
          watcher.child.kill("SIGKILL");
          await new Promise((r) => watcher.child.once("exit", r));
          kills++;
          watcher = m.watch();
        }
      }
      // On a busy machine a watcher restarted this often may be killed before it sends anything,
      // and the last one may sync in a few requests that all pass: pi keeps writing until some
      // request has failed, so the run always proves what it claims.
      const failed = await eventually(async () => {
        if (proxy.failures() > 0) return undefined;
        for (const sm of sessions) sm.appendMessage(assistantMessage("one more answer"));
        await new Promise((r) => setTimeout(r, 300));
        return `no request has failed yet (${proxy.requests()} sent); the watcher says: ${watcher.log().slice(-2000)}`;
      }, 60_000);
      expect(failed).toBeUndefined();
      failureRate = 0;
      const files = sessions.map((sm) => ({ path: sm.getSessionFile() as string, id: sm.getSessionId() }));
      await expectBackedUp(files);
      for (const { id } of files) expect(await generations(id)).toBe(1);
      expect(proxy.failures()).toBeGreaterThan(0);
      expect(kills).toBeGreaterThanOrEqual(5);
      watcher.child.kill("SIGTERM");
    } finally {
      await proxy.close();
      await m.cleanup();
    }
  }, 180_000);

  it("a v2 file pi migrates in place, and a file truncated and rewritten, become new generations", async () => {
    const m = machine(server.url, server.token);
    try {
      const watcher = m.watch();
      const folder = join(m.sessionsRoot, piFolderName("/home/dev/legacy"));
      mkdirSync(folder, { recursive: true });
      const v2 = readFileSync(join(inRepoCorpus, "edge/v2-hookmessage.jsonl"))
        .toString()
        .replaceAll("edge-v2", "e2e-v2");
      const v2Path = join(folder, piFileName("2025-06-01T12:00:00.000Z", "e2e-v2"));
      writeFileSync(v2Path, v2);
      await expectBackedUp([{ path: v2Path, id: "e2e-v2" }]);
      // pi migrates v2 → v3 on open and rewrites the file in place.
      SessionManager.open(v2Path);
      expect(readFileSync(v2Path, "utf8")).not.toBe(v2);
      await expectBackedUp([{ path: v2Path, id: "e2e-v2" }]);
      expect(await generations("e2e-v2")).toBe(2);
      const first = await fetch(`${server.url}/v1/sessions/e2e-v2/raw?generation=1`, {
        headers: { Authorization: `Bearer ${server.token}` },
      });
      expect(await first.text()).toBe(v2);

      // Truncated, then written again with other lines.
      const sm = SessionManager.create("/home/dev/rewrite", join(m.sessionsRoot, piFolderName("/home/dev/rewrite")));
      sm.appendMessage({ role: "user", content: "first version", timestamp: 1 });
      sm.appendMessage(assistantMessage("long answer ".repeat(200)));
      const path = sm.getSessionFile() as string;
      await expectBackedUp([{ path, id: sm.getSessionId() }]);
      const header = readFileSync(path, "utf8").split("\n")[0];
      truncateSync(path, 0);
      appendFileSync(
        path,
        `${header}\n${JSON.stringify({ type: "message", id: "r0000001", parentId: null, timestamp: new Date().toISOString(), message: { role: "user", content: "rewritten", timestamp: 2 } })}\n`,
      );
      await expectBackedUp([{ path, id: sm.getSessionId() }]);
      expect(await generations(sm.getSessionId())).toBe(2);
      watcher.child.kill("SIGTERM");
    } finally {
      await m.cleanup();
    }
  }, 120_000);

  it("a 20 MB single line, and 300 files appearing at once", async () => {
    const m = machine(server.url, server.token);
    try {
      const watcher = m.watch();
      const sm = SessionManager.create("/home/dev/images", join(m.sessionsRoot, piFolderName("/home/dev/images")));
      sm.appendMessage({ role: "user", content: "a picture", timestamp: 1 });
      sm.appendMessage({
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "screenshot",
        content: [{ type: "image", data: "A".repeat(20 * 1024 * 1024), mimeType: "image/png" }],
        isError: false,
        timestamp: 2,
      });
      sm.appendMessage(assistantMessage("nice"));
      const big = { path: sm.getSessionFile() as string, id: sm.getSessionId() };

      const many: { path: string; id: string }[] = [];
      const folder = join(m.sessionsRoot, piFolderName("/home/dev/many"));
      mkdirSync(folder, { recursive: true });
      for (let i = 0; i < 300; i++) {
        const id = `many-${i}`;
        const path = join(folder, piFileName(new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), id));
        writeFileSync(
          path,
          `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/dev/many" })}\n` +
            `${JSON.stringify({ type: "message", id: "a0000001", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `file ${i}`, timestamp: 1 } })}\n`,
        );
        many.push({ path, id });
      }
      await expectBackedUp([big, ...many], 120_000);
      watcher.child.kill("SIGTERM");
    } finally {
      await m.cleanup();
    }
  }, 180_000);

  it("pull reproduces a session byte for byte where pi looks, and pi lists it; watch continues it", async () => {
    const a = machine(server.url, server.token);
    const b = machine(server.url, server.token);
    try {
      const sm = SessionManager.create("/home/alice/app", join(a.sessionsRoot, piFolderName("/home/alice/app")));
      sm.appendMessage({ role: "user", content: "move me", timestamp: 1 });
      sm.appendMessage(assistantMessage("ok"));
      const path = sm.getSessionFile() as string;
      expect(a.run(["push"]).code).toBe(0);

      const pulled = b.run(["pull", sm.getSessionId(), "--cwd", "/Users/alice/app"]);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stderr).toContain("cwd remapped: /home/alice/app → /Users/alice/app");
      const target = pulled.stdout.trim();
      expect(target.startsWith(join(b.sessionsRoot, piFolderName("/Users/alice/app")))).toBe(true);
      expect(readFileSync(target).equals(readFileSync(path))).toBe(true);
      const listed = await SessionManager.list(
        "/Users/alice/app",
        join(b.sessionsRoot, piFolderName("/Users/alice/app")),
      );
      expect(listed.map((s) => s.id)).toContain(sm.getSessionId());

      // Pulling again is fine; a different file at the target is never overwritten.
      expect(b.run(["pull", sm.getSessionId(), "--cwd", "/Users/alice/app"]).code).toBe(0);
      appendFileSync(target, "{}\n");
      const refused = b.run(["pull", sm.getSessionId(), "--cwd", "/Users/alice/app"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("not overwritten");
      truncateSync(target, readFileSync(path).length);

      // Continued on machine B: watch sends only the new lines (no new generation).
      const continued = SessionManager.open(target);
      continued.appendMessage({ role: "user", content: "continued on B", timestamp: 3 });
      continued.appendMessage(assistantMessage("still here"));
      expect(b.run(["push"]).code).toBe(0);
      expect((await cloudBytes(sm.getSessionId()))?.equals(completeBytes(target))).toBe(true);
      expect(await generations(sm.getSessionId())).toBe(1);
      expect(b.run(["pull", "../etc"]).code).toBe(2);
      expect(b.run(["pull", "no-such-session"]).code).toBe(4);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 120_000);

  it("share, shares, pull a link as a new session (pi opens it; its usage is not counted again), unshare", async () => {
    const a = machine(server.url, server.token);
    const b = machine(server.url, server.token);
    try {
      const sm = SessionManager.create("/home/alice/site", join(a.sessionsRoot, piFolderName("/home/alice/site")));
      sm.appendMessage({ role: "user", content: "share me", timestamp: 1 });
      sm.appendMessage(assistantMessage("shared answer", { model: "shared-model", usage: usage(1000, 1.5, 10) }));
      const shared = a.run(["share", sm.getSessionFile() as string, "--expires", "1h"]);
      expect(shared.code, shared.stderr).toBe(0);
      const link = shared.stdout.trim();
      expect(link).toMatch(/\/s\/[A-Za-z0-9_-]{22}\.k1\.[A-Za-z0-9_-]+$/);
      expect((await fetch(link)).status).toBe(200);
      const list = JSON.parse(a.run(["shares", "--json"]).stdout) as { shares: { id: string; url: string }[] };
      const entry = list.shares.find((s) => s.url === link);
      expect(entry).toBeDefined();

      const pulled = b.run(["pull", link, "--cwd", "/home/bob/site"]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const target = pulled.stdout.trim();
      const [header, ...rest] = readFileSync(target, "utf8").split("\n");
      // The fork names the share by its id: the link (a read credential) is not kept.
      const shareId = (/\/s\/([A-Za-z0-9_-]{22})\./.exec(link) as RegExpExecArray)[1];
      // It says how many lines came with it: their usage is the author's, not the importer's.
      expect(JSON.parse(header)).toMatchObject({
        type: "session",
        parentSession: `pisync-share:${shareId}`,
        pisyncImported: rest.filter(Boolean).length,
      });
      expect(header).not.toContain(link.split("/s/")[1]);
      expect(JSON.parse(header).id).not.toBe(sm.getSessionId());
      expect(rest.join("\n")).toBe(
        readFileSync(sm.getSessionFile() as string, "utf8")
          .split("\n")
          .slice(1)
          .join("\n"),
      );
      const listed = await SessionManager.list("/home/bob/site", join(b.sessionsRoot, piFolderName("/home/bob/site")));
      expect(listed).toHaveLength(1);
      // pi (0.73.1 here, 1.6.0 as the oracle) opens the fork as the conversation it was.
      const original = readFileSync(sm.getSessionFile() as string, "utf8");
      expect(SessionManager.open(target).buildSessionContext()).toEqual(sm.buildSessionContext());
      const [forkContexts, originalContexts] = piContexts([{ text: readFileSync(target, "utf8") }, { text: original }]);
      expect(forkContexts).toEqual(originalContexts);
      // Pushed, the fork's imported turn is not counted again (same user here: it would double).
      expect(b.run(["push"]).code).toBe(0);
      expect(await cloudBytes(JSON.parse(header).id)).toBeDefined();
      const report = JSON.parse(b.run(["insights", "--json"]).stdout) as {
        byModel: { key: string; cost: number; turns: number }[];
      };
      expect(report.byModel.find((m) => m.key === "anthropic/shared-model")).toMatchObject({ cost: 1.5, turns: 1 });

      expect(a.run(["unshare", entry?.id as string]).code).toBe(0);
      expect((await fetch(link)).status).toBe(410);
      expect(b.run(["pull", link]).code).toBe(4);
      expect(a.run(["share", "no-such-session"]).code).toBe(4);
      expect(a.run(["share", sm.getSessionId(), "--expires", "soon"]).code).toBe(2);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 120_000);

  it("--no-merge: two machines continue one session: nothing is overwritten, each copy becomes a generation", async () => {
    const a = machine(server.url, server.token);
    const b = machine(server.url, server.token);
    const raw = async (id: string, generation?: number) => {
      const url = `${server.url}/v1/sessions/${id}/raw${generation ? `?generation=${generation}` : ""}`;
      const get = () => fetch(url, { headers: { Authorization: `Bearer ${server.token}` } });
      // The CLI runs synchronously between reads, longer than the server keeps an idle
      // connection: a reused socket may already be closed, so the read is tried once more.
      const r = await get().catch(get);
      return Buffer.from(await r.arrayBuffer());
    };
    try {
      const sm = SessionManager.create("/home/dev/two", join(a.sessionsRoot, piFolderName("/home/dev/two")));
      sm.appendMessage({ role: "user", content: "started on A", timestamp: 1 });
      sm.appendMessage(assistantMessage("ok"));
      const id = sm.getSessionId();
      expect(a.run(["push", "--no-merge"]).code).toBe(0);
      const pulled = b.run(["pull", id]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const onB = SessionManager.open(pulled.stdout.trim());

      sm.appendMessage({ role: "user", content: "continued on A", timestamp: 2 });
      onB.appendMessage({ role: "user", content: "continued on B", timestamp: 3 });
      expect(a.run(["push", "--no-merge"]).code).toBe(0);
      expect(b.run(["push", "--no-merge"]).code).toBe(0);
      // B's copy no longer continues the cloud's: it became generation 2; A's stays generation 1.
      expect(await generations(id)).toBe(2);
      expect((await raw(id, 1)).equals(completeBytes(sm.getSessionFile() as string))).toBe(true);
      expect((await raw(id, 2)).equals(completeBytes(onB.getSessionFile() as string))).toBe(true);
      const status = JSON.parse(b.run(["status", "--json"]).stdout) as {
        files: { session: string; diverged: boolean }[];
      };
      expect(status.files.find((f) => f.session === id)?.diverged).toBe(true);

      // A writes on: its copy becomes generation 3; B's stays readable as generation 2.
      sm.appendMessage(assistantMessage("more on A"));
      expect(a.run(["push", "--no-merge"]).code).toBe(0);
      expect(await generations(id)).toBe(3);
      expect((await raw(id)).equals(completeBytes(sm.getSessionFile() as string))).toBe(true);
      expect((await raw(id, 2)).equals(completeBytes(onB.getSessionFile() as string))).toBe(true);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 120_000);

  it("oh-my-pi's image blobs: uploaded once by hash, brought back by pull", async () => {
    const a = machine(server.url, server.token);
    const b = machine(server.url, server.token);
    try {
      const image = Buffer.from(`fake png ${Date.now()}`);
      const hash = createHash("sha256").update(image).digest("hex");
      const omp = join(a.home, ".omp", "agent");
      mkdirSync(join(omp, "blobs"), { recursive: true });
      writeFileSync(join(omp, "blobs", hash), image);
      const folder = join(omp, "sessions", piFolderName("/home/dev/omp"));
      mkdirSync(folder, { recursive: true });
      const files = ["omp-1", "omp-2"].map((id) => {
        const path = join(folder, piFileName("2026-01-01T00:00:00.000Z", id));
        writeFileSync(
          path,
          `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/dev/omp" })}\n` +
            `${JSON.stringify({ type: "message", id: "i1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" }], timestamp: 1 } })}\n`,
        );
        return { path, id };
      });
      const pushed = a.run(["push", "--json"]);
      expect(pushed.code, pushed.stderr).toBe(0);
      // Two sessions name the blob; it went up once.
      expect(pushed.stderr.split("\n").filter((l) => l.includes('"event":"blob"'))).toHaveLength(1);
      await expectBackedUp(files);

      const bRoot = join(b.home, ".omp", "agent", "sessions");
      const pulled = b.run(["pull", "omp-1", "--root", bRoot]);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(readFileSync(join(b.home, ".omp", "agent", "blobs", hash)).equals(image)).toBe(true);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  }, 120_000);
});
