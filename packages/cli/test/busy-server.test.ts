/**
 * The CLI against a busy server: a proxy that answers some requests 429 (some 503 and 507),
 * with `Retry-After` as seconds, as a date, or missing, and refuses again any request that comes
 * back sooner than it said. A first backup (`push`; 400 files here, 4,000 in
 * `scripts/push-busy.ts`), the watcher as pi writes, and pulls: each ends with every byte where
 * it belongs and never came back early.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assistantMessage, entry, line, sessionHeader, userMessage } from "@pisync/testing";
import { busyResponse, pushThroughBusyServer } from "@pisync/testing/busy-push";
import { cloud, eventually, machine, npmStartForFile, throttlingProxy } from "@pisync/testing/cli";
import { expect, it } from "vitest";

const server = npmStartForFile();

it("push of 400 files waits out 429, 503 and 507 as asked: exit 0, every file sent, bytes exact", async () => {
  const result = await pushThroughBusyServer(server, 400);
  expect(result.stderr).not.toContain('"event":"skipped"');
  expect(result.code, result.stderr.slice(-2000)).toBe(0);
  expect(result.summary).toMatchObject({ files: 400, failed: 0 });
  expect(result.mismatched).toEqual([]);
  // One request in five is refused: at least one per five files (a push asks a server it has not
  // confirmed from the session list, so each file is about one request: its append).
  expect(result.throttled).toBeGreaterThanOrEqual(400 / 5);
  // Never sooner than the server said, and the waits of a second or more were announced.
  expect(result.early).toBe(0);
  expect(result.waits).toBeGreaterThanOrEqual(5);
}, 300_000);

/** A small session's lines: its header, then `turns` questions and answers. */
function sessionLines(id: string, turns: number, from = 0): string[] {
  const lines = from === 0 ? [line(sessionHeader(id, "/home/dev/busy"))] : [];
  for (let t = from; t < from + turns; t++) {
    lines.push(line(entry(`q${t}`, t === 0 ? null : `a${t - 1}`, 2 * t + 1, userMessage(`question ${t}`))));
    lines.push(line(entry(`a${t}`, `q${t}`, 2 * t + 2, assistantMessage(`answer ${t} `.repeat(1 + (t % 9))))));
  }
  return lines;
}

it("watch waits out a busy server as asked and backs up every line, byte for byte", async () => {
  // The watcher sends for several sessions at once: one may be on its way when another's busy answer arrives.
  const proxy = await throttlingProxy(server.url, 4, busyResponse, 250);
  const m = machine(proxy.url, server.token);
  try {
    const watcher = m.watch();
    const folder = join(m.sessionsRoot, "--home-dev-busy--");
    mkdirSync(folder, { recursive: true });
    const files = Array.from({ length: 6 }, (_, i) => {
      const id = `watch-busy-${i}-${Math.random().toString(36).slice(2, 8)}`;
      return { id, path: join(folder, `2026-01-01T00-00-00-000Z_${id}.jsonl`) };
    });
    for (const { id, path } of files) writeFileSync(path, sessionLines(id, 1).join(""));
    // pi appends a turn at a time, while the watcher is being held back.
    for (let round = 1; round < 12; round++) {
      for (const { id, path } of files) appendFileSync(path, sessionLines(id, 1, round).join(""));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const stored = cloud(server);
    const behind = await eventually(async () => {
      for (const { id, path } of files) {
        if (!(await stored.bytes(id))?.equals(readFileSync(path))) return `${id} is not backed up yet`;
      }
      return undefined;
    }, 120_000);
    expect(behind, watcher.log().slice(-2000)).toBeUndefined();
    expect(proxy.throttled()).toBeGreaterThan(5);
    expect(proxy.early()).toBe(0);
    watcher.child.kill("SIGTERM");
  } finally {
    await proxy.close();
    await m.cleanup();
  }
}, 180_000);

it("pull waits out a busy server as asked: every session where asked, byte for byte", async () => {
  const writer = machine(server.url, server.token);
  const proxy = await throttlingProxy(server.url, 3, busyResponse);
  const reader = machine(proxy.url, server.token);
  try {
    const folder = join(writer.sessionsRoot, "--home-dev-busy--");
    mkdirSync(folder, { recursive: true });
    const ids = Array.from({ length: 12 }, (_, i) => `pull-busy-${i}-${Math.random().toString(36).slice(2, 8)}`);
    for (const [i, id] of ids.entries()) {
      writeFileSync(join(folder, `2026-01-01T00-00-00-000Z_${id}.jsonl`), sessionLines(id, 1 + i * 3).join(""));
    }
    expect((await writer.start(["push"])).code).toBe(0);
    const stored = cloud(server);
    for (const id of ids) {
      const out = join(reader.home, `${id}.jsonl`);
      const run = await reader.start(["pull", id, "--out", out]);
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(readFileSync(out).equals((await stored.bytes(id)) as Buffer)).toBe(true);
    }
    expect(proxy.throttled()).toBeGreaterThan(5);
    expect(proxy.early()).toBe(0);
  } finally {
    await proxy.close();
    await reader.cleanup();
    await writer.cleanup();
  }
}, 180_000);
