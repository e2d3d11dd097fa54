/**
 * `push` and `status` never call a file stored that the server and account in use do not hold,
 * against `npm start` on both stores: what a machine confirmed is kept per server identity and
 * account, not per address. Logged in as a second account on the same server, and after the
 * server at the same address is started afresh (its data gone, the account name the same),
 * push sends everything the server lacks and status says what is not confirmed.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashToken, Tokens } from "@pisync/core";
import {
  buildCli,
  hookedProxy,
  machine,
  type Server,
  startServerOn,
  storesBeside,
  switchableProxy,
  within,
} from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piFileName, piFolderName } from "../src/paths.js";

/** Writes a small session file where pi would; returns its path. */
function writeSession(root: string, id: string): string {
  const cwd = "/home/dev/truth";
  const folder = join(root, piFolderName(cwd));
  mkdirSync(folder, { recursive: true });
  const path = join(folder, piFileName("2026-02-01T00:00:00.000Z", id));
  const header = { type: "session", version: 3, id, timestamp: "2026-02-01T00:00:00.000Z", cwd };
  const entry = {
    type: "message",
    id: "e0000000",
    parentId: null,
    timestamp: "2026-02-01T00:00:01.000Z",
    message: { role: "user", content: `hello from ${id}`, timestamp: 1 },
  };
  writeFileSync(path, `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
  return path;
}

/** What a server holds of a session for a token: its bytes, or undefined. */
async function held(url: string, token: string, id: string): Promise<Buffer | undefined> {
  const r = await fetch(`${url}/v1/sessions/${id}/raw`, {
    headers: { Authorization: `Bearer ${token}`, "Accept-Encoding": "identity" },
    signal: AbortSignal.timeout(20_000),
  });
  return r.ok ? Buffer.from(await r.arrayBuffer()) : undefined;
}

type Store = "embedded" | "aws";

/**
 * Asks until `done` holds (at most 60 s: a liveness check on a machine loaded by other tests,
 * not a timing one). A question that fails (a read timed out) counts as not yet.
 */
async function waitFor(done: () => Promise<boolean>, why: () => string = () => ""): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await done().catch(() => false))) {
    if (Date.now() > until) throw new Error(`timed out waiting ${why()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

for (const store of ["embedded", "aws"] as Store[]) {
  describe(`the truth about backups, npm start on ${store}`, () => {
    const folders: string[] = [];
    let server: Server | undefined;

    /** `npm start` on fresh data, at `port` when given (the same address as before). */
    const start = async (port?: string) => {
      const running = await startServerOn(store, { port });
      folders.push(running.dataDir);
      server = running.server;
      return running;
    };

    beforeAll(() => buildCli(), 120_000);
    afterAll(async () => {
      await server?.stop();
      for (const f of folders) rmSync(f, { recursive: true, force: true });
    });

    it("another account on the same server, then the server started afresh at the same address: push sends all, status never says stored", async () => {
      const first = await start();
      const m = machine(first.server.url, first.server.token);
      try {
        const ids = Array.from({ length: 4 }, (_, i) => `truth-${store}-${i}-${randomUUID().slice(0, 8)}`);
        const paths = ids.map((id) => writeSession(m.sessionsRoot, id));
        const pushed = m.run(["push"]);
        expect(pushed.code, pushed.stderr).toBe(0);
        expect(pushed.stderr).toContain("of 4 files");
        const again = m.run(["push"]);
        expect(again.stderr).toContain("nothing to send: all 4 files are backed up");

        // A second account on the same server, holding one of the four (sent from another machine).
        const stores = storesBeside(first);
        const bob = (await new Tokens(stores.meta).create("bob", "bob's desk")).token;
        stores.close?.();
        const other = machine(first.server.url, bob);
        try {
          expect(other.run(["push", paths[0]]).code).toBe(0);
        } finally {
          await other.cleanup();
        }
        const asBob = { PISYNC_TOKEN: bob };
        const who = m.run(["whoami", "--json"], asBob);
        expect(who.code, who.stderr).toBe(0);
        expect(JSON.parse(who.stdout)).toMatchObject({ user: "bob", device: { name: "bob's desk" } });
        const status = m.run(["status", "--json"], asBob);
        expect(status.code, status.stderr).toBe(0);
        const files = JSON.parse(status.stdout).files as {
          file: string;
          sync: { state: string };
          cloudBytes: number;
        }[];
        expect(files.map((f) => f.sync.state)).toEqual(["pending", "pending", "pending", "pending"]);
        expect(files.filter((f) => f.cloudBytes > 0)).toHaveLength(1);
        const said = m.run(["status"], asBob);
        expect(said.stderr).toContain("is not the server and account this machine last backed up to");
        expect(said.stdout).toContain("not on this server for this account: pisync push sends it");
        expect(said.stdout).not.toContain("in sync");
        const toBob = m.run(["push"], asBob);
        expect(toBob.code, toBob.stderr).toBe(0);
        expect(toBob.stderr).not.toContain("nothing to send");
        expect(toBob.stderr).toContain("of 3 files");
        for (const [i, id] of ids.entries())
          expect(await held(first.server.url, bob, id)).toEqual(readFileSync(paths[i]));
        expect(m.run(["push"], asBob).stderr).toContain("nothing to send: all 4 files are backed up");

        // The server at the same address, started afresh: its data gone, its account named the same.
        const port = new URL(first.server.url).port;
        await first.server.stop();
        // Unreachable: what this machine last knew, said as such (bob's backup, the last made here).
        const offline = m.run(["status", "--timeout", "2"], asBob);
        expect(offline.code, offline.stderr).toBe(0);
        expect(offline.stderr).toContain("this is what this machine last knew of server srv_");
        expect(offline.stderr).toContain("account bob, not what the server holds now");
        const fresh = await start(port);
        expect(fresh.server.url).toBe(first.server.url);
        const anew = { PISYNC_TOKEN: fresh.server.token };
        const freshStatus = JSON.parse(m.run(["status", "--json"], anew).stdout);
        expect(freshStatus.files.every((f: { confirmed: boolean }) => !f.confirmed)).toBe(true);
        const toFresh = m.run(["push"], anew);
        expect(toFresh.code, toFresh.stderr).toBe(0);
        expect(toFresh.stderr).toContain("is not the server and account this machine last backed up to");
        expect(toFresh.stderr).toContain("of 4 files");
        for (const [i, id] of ids.entries()) {
          expect(await held(fresh.server.url, fresh.server.token, id)).toEqual(readFileSync(paths[i]));
        }
        expect(m.run(["push"], anew).stderr).toContain("nothing to send: all 4 files are backed up");
      } finally {
        await m.cleanup();
      }
    }, 180_000);

    it("a push of many files never confirmed with this account reads the session list once, not a HEAD per file", async () => {
      await server?.stop(); // the server of the test before
      const running = await start();
      const m = machine(running.server.url, running.server.token);
      const stores = storesBeside(running);
      const bob = (await new Tokens(stores.meta).create("bob", "bob's desk")).token;
      stores.close?.();
      const requests: string[] = [];
      const proxy = await hookedProxy(running.server.url, async (req) => {
        requests.push(`${req.method} ${(req.url ?? "").replace(/\?.*$/, "")}`);
      });
      try {
        const ids = Array.from({ length: 40 }, (_, i) => `many-${store}-${i}-${randomUUID().slice(0, 8)}`);
        const paths = ids.map((id) => writeSession(m.sessionsRoot, id));
        expect(m.run(["push"]).code).toBe(0);
        // Bob already holds five of them (sent from another machine): compared, not sent again.
        const other = machine(running.server.url, bob);
        try {
          expect(other.run(["push", ...paths.slice(0, 5)]).code).toBe(0);
        } finally {
          await other.cleanup();
        }
        const toBob = await m.start(["push"], { PISYNC_TOKEN: bob, PISYNC_ENDPOINT: proxy.url });
        expect(toBob.code, toBob.stderr).toBe(0);
        expect(toBob.stderr).toContain("of 35 files");
        const heads = requests.filter((r) => /^HEAD \/v1\/sessions\//.test(r));
        const lists = requests.filter((r) => r === "GET /v1/sessions");
        expect(heads).toEqual([]);
        expect(lists.length).toBeLessThanOrEqual(2); // one page (and a reachability check at most)
        for (const [i, id] of ids.entries())
          expect(await held(running.server.url, bob, id)).toEqual(readFileSync(paths[i]));
        expect(m.run(["push"], { PISYNC_TOKEN: bob }).stderr).toContain("nothing to send: all 40 files are backed up");
      } finally {
        await proxy.close();
        await m.cleanup();
      }
    }, 180_000);

    it("a running watch finds the server started afresh at its address after the outage, says so, and sends it everything", async () => {
      // Every step is bounded and named: on a loaded machine a slow one fails by its name.
      await within("stopping the server of the test before", 20_000, server?.stop() ?? Promise.resolve());
      const first = await within("the first npm start", 70_000, start());
      const port = new URL(first.server.url).port;
      // The token the watch holds, kept to be made again on the fresh server (a new install
      // would give a new one; the watcher keeps its own).
      const before = storesBeside(first);
      const record = await within(
        "reading the token's record",
        20_000,
        before.meta.findToken(hashToken(first.server.token)),
      );
      before.close?.();
      const proxy = await switchableProxy(first.server.url);
      const m = machine(proxy.url, first.server.token);
      const ids = Array.from({ length: 3 }, (_, i) => `watched-${store}-${i}-${randomUUID().slice(0, 8)}`);
      const paths = ids.map((id) => writeSession(m.sessionsRoot, id));
      // Each cloud poll (every second here; 15 s by default) asks who the server is first.
      const watch = m.watch(["--poll-cloud", "1"]);
      try {
        await waitFor(
          async () => (await held(first.server.url, first.server.token, ids[2])) !== undefined,
          () => `for the first server to hold the files\n${watch.log()}`,
        );

        proxy.setDown(true);
        await within("stopping the first server", 20_000, first.server.stop());
        // pi writes on during the outage: the watcher finds the server gone, and probes.
        const more = {
          type: "message",
          id: "e0000001",
          parentId: "e0000000",
          timestamp: "2026-02-01T00:00:02.000Z",
          message: { role: "user", content: "written while the server was away", timestamp: 2 },
        };
        appendFileSync(paths[0], `${JSON.stringify(more)}\n`);
        const fresh = await within("npm start afresh at the same address", 70_000, start(port));
        const stores = storesBeside(fresh);
        await within("making the token again", 20_000, stores.meta.putToken(record as NonNullable<typeof record>));
        stores.close?.();
        expect(await held(fresh.server.url, first.server.token, ids[0])).toBeUndefined();
        proxy.setDown(false);

        await waitFor(
          async () => {
            for (const [i, id] of ids.entries()) {
              const bytes = await held(fresh.server.url, first.server.token, id);
              if (!bytes?.equals(readFileSync(paths[i]))) return false;
            }
            return true;
          },
          () => `for the fresh server to hold every file\n${watch.log()}`,
        );
        const events = watch
          .log()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { event?: string; type?: string; server?: string });
        const changed = events.find((e) => (e.event ?? e.type) === "server-changed");
        expect(changed, watch.log()).toBeDefined();
        const whoFresh = await fetch(`${fresh.server.url}/v1/whoami`, {
          headers: { Authorization: `Bearer ${first.server.token}` },
          signal: AbortSignal.timeout(20_000),
        });
        expect(changed?.server).toBe(((await whoFresh.json()) as { server: { id: string } }).server.id);
      } finally {
        // The watcher first: the proxy then has no client left to wait for.
        await m.cleanup();
        await proxy.close();
      }
    }, 300_000);
  });
}
