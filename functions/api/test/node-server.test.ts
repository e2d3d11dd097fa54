/**
 * The Node server (`npm start`) as clients meet it over a socket: share pages are rendered and
 * masked by the worker pool; per-token and per-link request limits answer 429 with
 * Retry-After, and /healthz is never limited.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startNodeServer } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-node-"));
let server: Awaited<ReturnType<typeof startNodeServer>>;

beforeAll(async () => {
  server = await startNodeServer({
    port: 0,
    host: "127.0.0.1",
    dataDir: dir,
    log: () => {},
    rateLimits: { perIp: 40, perToken: 40, perLink: 3, windowMs: 60_000 },
  });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const auth = () => ({ Authorization: `Bearer ${server.token}` });

async function share(id: string): Promise<string> {
  const body = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
  const put = await fetch(`${server.url}/v1/sessions/${id}`, {
    method: "PATCH",
    headers: { ...auth(), "Upload-Offset": "0" },
    body,
  });
  expect(put.status).toBe(200);
  const created = await fetch(`${server.url}/v1/sessions/${id}/shares`, {
    method: "POST",
    headers: { ...auth(), "Content-Type": "application/json" },
    body: "{}",
  });
  return ((await created.json()) as { url: string }).url;
}

it("renders and masks share pages in the worker pool, not on the event loop", async () => {
  const url = await share("pooled");
  const before = server.workerTasks;
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("<!doctype html>");
  expect(server.workerTasks).toBeGreaterThan(before); // the page and its masking ran in a worker
  const raw = await fetch(`${url}/raw`);
  expect(await raw.text()).toContain('"type":"session"');
  expect(server.workerTasks).toBeGreaterThan(before + 1);
});

it("limits requests per link and per token with 429 and Retry-After; /healthz is never limited", async () => {
  const [a, b] = [await share("limited-a"), await share("limited-b")];
  // Links' budgets are their own: "pooled" used some of the client's, not of these.
  for (let i = 0; i < 3; i++) expect((await fetch(a)).status).toBe(200);
  const limited = await fetch(`${a}/raw`);
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
  expect(await limited.json()).toMatchObject({ code: "rate_limited" });
  expect((await fetch(b)).status).toBe(200); // another link has its own budget

  let status = 200;
  let used = 0;
  while (status !== 429 && used < 100) {
    status = (await fetch(`${server.url}/v1/sessions`, { headers: auth() })).status;
    used++;
  }
  expect(status).toBe(429);
  expect(used).toBeLessThanOrEqual(40);
  for (let i = 0; i < 20; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
});
