/** `npm start` as a newcomer runs it: a real server on the embedded store, with a first token. */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, stopProcessGroup } from "@pisync/testing/servers";
import { afterAll, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "pisync-start-"));
const home = mkdtempSync(join(tmpdir(), "pisync-start-home-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** `npm start` with its state and pi's folder in a temp folder (never this machine's own). */
function spawnStart(args: string[]) {
  return spawn("npm", ["start", "--", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, XDG_STATE_HOME: join(home, "state"), PI_CODING_AGENT_DIR: join(home, "agent") },
  });
}

/** Starts `npm start`; resolves once its output matches `ready`. */
async function start(port: number, ready: RegExp, extra: string[] = []) {
  const child = spawnStart(["--port", String(port), "--data", dir, ...extra]);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  const stop = async () => {
    // A clean stop flushes the search index (its thread may still be starting): 18 s seen on a busy machine.
    expect(await stopProcessGroup(child.pid as number, 30_000), "npm start stops on SIGTERM").toBe(true);
  };
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop };
}

/** Runs `npm start` to its end; its exit code and output. */
function runToEnd(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawnStart(args);
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

it("serves the API with a token printed on first start only, and keeps the data across restarts", async () => {
  const port = await freePort();
  const first = await start(port, /pst_\S{43}\n/, ["--no-watch"]);
  const token = (/pst_\S{43}/.exec(first.output()) as RegExpExecArray)[0];
  expect(first.output()).toContain("first start");
  expect(statSync(join(dir, "local-token")).mode & 0o777).toBe(0o600);
  expect(readFileSync(join(dir, "local-token"), "utf8").trim()).toBe(token);
  const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n';
  const r = await fetch(`${first.url}/v1/sessions/s`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${token}`, "Upload-Offset": "0" },
    body: header,
  });
  expect(r.status).toBe(200);

  // A second server on the same port: one line that says so, no stack trace, a failure code.
  const busy = await runToEnd(["--port", String(port), "--data", dir, "--no-watch"]);
  expect(busy.code).toBe(1);
  expect(busy.output).toContain(`127.0.0.1:${port} is already in use`);
  expect(busy.output).not.toMatch(/EADDRINUSE|\n\s+at /);
  await first.stop();

  // Later starts say where the token is, and do not print it.
  const second = await start(await freePort(), /local-token\n/, ["--no-watch"]);
  expect(second.output()).toContain(`the token of user "local" is in ${join(dir, "local-token")}`);
  expect(second.output()).not.toContain(token);
  const raw = await fetch(`${second.url}/v1/sessions/s/raw`, { headers: { Authorization: `Bearer ${token}` } });
  expect(await raw.text()).toBe(header);
  await second.stop();
}, 120_000);

it("--root DIR: the watcher backs up the session files in that folder", async () => {
  const root = join(home, "elsewhere");
  const folder = join(root, "--home-dev-app--");
  mkdirSync(folder, { recursive: true });
  const line =
    '{"type":"session","version":3,"id":"rooted","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/app"}\n';
  writeFileSync(join(folder, "2026-01-01T00-00-00-000Z_rooted.jsonl"), line);
  const server = await start(await freePort(), /backing up the pi sessions in .*\n/, ["--root", root]);
  try {
    expect(server.output()).toContain(`backing up the pi sessions in ${root}\n`);
    const token = readFileSync(join(dir, "local-token"), "utf8").trim();
    let body = "";
    for (let i = 0; i < 300 && body !== line; i++) {
      const r = await fetch(`${server.url}/v1/sessions/rooted/raw`, { headers: { Authorization: `Bearer ${token}` } });
      body = r.ok ? await r.text() : "";
      if (body !== line) await new Promise((r) => setTimeout(r, 100));
    }
    expect(body).toBe(line);
  } finally {
    await server.stop();
  }
}, 120_000);

/** Whether something accepts connections on the port. */
async function listening(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

it.each(["SIGTERM", "SIGKILL"] as const)(
  "killing npm start's npm process by its pid (%s) frees the port",
  async (signal) => {
    const port = await freePort();
    const child = spawnStart(["--port", String(port), "--data", dir, "--no-watch"]);
    try {
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += chunk;
      });
      for (let i = 0; i < 600 && !/pisync listening/.test(output); i++) await new Promise((r) => setTimeout(r, 100));
      expect(await listening(port), output).toBe(true);
      // Only npm's own pid, as `kill <pid>` would: not its process group.
      process.kill(child.pid as number, signal);
      let freed = false;
      for (let i = 0; i < 100 && !freed; i++) {
        freed = !(await listening(port));
        if (!freed) await new Promise((r) => setTimeout(r, 100));
      }
      expect(freed, "the server under npm stopped").toBe(true);
    } finally {
      await stopProcessGroup(child.pid as number);
    }
  },
  120_000,
);

it("refuses an unknown flag with the usage line, exit code 2", async () => {
  const result = await runToEnd(["--nope"]);
  expect(result.code).toBe(2);
  expect(result.output).toContain("usage: npm start -- ");
});
