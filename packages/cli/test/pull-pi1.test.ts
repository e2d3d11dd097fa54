/**
 * `pisync pull` lands where pi 1.6.0 looks: its own `SessionManager.list`, `findById` and
 * `continueRecent` (run in pi 1.6.0's runtime, Node 22) find the pulled file on another machine,
 * for sessions pi 1.6.0 and pi 0.73.1 wrote, for a cwd written with a trailing slash (0.73.1
 * keeps it in the header, 1.x resolves it away before naming the folder), and for `--cwd`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assistantMessage } from "@pisync/testing";
import { buildCli, machine, type Server, startServer } from "@pisync/testing/cli";
import { node22 } from "@pisync/testing/node22";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const child = new URL("./pull-pi1-child.mjs", import.meta.url).pathname;

type Machine = ReturnType<typeof machine>;

/** Asks pi (1.6.0 under Node 22 unless told) on a machine; see pull-pi1-child.mjs. */
function askPi<T>(on: Machine, request: { command: string; pi?: "0.73.1" | "1.6.0" } & Record<string, unknown>): T {
  const env = { ...on.env };
  // pi's default sessions folder, the one the CLI pulls into by default.
  delete env.PI_CODING_AGENT_SESSION_DIR;
  const out = execFileSync(request.pi === "0.73.1" ? process.execPath : node22, [child], {
    input: JSON.stringify(request),
    env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const answer = JSON.parse(out.toString("utf8")) as T & { pi: string };
  expect(answer.pi).toBe(request.pi ?? "1.6.0");
  return answer;
}

interface Found {
  list: { path: string; id: string }[];
  findById: string | null;
  continueRecent: { file: string; id: string; entries: number };
}

let server: Server;
let dataDir: string;

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-pull-pi1-"));
  server = await startServer(dataDir);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A session pi writes on one machine, pushed, then pulled on another: the pulled file and its id. */
function writePushPull(pi: "0.73.1" | "1.6.0", cwd: string, pullArgs: string[] = []) {
  const laptop = machine(server.url, server.token);
  const desktop = machine(server.url, server.token);
  const written = askPi<{ file: string; id: string; header: { cwd: string } }>(laptop, {
    command: "write",
    pi,
    cwd,
    messages: [
      { role: "user", content: "first question", timestamp: 1 },
      assistantMessage("first answer"),
      { role: "user", content: "second question", timestamp: 2 },
      assistantMessage("second answer"),
    ],
  });
  const pushed = laptop.run(["push", written.file]);
  expect(pushed.code, pushed.stderr).toBe(0);
  const pulled = desktop.run(["pull", written.id, "--json", ...pullArgs]);
  expect(pulled.code, pulled.stderr).toBe(0);
  const { path } = JSON.parse(pulled.stdout) as { path: string };
  expect(readFileSync(path).equals(readFileSync(written.file))).toBe(true);
  return { desktop, path, id: written.id, header: written.header, cleanup: [laptop, desktop] };
}

/** pi 1.6.0 on `on`, open in `cwd`, lists, finds by id and continues the pulled session. */
function expectFoundByPi(on: Machine, cwd: string, path: string, id: string) {
  const found = askPi<Found>(on, { command: "find", cwd, id });
  expect(found.list).toEqual([{ path, id }]);
  expect(found.findById).toBe(path);
  const entries = readFileSync(path, "utf8").trimEnd().split("\n").length - 1;
  expect(found.continueRecent).toEqual({ file: path, id, entries });
}

describe("pisync pull, judged by pi 1.6.0's SessionManager", () => {
  it("a session pi 1.6.0 wrote is listed, found by id and continued where it was written", async () => {
    const s = writePushPull("1.6.0", "/home/dev/app");
    try {
      expectFoundByPi(s.desktop, "/home/dev/app", s.path, s.id);
      // pi opened in the same folder typed with a trailing slash finds it too.
      expectFoundByPi(s.desktop, "/home/dev/app/", s.path, s.id);
    } finally {
      for (const m of s.cleanup) await m.cleanup();
    }
  }, 60_000);

  it("a cwd with a trailing slash (as pi 0.73.1 writes it in the header) lands where pi 1.6.0 looks", async () => {
    const s = writePushPull("0.73.1", "/home/dev/slashed/");
    try {
      // The premise: the header keeps the slash, and the pulled bytes are exact (checked above).
      expect(s.header.cwd).toBe("/home/dev/slashed/");
      expectFoundByPi(s.desktop, "/home/dev/slashed", s.path, s.id);
      expectFoundByPi(s.desktop, "/home/dev/slashed/", s.path, s.id);
    } finally {
      for (const m of s.cleanup) await m.cleanup();
    }
  }, 60_000);

  it("--cwd with a trailing slash files the session where pi 1.6.0 opened in that folder looks", async () => {
    const s = writePushPull("1.6.0", "/home/dev/origin", ["--cwd", "/srv/elsewhere/"]);
    try {
      expectFoundByPi(s.desktop, "/srv/elsewhere", s.path, s.id);
      expectFoundByPi(s.desktop, "/srv/elsewhere/", s.path, s.id);
      // Not where the header's cwd would put it.
      expect(askPi<Found>(s.desktop, { command: "find", cwd: "/home/dev/origin", id: s.id }).list).toEqual([]);
    } finally {
      for (const m of s.cleanup) await m.cleanup();
    }
  }, 60_000);
});
