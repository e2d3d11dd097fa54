/**
 * The pi package, loaded into pi's real runtime (createAgentSession with a resource loader),
 * each /cloud command run against `npm start`; the share link opens the branch pi was on; and
 * the extension's backups coexist with a running `pisync watch` without double uploads; a copy
 * continued on another machine is merged between pi's writes, and /cloud status says so.
 */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { piFolderName } from "@pisync/cli";
import { assistantMessage, line } from "@pisync/testing";
import { buildCli, completeBytes, eventually, machine, type Server, startServer } from "@pisync/testing/cli";
import { node22 } from "@pisync/testing/node22";
import { piTree } from "@pisync/testing/pi1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Which pi runs the package. */
type PiVersion = "0.73.1" | "1.6.0";

const extensionPath = new URL("../dist/cloud.mjs", import.meta.url).pathname;
const hostPath = new URL("./pi-host.mjs", import.meta.url).pathname;

let server: Server;
let dataDir: string;

beforeAll(async () => {
  execFileSync(process.execPath, [new URL("../build.mjs", import.meta.url).pathname], { stdio: "ignore" });
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-pi-data-"));
  server = await startServer(dataDir);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** One request to pi's runtime in the child (see pi-host.mjs): what it answers. */
type Answer = Record<string, unknown> & { error?: string };

/**
 * pi's runtime with the pi package loaded, in a child process (pi 1.6.0 under Node 22, pi 0.73.1
 * under the tests' Node), with the machine's environment; each call is one request.
 */
async function startPi(
  version: PiVersion,
  env: NodeJS.ProcessEnv,
  options: { home: string; cwd?: string; sessionDir?: string },
) {
  const child = spawn(version === "0.73.1" ? process.execPath : node22, [hostPath], {
    env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const answers = createInterface({ input: child.stdout as Readable })[Symbol.asyncIterator]();
  const ask = async (request: Record<string, unknown>): Promise<Answer> => {
    child.stdin?.write(`${JSON.stringify(request)}\n`);
    const next = await answers.next();
    if (next.done) throw new Error(`pi's runtime exited before answering ${JSON.stringify(request)}`);
    const answer = JSON.parse(next.value) as Answer;
    if (answer.error) throw new Error(`pi's runtime: ${answer.error}`);
    return answer;
  };
  const started = await ask({ op: "start", pi: version, extension: extensionPath, ...options });
  return {
    /** The version pi reports. */
    version: String(started.pi),
    append: async (message: unknown) => String((await ask({ op: "append", message })).id),
    branch: async (id: string) => String((await ask({ op: "branch", id })).leafId),
    session: async () => (await ask({ op: "session" })) as { file: string | null; id: string; leafId: string | null },
    /** Runs a prompt (a /cloud command); answers what /cloud reported, the last report first. */
    prompt: async (text: string) => {
      const { results } = (await ask({ op: "prompt", text })) as { results: Record<string, unknown>[] };
      expect(results.length).toBeGreaterThan(0);
      return results[results.length - 1] as Record<string, unknown>;
    },
    setEnv: async (set: Record<string, string | null>) => void (await ask({ op: "env", set })),
    stop: () => {
      child.stdin?.end();
      child.kill("SIGTERM");
    },
  };
}

describe.each(["0.73.1", "1.6.0"] as const)("/cloud inside pi %s", (version) => {
  it("shares the branch pi is on, reports status, pulls a link; coexists with pisync watch", async () => {
    const m = machine(server.url, server.token);
    const cwd = "/home/dev/pi-app";
    const pi = await startPi(
      version,
      { ...process.env, ...m.env },
      {
        home: m.home,
        cwd,
        sessionDir: join(m.sessionsRoot, piFolderName(cwd)),
      },
    );
    try {
      expect(pi.version).toBe(version);
      // A watcher runs too, on the same files and state.
      const watcher = m.watch();

      // Two branches; then pi moves back to the first one (no file line records that).
      const first = await pi.append({ role: "user", content: "first branch question", timestamp: 1 });
      const firstResponse = await pi.append(assistantMessage("first branch answer"));
      await pi.branch(first);
      await pi.append({ role: "user", content: "second branch question", timestamp: 2 });
      await pi.append(assistantMessage("second branch answer"));
      expect(await pi.branch(firstResponse)).toBe(firstResponse);

      const pinned = await pi.prompt("/cloud share --expires 1h");
      const url = String(pinned.url);
      expect(url).toMatch(/\/s\//);
      expect(pinned.leafId).toBe(firstResponse);
      const context = (await (await fetch(`${url}/context`)).json()) as { messages: { content: unknown }[] };
      expect(JSON.stringify(context.messages)).toContain("first branch answer");
      expect(JSON.stringify(context.messages)).not.toContain("second branch");

      expect((await pi.prompt("/cloud share --live")).leafId).toBeNull();
      // Beyond the server's limit: said in days, as the flag is written.
      expect((await pi.prompt("/cloud share --expires 100d")).error).toBe(
        "--expires: at most 90 days on this server, e.g. --expires 7d",
      );

      expect(await pi.prompt("/cloud status")).toMatchObject({ backedUp: true, pending: 0, generation: 1 });
      // Said for the server and account in use now (asked of the server, not what this machine last knew).
      const status = await pi.prompt("/cloud status");
      expect(status).toMatchObject({ lastKnown: false, server: { user: "local" } });
      expect(String((status.server as { id: string }).id)).toMatch(/^srv_/);

      // This session in the browser: a one-time link that lands on it.
      const sessionId = (await pi.session()).id;
      const open = await pi.prompt("/cloud open --print");
      expect(open).toMatchObject({ next: `/sessions/${sessionId}`, opened: false });
      const signIn = await fetch(String(open.url), { redirect: "manual" });
      expect(signIn.status).toBe(303);
      expect(signIn.headers.get("Location")).toBe(`/sessions/${sessionId}`);
      expect((await pi.prompt("/cloud open retry loop --print")).next).toBe("/?q=retry%20loop");

      // The fork lands in the project pi is open in, and names the share without its token.
      const pulled = await pi.prompt(`/cloud pull ${url}`);
      const fork = String(pulled.path);
      expect(pulled.already).toBe(false);
      expect(fork.startsWith(join(m.sessionsRoot, piFolderName(m.home)))).toBe(true);
      const shareId = (/\/s\/([A-Za-z0-9_-]{22})\./.exec(url) as RegExpExecArray)[1];
      const forkHeader = readFileSync(fork, "utf8").split("\n")[0];
      expect(JSON.parse(forkHeader)).toMatchObject({ parentSession: `pisync-share:${shareId}`, cwd: m.home });
      expect(forkHeader).not.toContain(url.split("/s/")[1]);
      // Pulled again with nothing new: the same fork, said to be already here.
      expect(await pi.prompt(`/cloud pull ${url}`)).toMatchObject({ path: fork, already: true });
      // A bad argument gets the CLI's words for it.
      expect(String((await pi.prompt("/cloud pull not/an/id")).error)).toContain("a session id");

      // More writes while both the extension and the watcher send: one generation, exact bytes.
      for (let i = 0; i < 10; i++) {
        await pi.append({ role: "user", content: `more ${i}`, timestamp: 10 + i });
        await pi.append(assistantMessage(`reply ${i}`));
        await pi.prompt("/cloud status");
      }
      const { file, id } = await pi.session();
      const failure = await eventually(async () => {
        const r = await fetch(`${server.url}/v1/sessions/${id}/raw`, {
          headers: { Authorization: `Bearer ${server.token}` },
        });
        const cloud = Buffer.from(await r.arrayBuffer());
        const local = completeBytes(file as string);
        return cloud.equals(local) ? undefined : `cloud ${cloud.length}, local ${local.length}`;
      });
      expect(failure).toBeUndefined();
      const meta = (await (
        await fetch(`${server.url}/v1/sessions/${id}`, { headers: { Authorization: `Bearer ${server.token}` } })
      ).json()) as { generation: number };
      expect(meta.generation).toBe(1);
      watcher.child.kill("SIGTERM");
      expect(readFileSync(file as string).length).toBeGreaterThan(0);
    } finally {
      pi.stop();
      await m.cleanup();
    }
  }, 120_000);

  it("merges another machine's lines between pi's writes; /cloud status says merged, with counts", async () => {
    const made = await fetch(`${server.url}/v1/tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Desktop" }),
    });
    const desktopToken = ((await made.json()) as { token: string }).token;
    const m = machine(server.url, server.token);
    const desktop = machine(server.url, desktopToken);
    const cwd = "/home/dev/pi-merge";
    const pi = await startPi(
      version,
      { ...process.env, ...m.env },
      { home: m.home, cwd, sessionDir: join(m.sessionsRoot, piFolderName(cwd)) },
    );
    try {
      const question = await pi.append({ role: "user", content: "shared question", timestamp: 1 });
      const answer = await pi.append(assistantMessage("shared answer"));
      expect(await pi.prompt("/cloud status")).toMatchObject({ backedUp: true, sync: { state: "in-sync" } });
      const { file, id } = await pi.session();
      const path = file as string;

      // The desktop pulls it and continues it with a line of its own, sent before this machine's.
      const pulled = desktop.run(["pull", id, "--json"]);
      expect(pulled.code, pulled.stderr).toBe(0);
      const desktopFile = String(JSON.parse(pulled.stdout).path);
      const theirs = line({
        type: "message",
        id: "d0000001",
        parentId: answer,
        timestamp: new Date().toISOString(),
        message: { role: "user", content: "asked on the desktop", timestamp: 2 },
      });
      appendFileSync(desktopFile, theirs);
      const pushed = desktop.run(["push"]);
      expect(pushed.code, pushed.stderr).toBe(0);

      // Here pi continues too; then a line pi is writing (half of it on disk): no merge lands in it.
      const mine = await pi.append({ role: "user", content: "asked on the laptop", timestamp: 3 });
      const half = line({
        type: "custom",
        id: "half0001",
        parentId: mine,
        timestamp: new Date().toISOString(),
        customType: "x",
        data: 1,
      });
      appendFileSync(path, half.slice(0, 20));
      const before = readFileSync(path);
      const waiting = await pi.prompt("/cloud status");
      expect(readFileSync(path).subarray(0, before.length).equals(before)).toBe(true);
      expect(readFileSync(path).toString("utf8")).not.toContain("asked on the desktop");
      expect(waiting).toMatchObject({ sync: { state: "pending" } });
      // The line is finished: the next run merges, appending the desktop's line after it.
      appendFileSync(path, half.slice(20));
      const status = await pi.prompt("/cloud status");
      // The other machine named as the server recorded it (its token's name).
      expect(status).toMatchObject({ sync: { state: "merged", fromCloud: 1, devices: ["Desktop"] } });
      expect((status.sync as { toCloud: number }).toCloud).toBeGreaterThanOrEqual(1);
      const merged = readFileSync(path, "utf8");
      // The desktop's line after the finished one, then a resume marker on this machine's branch
      // (pi resumes a file on its last line: here, this machine's own last entry).
      const at = merged.lastIndexOf(half + theirs);
      expect(at).toBeGreaterThan(0);
      const after = merged.slice(at + (half + theirs).length);
      // Only resume markers follow (markers of both copies, bounded), the last on this machine's tip.
      const markers = after
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; customType?: string; parentId?: string });
      expect(markers.length).toBeGreaterThan(0);
      expect(markers.length).toBeLessThanOrEqual(4);
      for (const marker of markers) expect(marker).toMatchObject({ type: "custom", customType: "pisync.resume" });
      expect(markers.at(-1)?.parentId).toBe("half0001");
      // pi keeps writing on its own leaf; every line whole, every entry once.
      await pi.append(assistantMessage("laptop answer"));
      const text = readFileSync(path, "utf8");
      const entries = text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id?: string });
      const ids = entries.flatMap((e) => (e.id ? [e.id] : []));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual(expect.arrayContaining([question, answer, mine, "d0000001"]));
      // pi opens it with both branches: the desktop's and this machine's.
      const [tree] = piTree([{ text }], { pi: version });
      const byId = new Map(tree.nodes.map((n) => [n.id, n]));
      expect(byId.get(answer)?.children).toEqual(expect.arrayContaining([mine, "d0000001"]));
      expect(statSync(path).size).toBe(Buffer.byteLength(text));
    } finally {
      pi.stop();
      await m.cleanup();
      await desktop.cleanup();
    }
  }, 180_000);

  it("says what to do when not logged in, or when the token is malformed", async () => {
    const m = machine(server.url, server.token);
    const env = { ...process.env, ...m.env };
    delete env.PISYNC_ENDPOINT;
    delete env.PISYNC_TOKEN;
    const pi = await startPi(version, env, { home: m.home });
    try {
      expect(String((await pi.prompt("/cloud status")).error)).toContain("pisync login");
      // A malformed token in the environment is named as such.
      await pi.setEnv({ PISYNC_TOKEN: "pst_short" });
      expect(String((await pi.prompt("/cloud status")).error)).toContain("PISYNC_TOKEN is malformed");
    } finally {
      pi.stop();
      await m.cleanup();
    }
  }, 60_000);
});
