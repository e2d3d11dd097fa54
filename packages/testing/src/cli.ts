/**
 * End-to-end harness: the real `npm start` server, a fault-injecting proxy in front of it,
 * and the bundled `pisync` run as a child process with its own HOME.
 */

import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stores } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll, beforeAll, inject } from "vitest";
import { freePort, stopProcessGroup } from "./servers/servers.js";

export const cliPath = new URL("../../cli/dist/pisync.mjs", import.meta.url).pathname;

/** Builds the bundle under test (the file users run). */
export function buildCli(): void {
  execFileSync(process.execPath, [new URL("../../cli/build.mjs", import.meta.url).pathname], { stdio: "ignore" });
}

export interface Server {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/**
 * `npm start` on a fresh data folder (without its own watcher: tests run theirs); `options`
 * adds flags (`--store aws --create`) and environment (the AWS settings), and may name the port
 * (the address of a server stopped before).
 */
export async function startServer(
  dataDir: string,
  options: { args?: string[]; env?: NodeJS.ProcessEnv; port?: number } = {},
): Promise<Server> {
  const port = options.port ?? (await freePort());
  const args = ["start", "--", "--port", String(port), "--data", dataDir, "--no-watch", ...(options.args ?? [])];
  const child = spawn("npm", args, {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, ...options.env },
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (/pst_\S{43}\n/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  const token = (/pst_\S{43}/.exec(output) as RegExpExecArray)[0];
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    stop: async () => void (await stopProcessGroup(child.pid as number)),
  };
}

/**
 * `npm start` for every test of one file: before them it builds the bundles (`buildCli`, then
 * `prepare`) and starts the server on a fresh data folder; after them it stops the server and
 * removes the folder. The answer reads the running server, so use it inside hooks and tests.
 */
export function npmStartForFile(prepare?: () => void): Server {
  let running: Server | undefined;
  let dataDir: string | undefined;
  beforeAll(async () => {
    buildCli();
    prepare?.();
    dataDir = mkdtempSync(join(tmpdir(), "pisync-npm-start-"));
    running = await startServer(dataDir);
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const current = () => {
    if (!running) throw new Error("npm start is not running yet (use the server inside a hook or test)");
    return running;
  };
  return {
    get url() {
      return current().url;
    },
    get token() {
      return current().token;
    },
    stop: () => current().stop(),
  };
}

/**
 * The environment `--store aws` reads, for the test servers: their endpoints, the key s3rver's
 * gate checks, the test bucket and `table` (created by `--create` when missing).
 */
export function testAwsEnv(endpoints: { s3: string; dynamodb: string; bucket: string }, table: string) {
  return {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    PISYNC_BUCKET: endpoints.bucket,
    PISYNC_TABLE: table,
  };
}

/** A running `npm start` on one store, with where its data is (to open the same stores beside it). */
export interface StoreServer {
  server: Server;
  dataDir: string;
  /** The DynamoDB table (`aws` only). */
  table?: string;
}

/**
 * `npm start` on fresh data of `store` (`aws`: the test servers, a new table; inject() must be
 * available: call it from a test or hook), at `port` when given (the same address as a server
 * stopped before). The caller stops it and removes `dataDir`.
 */
export async function startServerOn(store: "embedded" | "aws", options: { port?: string } = {}): Promise<StoreServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `pisync-${store}-`));
  const port = options.port ? Number(options.port) : undefined;
  if (store === "embedded") return { server: await startServer(dataDir, { port }), dataDir };
  const table = `pisync-e2e-${randomUUID()}`;
  const env = testAwsEnv(
    { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint"), bucket: inject("s3Bucket") },
    table,
  );
  return { server: await startServer(dataDir, { args: ["--store", "aws", "--create"], env, port }), dataDir, table };
}

/** The stores a running `npm start` uses, opened beside it (to make another account's token); close them after. */
export function storesBeside(running: StoreServer): Stores & { close?: () => void } {
  if (!running.table) return embeddedStores(running.dataDir);
  return awsStores({
    bucket: inject("s3Bucket"),
    table: running.table,
    region: "us-east-1",
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    endpoints: { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint") },
    s3PathStyle: true,
  });
}

/**
 * A proxy that fails a share of requests: some answered 503 without reaching the server, some
 * forwarded and then cut (the server committed, the client never hears: the retry must be
 * recognised as one).
 */
export async function faultyProxy(target: string, failureRate: () => number) {
  let failures = 0;
  let requests = 0;
  const proxy = await proxyServer(target, () => {
    requests++;
    const roll = Math.random();
    const rate = failureRate();
    if (roll >= rate) return "forward";
    failures++;
    return roll < rate / 2 ? "refuse" : "lose-answer";
  });
  return { ...proxy, failures: () => failures, requests: () => requests };
}

/**
 * A proxy that can be switched off (every connection cut, as when the server is unreachable)
 * and on again; it records, in order, each switch and each request (served or cut).
 */
export async function switchableProxy(target: string) {
  let down = false;
  const events: { kind: "down" | "up" | "request"; method?: string; path?: string; served?: boolean }[] = [];
  const proxy = await proxyServer(target, (req) => {
    events.push({ kind: "request", method: req.method, path: req.url, served: !down });
    return down ? "cut" : "forward";
  });
  return {
    ...proxy,
    events,
    setDown(value: boolean) {
      down = value;
      events.push({ kind: value ? "down" : "up" });
    },
  };
}

/** A busy answer a proxy gives instead of forwarding: its status and `Retry-After` header. */
export interface BusyResponse {
  status: 429 | 503 | 507;
  retryAfter?: string;
}

/**
 * A proxy that behaves like a busy server's rate limiter: it answers every `every`th request
 * with `busy(n)` (the `n`th such answer, from 0: 429, 503 or 507 with a `Retry-After` of
 * seconds or an HTTP date) without forwarding it, and keeps the door shut for as long as that
 * `Retry-After` says: a request that comes back sooner is `early`, and is answered 429 again.
 */
export async function throttlingProxy(
  target: string,
  every: number,
  busy: (n: number) => BusyResponse,
  /**
   * A client sending several requests at once may send one before it has read the busy answer
   * to another: a request that comes within this many ms of the door shutting is refused
   * again, but not counted `early` (default 0: every one is).
   */
  inFlightMs = 0,
) {
  let requests = 0;
  let shutAt = 0;
  let throttled = 0;
  let early = 0;
  let waitedMs = 0;
  let shutUntil = 0;
  const proxy = await proxyServer(target, () => {
    const now = Date.now();
    if (now < shutUntil) {
      if (now - shutAt > inFlightMs) early++;
      return { status: 429, retryAfter: String(Math.ceil((shutUntil - now) / 1000)) };
    }
    if (++requests % every !== 0) return "forward";
    const answer = busy(throttled++);
    const asked = answer.retryAfter;
    if (asked !== undefined) {
      // What a careful client may read from it: whole seconds, or a date to the second.
      const until = /^\d+$/.test(asked) ? now + Number(asked) * 1000 : Date.parse(asked);
      if (until > shutUntil) shutAt = now;
      shutUntil = Math.max(shutUntil, until);
      waitedMs += Math.max(0, until - now);
    }
    return answer;
  });
  return {
    ...proxy,
    /** Requests forwarded or throttled (early ones not counted). */
    requests: () => requests,
    throttled: () => throttled,
    /** Requests that came back before the `Retry-After` they were given. */
    early: () => early,
    /** The time the `Retry-After` headers given asked the client to wait, in all. */
    askedMs: () => waitedMs,
  };
}

/**
 * A proxy that runs `before` on each request (say, another client's write) and then forwards
 * it: what the server does between two requests of one command.
 */
export async function hookedProxy(target: string, before: (req: IncomingMessage) => Promise<void>) {
  return proxyServer(target, async (req): Promise<Fate> => {
    await before(req);
    return "forward";
  });
}

type Fate = "forward" | "refuse" | "cut" | "lose-answer" | BusyResponse;

/**
 * A proxy to `target` that decides each request's fate: forwarded; refused with 503 before
 * reaching the server; cut before reaching it; forwarded and then cut (the server committed,
 * the client never hears); or answered as busy, without reaching it.
 */
async function proxyServer(target: string, fate: (req: IncomingMessage) => Fate | Promise<Fate>) {
  const port = await freePort();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const what = await fate(req);
    if (typeof what === "object") {
      const headers = {
        "Content-Type": "application/json",
        ...(what.retryAfter ? { "Retry-After": what.retryAfter } : {}),
      };
      return void res.writeHead(what.status, headers).end(JSON.stringify({ error: "busy", code: "rate_limited" }));
    }
    if (what === "refuse") return void res.writeHead(503).end("injected failure");
    if (what === "cut") return void req.socket.destroy();
    try {
      const upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
        ) as Record<string, string>,
        body: chunks.length && req.method !== "GET" && req.method !== "HEAD" ? Buffer.concat(chunks) : undefined,
        // A server that never answers (stopped mid-request, starved) must not hold the proxy open.
        signal: AbortSignal.timeout(60_000),
      });
      const body = Buffer.from(await upstream.arrayBuffer());
      if (what === "lose-answer") return void req.socket.destroy();
      const headers: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(k)) headers[k] = v;
      });
      res.writeHead(upstream.status, headers).end(body);
    } catch {
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    /** Stops listening and cuts every connection, idle or not (a client still waiting gets an error). */
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What the server holds of a session: its current bytes and generation (read directly). */
export function cloud(server: Server) {
  const headers = { Authorization: `Bearer ${server.token}` };
  // A read may go out on a kept-alive socket the server closed meanwhile (a starved machine):
  // these reads change nothing, so one is tried once more, as an HTTP client does.
  const read = (url: string, init: RequestInit) => fetch(url, init).catch(() => fetch(url, init));
  return {
    async bytes(id: string): Promise<Buffer | undefined> {
      const r = await read(`${server.url}/v1/sessions/${id}/raw`, {
        headers: { ...headers, "Accept-Encoding": "identity" },
      });
      return r.ok ? Buffer.from(await r.arrayBuffer()) : undefined;
    },
    async generation(id: string): Promise<number> {
      const r = await read(`${server.url}/v1/sessions/${id}`, { headers });
      return ((await r.json()) as { generation: number }).generation;
    },
  };
}

/** A fake user's machine: HOME, XDG folders and a pi agent folder, in one temp folder. */
export function machine(endpoint: string, token: string) {
  const home = mkdtempSync(join(tmpdir(), "pisync-home-"));
  const children: ChildProcess[] = [];
  const agentDir = join(home, ".pi", "agent");
  mkdirSync(join(agentDir, "sessions"), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    PI_CODING_AGENT_DIR: agentDir,
    PISYNC_ENDPOINT: endpoint,
    PISYNC_TOKEN: token,
  };
  return {
    home,
    env,
    sessionsRoot: join(agentDir, "sessions"),
    /** Runs a pisync command to completion. */
    run(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
      const result = spawnSync(process.execPath, [cliPath, ...args], {
        env: { ...env, ...extraEnv },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    },
    /** Runs a pisync command without blocking this process (a proxy here keeps answering). */
    start(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
      const child = spawn(process.execPath, [cliPath, ...args], {
        env: { ...env, ...extraEnv },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr?.on("data", (chunk) => {
        stderr += chunk;
      });
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        child.once("close", (code) => resolve({ code, stdout, stderr })),
      );
    },
    /** Starts `pisync watch --json`. */
    watch(extraArgs: string[] = []) {
      const child = spawn(process.execPath, [cliPath, "watch", "--json", ...extraArgs], {
        env,
        stdio: ["ignore", "ignore", "pipe"],
      });
      children.push(child);
      let log = "";
      child.stderr?.on("data", (chunk) => {
        log += chunk;
      });
      return { child, log: () => log };
    },
    /** Stops its watchers, then removes the machine's folder. */
    async cleanup() {
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGKILL");
          await new Promise((r) => child.once("exit", r));
        }
      }
      rmSync(home, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** The bytes of a file up to its last newline. */
export function completeBytes(path: string): Buffer {
  const bytes = readFileSync(path);
  return bytes.subarray(0, bytes.lastIndexOf(10) + 1);
}

/** Polls until `check` passes or the time is up; returns the last failure message. */
export async function eventually(
  check: () => Promise<string | undefined>,
  timeoutMs = 60_000,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  while (Date.now() < deadline) {
    last = await check();
    if (last === undefined) return undefined;
    await new Promise((r) => setTimeout(r, 200));
  }
  return last;
}

/**
 * `work`, or an error naming `what` when it has not settled within `ms`: a step of an
 * end-to-end test that hangs on a loaded machine then fails by its name, not by the test's
 * overall timeout. `context` adds what helps to read the failure (a watcher's log).
 */
export async function within<T>(
  what: string,
  ms: number,
  work: Promise<T>,
  context: () => string = () => "",
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms\n${context()}`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
