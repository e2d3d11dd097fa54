/**
 * `npm run aws-local` end to end: DynamoDB Local (on disk) and s3rver keep their data under the
 * data folder, `npm start -- --store aws --create` runs on them, an append is served back exact,
 * and stopping the command stops all three (their ports answer nothing any more).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@pisync/testing/servers";
import { afterAll, expect, it } from "vitest";

const dataDir = mkdtempSync(join(tmpdir(), "pisync-aws-local-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether anything answers HTTP at `url`. */
const answers = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then(
    () => true,
    () => false,
  );

/** Waits until `check` holds, up to `ms`. */
async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(250);
  }
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()));

it("runs the AWS pair on this machine under the data folder; bytes come back exact; stopping it stops all three", async () => {
  const port = await freePort();
  const child = spawn("npm", ["run", "aws-local", "--", "--data", dataDir, "--port", String(port), "--no-watch"], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  const folder = join(dataDir, "aws-local");
  try {
    await until(
      async () => child.exitCode === null && (await answers(`${url}/healthz`)),
      180_000,
      `npm run aws-local to answer (${output.slice(-500)})`,
    );
    const token = readFileSync(join(folder, "local-token"), "utf8").trim();
    const auth = { Authorization: `Bearer ${token}` };
    const body = `${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
    const appended = await fetch(`${url}/v1/sessions/s`, {
      method: "PATCH",
      headers: { ...auth, "Upload-Offset": "0" },
      body,
    });
    expect(appended.status, await appended.clone().text()).toBe(200);
    const raw = await fetch(`${url}/v1/sessions/s/raw`, { headers: { ...auth, "Accept-Encoding": "identity" } });
    expect(await raw.text()).toBe(body);
    // Both storage servers keep their data in the folder (DynamoDB Local on disk, not in memory).
    expect(readdirSync(join(folder, "dynamodb")).some((name) => name.endsWith(".db"))).toBe(true);
    expect(existsSync(join(folder, "s3", "pisync"))).toBe(true);
  } finally {
    process.kill(-(child.pid as number), "SIGTERM");
    await exited(child);
  }
  const endpoints = /DynamoDB Local on (\S+), s3rver on (\S+)/.exec(output);
  expect(endpoints, output.slice(-1000)).not.toBeNull();
  const [, dynamodb, s3] = endpoints as RegExpExecArray;
  await until(
    async () => !(await answers(`${url}/healthz`)) && !(await answers(dynamodb)) && !(await answers(s3)),
    30_000,
    "the server, DynamoDB Local and s3rver to stop",
  );
}, 300_000);
