/**
 * The Node server's request limits over a socket, each paid by what vouches for a request:
 * a token's requests by that token (never by the address: a first backup, or neighbours behind
 * one NAT, do not share a budget), a share link's reads by the link only once its signature
 * checks (forged tokens never lock it), and everything unverifiable (no credential, a wrong
 * token, a forged link) by the client address. Every refusal is 429 with Retry-After.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RATE_LIMITS, type RateLimits, startNodeServer } from "../src/index.js";

type Running = Awaited<ReturnType<typeof startNodeServer>>;

/** A Node server with `limits` on a fresh data folder, for the tests of one block. */
function serverWith(limits: RateLimits) {
  const dir = mkdtempSync(join(tmpdir(), "pisync-limits-"));
  const handle = { server: undefined as unknown as Running };
  beforeAll(async () => {
    handle.server = await startNodeServer({
      port: 0,
      host: "127.0.0.1",
      dataDir: dir,
      log: () => {},
      rateLimits: limits,
    });
  });
  afterAll(async () => {
    await handle.server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return handle;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const BAD_TOKEN = `pst_${"x".repeat(43)}`;

/** Makes a session and a share of it; returns the link. */
async function shareOf(server: Running, token: string, id: string): Promise<string> {
  const body = `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
  const put = await fetch(`${server.url}/v1/sessions/${id}`, {
    method: "PATCH",
    headers: { ...bearer(token), "Upload-Offset": "0" },
    body,
  });
  expect(put.status).toBe(200);
  const made = await fetch(`${server.url}/v1/sessions/${id}/shares`, {
    method: "POST",
    headers: { ...bearer(token), "Content-Type": "application/json" },
    body: "{}",
  });
  return ((await made.json()) as { url: string }).url;
}

/** The same link with its signature changed: forged. */
function forged(link: string, n: number): string {
  const [base, signature] = [link.slice(0, link.lastIndexOf(".") + 1), link.slice(link.lastIndexOf(".") + 1)];
  return `${base}${signature.slice(0, -3)}${n.toString(36).padStart(3, "0").slice(-3)}`;
}

/** Sends `n` requests one after another; the statuses. */
async function statuses(n: number, request: (i: number) => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await request(i);
    await r.arrayBuffer();
    out.push(r.status);
  }
  return out;
}

async function expectTooMany(response: Response) {
  expect(response.status).toBe(429);
  expect(Number(response.headers.get("Retry-After"))).toBeGreaterThan(0);
  expect(await response.json()).toMatchObject({ code: "rate_limited" });
}

describe("per token, per verified link, per address for the rest", () => {
  const running = serverWith({ perIp: 40, perToken: 60, perLink: 5, windowMs: 60_000 });
  let second = "";

  it("a token's requests are its own budget: more than the address's limit, then 429 for it alone", async () => {
    const { server } = running;
    const made = await fetch(`${server.url}/v1/tokens`, {
      method: "POST",
      headers: { ...bearer(server.token), "Content-Type": "application/json" },
      body: JSON.stringify({ name: "second machine" }),
    });
    second = ((await made.json()) as { token: string }).token;
    // Past the address's 40: a token is not limited per address.
    const used = await statuses(59, () =>
      fetch(`${server.url}/v1/sessions?limit=1`, { headers: bearer(server.token) }),
    );
    expect(used.filter((s) => s !== 200)).toEqual([]);
    await expectTooMany(await fetch(`${server.url}/v1/sessions?limit=1`, { headers: bearer(server.token) }));
    // Another token from the same address has its own budget.
    expect((await fetch(`${server.url}/v1/sessions?limit=1`, { headers: bearer(second) })).status).toBe(200);
  });

  it("forged links never use up the real link's budget; the real one's reads do", async () => {
    const { server } = running;
    const link = await shareOf(server, second, "guarded");
    const forgeries = await statuses(30, (i) => fetch(forged(link, i)));
    expect(forgeries.filter((s) => s !== 404)).toEqual([]);
    const reads = await statuses(5, () => fetch(link));
    expect(reads).toEqual([200, 200, 200, 200, 200]);
    await expectTooMany(await fetch(`${link}/raw`));
  });

  it("unverifiable requests are limited per address; a good token from that address still works", async () => {
    const { server } = running;
    // The forged links above spent 30 of this address's 40; wrong tokens spend the rest.
    let refusedAfter = 0;
    while (refusedAfter < 50) {
      const r = await fetch(`${server.url}/v1/sessions`, { headers: bearer(BAD_TOKEN) });
      await r.arrayBuffer();
      if (r.status === 429) break;
      expect(r.status).toBe(401);
      refusedAfter++;
    }
    expect(refusedAfter).toBeLessThanOrEqual(10);
    await expectTooMany(await fetch(`${server.url}/v1/sessions`, { headers: bearer(BAD_TOKEN) }));
    await expectTooMany(await fetch(`${server.url}/openapi.json`)); // anonymous: refused at once
    expect((await fetch(`${server.url}/v1/sessions?limit=1`, { headers: bearer(second) })).status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe("per owner of links", () => {
  const running = serverWith({ perIp: 200, perToken: 200, perLink: 5, perOwnerLinks: 8, windowMs: 60_000 });

  it("one owner's links share one budget: making more links does not make more budget", async () => {
    const { server } = running;
    const [first, second] = [
      await shareOf(server, server.token, "owned-a"),
      await shareOf(server, server.token, "owned-b"),
    ];
    // Each link's own 5, but the owner's 8 in all.
    expect(await statuses(5, () => fetch(first))).toEqual([200, 200, 200, 200, 200]);
    expect(await statuses(3, () => fetch(second))).toEqual([200, 200, 200]);
    await expectTooMany(await fetch(second));
  });
});

describe("the default limits", () => {
  const running = serverWith(DEFAULT_RATE_LIMITS);

  it("300 forged requests for a real link's id leave the link readable", async () => {
    const { server } = running;
    const link = await shareOf(server, server.token, "targeted");
    const forgeries = await statuses(300, (i) => fetch(forged(link, i)));
    expect(forgeries.filter((s) => s === 429)).toEqual([]);
    const page = await fetch(link);
    expect(page.status).toBe(200);
  }, 120_000);
});
