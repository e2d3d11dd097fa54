/**
 * `npm start -- --store aws` end to end, on the test servers (DynamoDB Local and s3rver behind
 * its SigV4 gate) through the AWS SDK's standard settings: it creates its table, appends and
 * serves bytes exact, takes tokens made by `npm run token -- --store aws`, and refuses missing
 * settings with one line.
 */
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Server, startServer, testAwsEnv } from "@pisync/testing/cli";
import { afterAll, beforeAll, expect, inject, it } from "vitest";

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), "pisync-start-aws-"));
const table = `pisync-start-${randomUUID()}`;
const env = () =>
  testAwsEnv({ s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint"), bucket: inject("s3Bucket") }, table);
let server: Server;

beforeAll(async () => {
  server = await startServer(dataDir, { args: ["--store", "aws", "--create"], env: env() });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
const message = (n: number) =>
  `${JSON.stringify({ type: "message", id: `m${n}`, parentId: n > 1 ? `m${n - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `line ${n} é`, timestamp: 1 } })}\n`;

it("appends and serves the bytes exact, on S3 + DynamoDB", async () => {
  const auth = { Authorization: `Bearer ${server.token}` };
  let text = "";
  for (const body of [header("s"), message(1), message(2)]) {
    const r = await fetch(`${server.url}/v1/sessions/s`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": String(Buffer.byteLength(text)) },
      body,
    });
    expect(r.status, await r.clone().text()).toBe(200);
    text += body;
  }
  const raw = await fetch(`${server.url}/v1/sessions/s/raw`, { headers: { ...auth, "Accept-Encoding": "identity" } });
  expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(text))).toBe(true);
  // The search index of that store answers too (the AWS adapter: one index object per user in S3).
  let found = 0;
  for (let i = 0; i < 50 && found === 0; i++) {
    const r = await fetch(`${server.url}/v1/search?q=line`, { headers: auth });
    expect(r.status).toBe(200);
    found = ((await r.json()) as { sessions: unknown[] }).sessions.length;
    if (found === 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(found).toBeGreaterThan(0);
});

it("takes a token made by npm run token -- --store aws with the same settings", async () => {
  const made = await run(
    process.execPath,
    ["--conditions=source", "--import", "tsx", "scripts/token.ts", "--user", "bob", "--store", "aws"],
    { env: { ...process.env, ...env() } },
  );
  expect(made.stdout).toContain(`DynamoDB table ${table}`);
  const token = made.stdout.trim().split("\n").pop() as string;
  const r = await fetch(`${server.url}/v1/sessions`, { headers: { Authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  const other = await fetch(`${server.url}/v1/sessions/s`, { headers: { Authorization: `Bearer ${token}` } });
  expect(other.status).toBe(404);
}, 120_000);

it("refuses to start without its settings: one line, exit code 2", async () => {
  const child = spawn("npm", ["start", "--", "--store", "aws", "--data", dataDir, "--no-watch"], {
    env: { ...process.env, ...env(), PISYNC_BUCKET: "", AWS_REGION: "", AWS_DEFAULT_REGION: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const code = await new Promise((resolve) => child.on("exit", resolve));
  expect(code).toBe(2);
  expect(output).toContain("npm start: --store aws needs AWS_REGION, PISYNC_BUCKET set");
  expect(output).not.toMatch(/\n\s+at /);
}, 120_000);
