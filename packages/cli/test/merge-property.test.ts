/**
 * A property over random interleavings on two machines (real `npm start`, real watchers, pi's
 * SessionManager writing): appends on either machine, SIGKILLs and restarts of either watcher,
 * requests failing through a faulty proxy (some after the server committed). At the end every
 * line pi wrote is present exactly once in the cloud and in both files (beside the merge's
 * resume markers, the same in every copy), no line is torn, and no byte a file ever held was
 * rewritten (each earlier snapshot is a prefix of the final file).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { assistantMessage } from "@pisync/testing";
import { cloud, eventually, faultyProxy, machine, npmStartForFile } from "@pisync/testing/cli";
import fc from "fast-check";
import { expect, it } from "vitest";
import { RESUME_MARKER } from "../src/merge.js";
import { piFolderName } from "../src/paths.js";

const server = npmStartForFile();

type Action =
  | { kind: "append"; on: 0 | 1; entries: number }
  | { kind: "kill"; on: 0 | 1 }
  | { kind: "pause"; ms: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      on: fc.constantFrom(0 as const, 1 as const),
      entries: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("kill" as const), on: fc.constantFrom(0 as const, 1 as const) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("pause" as const), ms: fc.integer({ min: 0, max: 400 }) }) },
);

const linesOf = (bytes: Buffer) => bytes.toString("utf8").split("\n").slice(0, -1);

it("random appends, watcher SIGKILLs and failing requests: every line once everywhere, nothing rewritten", async () => {
  let failureRate = 0;
  const proxy = await faultyProxy(server.url, () => failureRate);
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 8, maxLength: 16 }), async (actions) => {
        // The session starts on one machine and is pulled on the other with every request passing.
        failureRate = 0;
        const machines = [machine(proxy.url, server.token), machine(proxy.url, server.token)];
        try {
          const cwd = `/home/dev/property-${Math.random().toString(36).slice(2)}`;
          const first = SessionManager.create(cwd, join(machines[0].sessionsRoot, piFolderName(cwd)));
          first.appendMessage({ role: "user", content: "start", timestamp: 1 });
          first.appendMessage(assistantMessage("ok"));
          const id = first.getSessionId();
          // Asynchronously: the proxy runs in this process.
          expect((await machines[0].start(["push"])).code).toBe(0);
          const pulled = await machines[1].start(["pull", id]);
          expect(pulled.code, pulled.stderr).toBe(0);
          const writers = [first, SessionManager.open(pulled.stdout.trim())];
          const files = writers.map((w) => w.getSessionFile() as string);
          failureRate = 0.2;
          const watchers = machines.map((m) => m.watch(["--poll-cloud", "0.3"]));
          const snapshots: Buffer[][] = [[], []];
          let n = 0;
          for (const a of actions) {
            if (a.kind === "append") {
              for (let i = 0; i < a.entries; i++) {
                writers[a.on].appendMessage({ role: "user", content: `entry ${n++} on ${a.on}`, timestamp: n });
                writers[a.on].appendMessage(assistantMessage(`reply ${n} ${"x".repeat(n * 7)}`));
              }
            } else if (a.kind === "kill") {
              watchers[a.on].child.kill("SIGKILL");
              await new Promise((r) => watchers[a.on].child.once("exit", r));
              watchers[a.on] = machines[a.on].watch(["--poll-cloud", "0.3"]);
            } else await new Promise((r) => setTimeout(r, a.ms));
            for (const [i, f] of files.entries()) snapshots[i].push(readFileSync(f));
          }
          // The watchers may not have sent anything yet: pi writes on until some request has failed.
          const failuresBefore = proxy.failures();
          const faulted = await eventually(async () => {
            if (proxy.failures() > failuresBefore) return undefined;
            const on = n % 2;
            writers[on].appendMessage({ role: "user", content: `entry ${n++} on ${on}`, timestamp: n });
            await new Promise((r) => setTimeout(r, 300));
            for (const [i, f] of files.entries()) snapshots[i].push(readFileSync(f));
            return `no request failed (${proxy.requests()} sent)`;
          }, 60_000);
          expect(faulted).toBeUndefined();
          failureRate = 0;
          // Every entry pi wrote on either machine (its own entries, in memory).
          const written = new Set(writers.flatMap((w) => w.getEntries().map((e) => e.id)));
          const failure = await eventually(async () => {
            const copies = [(await cloud(server).bytes(id)) ?? Buffer.alloc(0), ...files.map((f) => readFileSync(f))];
            const markers = new Set<number>();
            for (const [c, bytes] of copies.entries()) {
              if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) return `copy ${c}: a partial line`;
              const entries = linesOf(bytes)
                .slice(1)
                .map((l) => JSON.parse(l) as { id: string; customType?: string });
              const all = entries.map((e) => e.id);
              if (new Set(all).size !== all.length) return `copy ${c}: an entry twice`;
              // Besides pi's entries, only the merge's resume markers, as many in every copy.
              const ids = entries.filter((e) => e.customType !== RESUME_MARKER).map((e) => e.id);
              markers.add(all.length - ids.length);
              if (ids.length !== written.size || ids.some((x) => !written.has(x))) {
                return `copy ${c}: ${ids.length} entries of ${written.size}`;
              }
            }
            return markers.size === 1 ? undefined : "the copies hold different resume markers";
          }, 60_000);
          expect(failure).toBeUndefined();
          expect(await cloud(server).generation(id)).toBe(1);
          // Each line's bytes are the same in every copy.
          const cloudLines = new Set(linesOf((await cloud(server).bytes(id)) as Buffer));
          for (const f of files) for (const l of linesOf(readFileSync(f))) expect(cloudLines.has(l)).toBe(true);
          // A local file only ever grew: every earlier snapshot is a prefix of the final file.
          for (const [i, f] of files.entries()) {
            const final = readFileSync(f);
            for (const s of snapshots[i]) expect(final.subarray(0, s.length).equals(s)).toBe(true);
          }
        } finally {
          for (const m of machines) await m.cleanup();
        }
      }),
      { numRuns: 3, endOnFailure: true },
    );
  } finally {
    await proxy.close();
  }
}, 600_000);
