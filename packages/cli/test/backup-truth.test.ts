/**
 * `push` and `status` never call a file stored that the server and account in use do not hold,
 * against `npm start` on both stores: what a machine confirmed is kept per server identity and
 * account, not per address. Logged in as a second account on the same server, and after the
 * server at the same address is started afresh (its data gone, the account name the same),
 * push sends everything the server lacks and status says what is not confirmed.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Tokens } from "@pisync/core";
import { buildCli, machine, type Server, startServerOn, storesBeside } from "@pisync/testing/cli";
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
  });
  return r.ok ? Buffer.from(await r.arrayBuffer()) : undefined;
}

type Store = "embedded" | "aws";

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
  });
}
