/**
 * A new machine restored in one command, and a session erased for good, against `npm start` on
 * both stores: `pull --all` of 300 sessions into a fresh home under a folder map, killed
 * (SIGKILL) midway and run again (no partial file, no duplicate, byte for byte, a third run has
 * nothing to do), with its filters; `rm` with every trace checked (generations, search hits,
 * insights usage, share links), another account's id "not found"; the habits (id prefixes,
 * unshare by link, did you mean, Ctrl-C during push).
 */
import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Tokens } from "@pisync/core";
import { assistantMessage, usage } from "@pisync/testing";
import {
  buildCli,
  cliPath,
  eventually,
  hookedProxy,
  machine,
  type StoreServer,
  startServerOn,
  storesBeside,
} from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piFileName, piFolderName } from "../src/paths.js";

/** How many sessions `pull --all` restores: hundreds, as a library moved to a new machine is. */
const SESSIONS_ON = { embedded: 300, aws: 300 } as const;
/** Of those, how many are old (outside `--since 30d`); every tenth is under another folder. */
const OLD_SESSIONS = 10;

interface Written {
  id: string;
  path: string;
  cwd: string;
}

/** Writes a session where pi would: a header, a user message and an assistant reply with usage, at `at`. */
function writeSession(root: string, id: string, cwd: string, at: Date, words = "hello", cost = 0.25): Written {
  const folder = join(root, piFolderName(cwd));
  mkdirSync(folder, { recursive: true });
  const stamp = at.toISOString();
  const path = join(folder, piFileName(stamp, id));
  const lines = [
    { type: "session", version: 3, id, timestamp: stamp, cwd },
    {
      type: "message",
      id: "u0000001",
      parentId: null,
      timestamp: stamp,
      message: { role: "user", content: `${words} from ${id}`, timestamp: at.getTime() },
    },
    {
      type: "message",
      id: "a0000001",
      parentId: "u0000001",
      timestamp: stamp,
      message: assistantMessage(`a reply about ${words}`, { timestamp: at.getTime(), usage: usage(1000, cost, 10) }),
    },
  ];
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return { id, path, cwd };
}

/** Every session file under a root, by session id (a duplicate shows as two paths). */
function filesById(root: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".jsonl")) {
        const id = JSON.parse(readFileSync(path, "utf8").split("\n")[0]).id as string;
        found.set(id, [...(found.get(id) ?? []), path]);
      }
    }
  };
  walk(root);
  return found;
}

/** Names of files under a root that are not session files (a partial write's leftovers). */
function strayFiles(root: string): string[] {
  const stray: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (!entry.name.endsWith(".jsonl")) stray.push(entry.name);
    }
  };
  walk(root);
  return stray;
}

for (const store of ["embedded", "aws"] as const) {
  const SESSIONS = SESSIONS_ON[store];
  describe(`restore and erase, npm start on ${store}`, () => {
    let running: StoreServer;
    beforeAll(async () => {
      buildCli();
      running = await startServerOn(store);
    }, 180_000);
    afterAll(async () => {
      await running?.server.stop();
      if (running) rmSync(running.dataDir, { recursive: true, force: true });
    });

    it(`pull --all restores ${SESSIONS} sessions under a folder map, killed midway and run again; filters`, async () => {
      const { server } = running;
      const old = machine(server.url, server.token);
      const fresh = machine(server.url, server.token);
      const proxyDelay = { ms: 0 };
      // Each download waits a little: the kill lands midway through the run.
      const slow = await hookedProxy(server.url, async (req) => {
        if (req.url?.endsWith("/raw")) await new Promise((r) => setTimeout(r, proxyDelay.ms));
      });
      try {
        const recent = new Date(Date.now() - 3600_000);
        const long = new Date("2025-01-15T10:00:00.000Z");
        const written: Written[] = [];
        for (let i = 0; i < SESSIONS; i++) {
          const cwd = i % 10 === 9 ? `/srv/other/p${i}` : `/home/old/src/p${i % 5}`;
          const at = i < SESSIONS - OLD_SESSIONS ? recent : long;
          written.push(writeSession(old.sessionsRoot, `rs-${store}-${i}-${randomUUID()}`, cwd, at));
        }
        const pushed = old.run(["push"]);
        expect(pushed.code, pushed.stderr).toBe(0);

        const args = ["pull", "--all", "--map", "/home/old=/home/new", "--map", "/home/old/src/p1=/srv/p1"];
        proxyDelay.ms = 60;
        const env = { ...fresh.env, PISYNC_ENDPOINT: slow.url };
        const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: "ignore" });
        const killed = await eventually(async () => {
          let count = 0;
          try {
            count = [...filesById(fresh.sessionsRoot).values()].length;
          } catch {}
          return count >= SESSIONS / 4 ? undefined : `${count} pulled so far`;
        }, 60_000);
        child.kill("SIGKILL");
        await new Promise((r) => child.once("exit", r));
        expect(killed).toBeUndefined();
        const atKill = filesById(fresh.sessionsRoot);
        const partway = atKill.size;
        expect(partway).toBeLessThan(SESSIONS);
        // Killed mid-run: every session file pi could open is whole (a write in flight is aside, not here).
        const byId = new Map(written.map((w) => [w.id, w]));
        for (const [id, paths] of atKill) {
          expect(paths, id).toHaveLength(1);
          expect(readFileSync(paths[0]), id).toEqual(readFileSync(byId.get(id)?.path ?? ""));
        }

        // Run again, straight to the server this time (what was confirmed is the server's, not the address's).
        const rerun = fresh.run(args);
        expect(rerun.code, rerun.stderr).toBe(0);
        expect(rerun.stderr).toMatch(new RegExp(`pulled ${SESSIONS - partway} sessions?; ${partway} already here`));
        const here = filesById(fresh.sessionsRoot);
        expect(here.size).toBe(SESSIONS);
        for (const w of written) {
          const paths = here.get(w.id) ?? [];
          expect(paths, w.id).toHaveLength(1);
          // Byte for byte; filed under the mapped folder (the longest map wins), the header's cwd kept.
          expect(readFileSync(paths[0])).toEqual(readFileSync(w.path));
          const mapped = w.cwd.startsWith("/home/old/src/p1")
            ? w.cwd.replace("/home/old/src/p1", "/srv/p1")
            : w.cwd.replace("/home/old", "/home/new");
          expect(paths[0]).toContain(`/${piFolderName(mapped)}/`);
        }
        expect(strayFiles(fresh.sessionsRoot)).toEqual([]);
        const third = fresh.run(args);
        expect(third.code, third.stderr).toBe(0);
        expect(third.stderr).toContain(`nothing to do: all ${SESSIONS} sessions are here`);

        // Filters, each into a home of its own.
        const filtered = async (extra: string[]) => {
          const m = machine(server.url, server.token);
          try {
            const r = m.run(["pull", "--all", "--json", ...extra]);
            expect(r.code, r.stderr).toBe(0);
            return { summary: JSON.parse(r.stdout), ids: [...filesById(m.sessionsRoot).keys()].sort() };
          } finally {
            await m.cleanup();
          }
        };
        const other = written.filter((w) => w.cwd.startsWith("/srv/other")).map((w) => w.id);
        expect((await filtered(["--cwd", "/srv/other"])).ids).toEqual([...other].sort());
        const older = written.slice(SESSIONS - OLD_SESSIONS).map((w) => w.id);
        const since = await filtered(["--since", "30d"]);
        expect(since.ids).toHaveLength(SESSIONS - OLD_SESSIONS);
        expect(since.ids.some((id) => older.includes(id))).toBe(false);
        // A device of its own name wrote two sessions: --machine brings just those.
        const made = await fetch(`${server.url}/v1/tokens`, {
          method: "POST",
          headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ name: "desk" }),
        });
        const desk = machine(server.url, ((await made.json()) as { token: string }).token);
        try {
          const mine = [0, 1].map((i) =>
            writeSession(desk.sessionsRoot, `desk-${store}-${i}-${randomUUID()}`, "/home/desk", recent),
          );
          expect(desk.run(["push"]).code).toBe(0);
          expect((await filtered(["--machine", "desk"])).ids).toEqual(mine.map((w) => w.id).sort());
        } finally {
          await desk.cleanup();
        }
      } finally {
        await slow.close();
        await old.cleanup();
        await fresh.cleanup();
      }
    }, 240_000);

    it("rm erases every trace, with a receipt; asks first; another account's id is not found", async () => {
      const { server } = running;
      const m = machine(server.url, server.token);
      const auth = { Authorization: `Bearer ${server.token}` };
      try {
        const word = `zebracorn${randomUUID().slice(0, 6)}`;
        const id = `erase-${store}-${randomUUID()}`;
        // An image kept as a blob (oh-my-pi's way) that only this session names.
        const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Buffer.from(id)]);
        const hash = createHash("sha256").update(image).digest("hex");
        mkdirSync(join(dirname(m.sessionsRoot), "blobs"), { recursive: true });
        writeFileSync(join(dirname(m.sessionsRoot), "blobs", hash), image);
        const named = `${word} blob:sha256:${hash}`;
        // The costliest session of the day: among insights' top sessions.
        const w = writeSession(m.sessionsRoot, id, "/home/dev/erase", new Date(), named, 99);
        expect(m.run(["push"]).code).toBe(0);
        const blobAt = `${server.url}/v1/blobs/${hash}`;
        expect((await fetch(blobAt, { method: "HEAD", headers: auth })).status).toBe(200);
        // A second generation: the file rewritten here.
        writeSession(m.sessionsRoot, id, "/home/dev/erase", new Date(), `${named} again`, 99);
        expect(m.run(["push"]).code).toBe(0);
        const shared = m.run(["share", id.slice(0, 14)]);
        expect(shared.code, shared.stderr).toBe(0);
        const link = shared.stdout.trim();
        expect((await fetch(link)).status).toBe(200);
        const today = new Date().toISOString().slice(0, 10);
        const insights = async () =>
          (await (await fetch(`${server.url}/v1/insights?from=${today}&to=${today}`, { headers: auth })).json()) as {
            topSessions: { sessionId: string }[];
          };
        const searched = async () =>
          (await (await fetch(`${server.url}/v1/search?q=${word}`, { headers: auth })).json()) as {
            sessions: { id?: string; sessionId?: string }[];
          };
        expect(await eventually(async () => ((await searched()).sessions.length > 0 ? undefined : "not indexed"))).toBe(
          undefined,
        );
        expect((await insights()).topSessions.map((s) => s.sessionId)).toContain(id);

        // Another account: "not found", and nothing deleted.
        const stores = storesBeside(running);
        const bob = (await new Tokens(stores.meta).create("bob", "bob's desk")).token;
        stores.close?.();
        const asBob = m.run(["rm", id, "--yes"], { PISYNC_TOKEN: bob });
        expect(asBob.code, asBob.stderr).toBe(4);
        // No terminal and no --yes: refused, nothing deleted.
        const unasked = m.run(["rm", id]);
        expect(unasked.code).toBe(2);
        expect(unasked.stderr).toContain("needs --yes");
        expect((await fetch(`${server.url}/v1/sessions/${id}`, { method: "HEAD", headers: auth })).status).toBe(200);

        const erased = m.run(["rm", id.slice(0, 16), "--yes", "--json"]);
        expect(erased.code, erased.stderr).toBe(0);
        const [receipt] = JSON.parse(erased.stdout).deleted;
        expect(receipt).toMatchObject({ id, generations: 2 });
        expect(receipt.sharesRevoked).toHaveLength(1);
        expect(receipt.objects).toBeGreaterThan(0);
        expect(receipt.blobs).toBe(1);
        expect((await fetch(blobAt, { method: "HEAD", headers: auth })).status).toBe(404);
        expect(receipt.bytes).toBeGreaterThan(readFileSync(w.path).length);

        for (const path of [`/v1/sessions/${id}`, `/v1/sessions/${id}/generations`, `/v1/sessions/${id}/raw`]) {
          expect((await fetch(`${server.url}${path}`, { headers: auth })).status, path).toBe(404);
        }
        expect([404, 410]).toContain((await fetch(link)).status);
        expect((await insights()).topSessions.map((s) => s.sessionId)).not.toContain(id);
        expect(
          await eventually(async () => ((await searched()).sessions.length === 0 ? undefined : "still found")),
        ).toBeUndefined();
        const again = m.run(["rm", id, "--yes"]);
        expect(again.code).toBe(4);
        // This machine remembers it sent the image; a new session naming it is answered that
        // the server lacks it, and push sends it again.
        writeSession(m.sessionsRoot, `${id}-again`, "/home/dev/erase", new Date(), named);
        const resent = m.run(["push"]);
        expect(resent.code, resent.stderr).toBe(0);
        expect((await fetch(blobAt, { method: "HEAD", headers: auth })).status).toBe(200);
      } finally {
        await m.cleanup();
      }
    }, 120_000);

    it("habits: id prefixes, unshare by its link, did you mean, Ctrl-C during push says how to resume", async () => {
      const { server } = running;
      const m = machine(server.url, server.token);
      try {
        const base = `habit-${store}-${randomUUID().slice(0, 8)}`;
        const a = writeSession(m.sessionsRoot, `${base}-a`, "/home/dev/habits", new Date());
        writeSession(m.sessionsRoot, `${base}-b`, "/home/dev/habits", new Date());
        expect(m.run(["push"]).code).toBe(0);
        const ambiguous = m.run(["generations", base]);
        expect(ambiguous.code).toBe(2);
        expect(ambiguous.stderr).toContain("is ambiguous");
        expect(ambiguous.stderr).toContain(`${base}-a`);
        expect(ambiguous.stderr).toContain(`${base}-b`);
        const unique = m.run(["generations", `${base}-a`.slice(0, base.length + 2)]);
        expect(unique.code, unique.stderr).toBe(0);
        expect(m.run(["generations", "habit"]).code).toBe(4); // under 6 characters: no prefix
        const shared = m.run(["share", a.id]);
        const link = shared.stdout.trim();
        const unshared = m.run(["unshare", link]);
        expect(unshared.code, unshared.stderr).toBe(0);
        expect((await fetch(link)).status).toBe(410);

        const typo = m.run(["pul"]);
        expect(typo.code).toBe(2);
        expect(typo.stderr).toContain("did you mean `pisync pull`?");
        expect(typo.stderr).not.toContain("pisync watch");
        const option = m.run(["ls", "--limt", "3"]);
        expect(option.code).toBe(2);
        expect(option.stderr).toContain("unknown option --limt (did you mean --limit?)");

        const ls = m.run(["ls", "--cwd", "/home/dev/habits", "--limit", "1"]);
        expect(ls.code, ls.stderr).toBe(0);
        expect(ls.stdout.trim().split("\n")).toHaveLength(1);

        // Ctrl-C during push: said how to resume, exit 130; the next push sends the rest.
        for (let i = 0; i < 6; i++) writeSession(m.sessionsRoot, `${base}-c${i}`, "/home/dev/habits", new Date());
        const slow = await hookedProxy(server.url, async () => {
          await new Promise((r) => setTimeout(r, 150));
        });
        try {
          const child = spawn(process.execPath, [cliPath, "push"], {
            env: { ...m.env, PISYNC_ENDPOINT: slow.url },
            stdio: ["ignore", "pipe", "pipe"],
          });
          let stderr = "";
          let interrupted = false;
          child.stderr?.on("data", (chunk) => {
            stderr += chunk;
            if (/sent /.test(stderr) && !interrupted) {
              interrupted = true;
              child.kill("SIGINT");
            }
          });
          const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
          expect(code, stderr).toBe(130);
          expect(stderr).toContain("run `pisync push` again to resume");
        } finally {
          await slow.close();
        }
        const rest = m.run(["push"]);
        expect(rest.code, rest.stderr).toBe(0);
        expect(rest.stderr).toMatch(/sent .* of [1-5] files?/);
      } finally {
        await m.cleanup();
      }
    }, 120_000);
  });
}
