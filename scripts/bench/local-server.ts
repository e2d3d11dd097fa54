/**
 * The one-machine server as the benches drive it: its own process (`scripts/start.ts`, as
 * `npm start` runs it) on a free port and a data folder of its own, timed GETs, and `/healthz`
 * asked every 50 ms while some work runs (the slowest answer: how long the event loop was held).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@pisync/testing/servers";

/** A running server: its address, the first user's token, and how to stop it (its folder goes too). */
export interface LocalServer {
  base: string;
  token: string;
  auth: { Authorization: string };
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the server in a new data folder (`prefix` names it); resolves once it printed its token. */
export async function startLocalServer(prefix: string): Promise<LocalServer> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const port = await freePort();
  const args = ["--conditions=source", "--import", "tsx", "scripts/start.ts", "--no-watch", "--port", String(port)];
  const child = spawn(process.execPath, [...args, "--data", join(dir, "data")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  process.on("exit", () => child.kill("SIGTERM")); // never leave the server behind
  let output = "";
  const token = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      const match = /pst_\S{43}/.exec(output);
      if (match) resolve(match[0]);
    });
    child.on("exit", (code) => reject(new Error(`the server exited (${code}): ${output}`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    token,
    auth: { Authorization: `Bearer ${token}` },
    child,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A GET read to its end; its status (0: the connection failed) and time to the last byte. */
export function timedGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const t = performance.now();
    request(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
    })
      .on("error", () => resolve({ status: 0, ms: performance.now() - t }))
      .end();
  });
}

/** Asks `base`/healthz every 50 ms while `work` runs; the slowest answer. */
export async function healthzDuring<T>(
  base: string,
  work: () => Promise<T>,
): Promise<{ result: T; slowest: number; asked: number }> {
  let slowest = 0;
  let asked = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      const { ms } = await timedGet(`${base}/healthz`);
      slowest = Math.max(slowest, ms);
      asked++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const result = await work();
  done = true;
  await poll;
  return { result, slowest, asked };
}
