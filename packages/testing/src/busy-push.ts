/**
 * A first backup against a busy server: `pisync push` of many small session files through a
 * proxy that answers one request in five as a busy server does (429 mostly, some 503 and 507;
 * `Retry-After` of 0 or 1 s, one as an HTTP date, one missing), then every cloud copy compared
 * with its file. The test runs it at a few hundred files; `scripts/push-busy.ts` at 4,000.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BusyResponse, cloud, machine, type Server, throttlingProxy } from "./cli.js";
import { assistantMessage, entry, line, sessionHeader, userMessage } from "./sessions.js";

/** The busy answers, in turn: mostly "come back now", every 20th "in a second", one dated, a few without a time. */
export function busyResponse(n: number): BusyResponse {
  if (n === 10) return { status: 429, retryAfter: new Date(Date.now() + 2000).toUTCString() };
  if (n % 20 === 19) return { status: 429, retryAfter: "1" };
  if (n === 30) return { status: 503 };
  if (n % 7 === 3) return { status: 503, retryAfter: "0" };
  if (n % 11 === 5) return { status: 507, retryAfter: "0" };
  return { status: 429, retryAfter: "0" };
}

/** What a busy push did. */
export interface BusyPushResult {
  code: number | null;
  /** `{ files, bytes, failed }` as push printed it. */
  summary: { files: number; bytes: number; failed: number } | undefined;
  /** Ids whose cloud copy is missing or differs from the file. */
  mismatched: string[];
  /** Requests the proxy answered busy, and the ones that came back sooner than asked. */
  throttled: number;
  early: number;
  requests: number;
  /** The announced waits push logged (`waiting` events). */
  waits: number;
  seconds: number;
  stderr: string;
}

/** Pushes `count` small sessions through a throttling proxy to `server`; compares every copy. */
export async function pushThroughBusyServer(server: Server, count: number): Promise<BusyPushResult> {
  const proxy = await throttlingProxy(server.url, 5, busyResponse);
  const m = machine(proxy.url, server.token);
  try {
    const folder = join(m.sessionsRoot, "--home-dev-busy--");
    mkdirSync(folder, { recursive: true });
    const files = Array.from({ length: count }, (_, i) => {
      const id = `busy-${String(i).padStart(5, "0")}-${Math.random().toString(36).slice(2, 8)}`;
      const bytes = Buffer.from(
        [
          sessionHeader(id, "/home/dev/busy"),
          entry("a1", null, 1, userMessage(`question ${i}`)),
          entry("a2", "a1", 2, assistantMessage(`answer ${i} `.repeat(1 + (i % 7)))),
        ]
          .map(line)
          .join(""),
      );
      writeFileSync(join(folder, `2026-01-01T00-00-00-000Z_${id}.jsonl`), bytes);
      return { id, bytes };
    });
    const started = Date.now();
    const run = await m.start(["push", "--json"]);
    const seconds = (Date.now() - started) / 1000;
    const stored = cloud(server);
    const mismatched: string[] = [];
    for (const { id, bytes } of files) {
      const copy = await stored.bytes(id);
      if (!copy?.equals(bytes)) mismatched.push(id);
    }
    let summary: BusyPushResult["summary"];
    try {
      summary = JSON.parse(run.stdout);
    } catch {}
    return {
      code: run.code,
      summary,
      mismatched,
      throttled: proxy.throttled(),
      early: proxy.early(),
      requests: proxy.requests(),
      waits: run.stderr.split("\n").filter((l) => l.includes('"event":"waiting"')).length,
      seconds,
      stderr: run.stderr,
    };
  } finally {
    await proxy.close();
    await m.cleanup();
  }
}
