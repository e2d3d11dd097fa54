/**
 * MCP benchmark: a search and a first `read_session` page through `POST /mcp` (the official SDK's
 * client over Streamable HTTP, on a loopback port), against the same search through `/v1/search`
 * and the same branch through `/v1/sessions/:id/md`, in the same run; p50 and p95 of each and
 * the ratios. `MCP_SESSIONS` (default 10,000) small sessions plus one of ~2 MB (200 turns) are
 * appended through core's `Appender` into an embedded store in a temp folder, then indexed for
 * search. `MCP_RUNS` (default 30) requests of each kind after 3 to warm up, each MCP request in
 * turn with its HTTP counterpart.
 *
 * `MCP_SESSIONS=500 MCP_RUNS=10 npm run bench:mcp` runs it small.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createApp } from "@pisync/api";
import { Appender, SearchIndexer, storedLines, Tokens } from "@pisync/core";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { embeddedStores } from "@pisync/store/embedded";

const SESSIONS = Number(process.env.MCP_SESSIONS ?? 10_000);
const RUNS = Number(process.env.MCP_RUNS ?? 30);
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const at = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();

function small(i: number): string {
  const id = `bench-${i}`;
  return (
    line({ type: "session", version: 3, id, timestamp: at(i), cwd: `/home/dev/project-${i % 20}` }) +
    line({
      type: "message",
      id: "u1",
      parentId: null,
      timestamp: at(i),
      message: { role: "user", content: `Task ${i}: the cart total in module ${i % 97} rounds twice`, timestamp: 1 },
    }) +
    line({
      type: "message",
      id: "a1",
      parentId: "u1",
      timestamp: at(i),
      message: { role: "assistant", content: [{ type: "text", text: `Fixed task ${i}.` }], timestamp: 2 },
    })
  );
}

function large(): string {
  let text = line({ type: "session", version: 3, id: "bench-large", timestamp: at(0), cwd: "/home/dev/large" });
  let parent: string | null = null;
  for (let i = 0; i < 200; i++) {
    text += line({
      type: "message",
      id: `u${i}`,
      parentId: parent,
      timestamp: at(i),
      message: { role: "user", content: `step ${i} ${"detail ".repeat(700)}`, timestamp: 1 },
    });
    text += line({
      type: "message",
      id: `a${i}`,
      parentId: `u${i}`,
      timestamp: at(i),
      message: {
        role: "assistant",
        content: [{ type: "text", text: `done ${i} ${"words ".repeat(700)}` }],
        timestamp: 2,
      },
    });
    parent = `a${i}`;
  }
  return text;
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: pick(0.5), p95: pick(0.95) };
}

/** Samples of two requests taken in turns (which goes first alternates): neither gets a warmer cache. */
async function pair(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number[], number[]]> {
  for (let i = 0; i < 3; i++) await Promise.all([a(), b()]);
  const samples: [number[], number[]] = [[], []];
  const one = async (what: () => Promise<unknown>, into: number[]) => {
    const t = performance.now();
    await what();
    into.push(performance.now() - t);
  };
  for (let i = 0; i < RUNS; i++) {
    if (i % 2) {
      await one(a, samples[0]);
      await one(b, samples[1]);
    } else {
      await one(b, samples[1]);
      await one(a, samples[0]);
    }
  }
  return samples;
}

const dir = mkdtempSync(join(tmpdir(), "pisync-bench-mcp-"));
try {
  const stores = embeddedStores(join(dir, "data"));
  const appender = new Appender(stores);
  const t0 = performance.now();
  for (let i = 0; i < SESSIONS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, SESSIONS - i) }, (_, k) =>
        appender.append({
          userId: "bench",
          sessionId: `bench-${i + k}`,
          offset: 0,
          body: new TextEncoder().encode(small(i + k)),
        }),
      ),
    );
  }
  await appender.append({
    userId: "bench",
    sessionId: "bench-large",
    offset: 0,
    body: new TextEncoder().encode(large()),
  });
  const index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(stores));
  const indexer = new SearchIndexer(stores, index, { users: async () => ["bench"] });
  await indexer.catchUp();
  console.error(`generated and indexed ${SESSIONS + 1} sessions in ${Math.round(performance.now() - t0)} ms`);

  const app = createApp({ stores, log: () => {}, search: { index, indexer } });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = (await new Tokens(stores.meta).create("bench", "bench")).token;
  const headers = { Authorization: `Bearer ${token}` };
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));

  const query = "cart total module";
  const get = async (path: string) => {
    const r = await fetch(`${url}${path}`, { headers });
    if (!r.ok) throw new Error(`${path}: ${r.status}`);
    return r.text();
  };
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
    return r;
  };
  const [search, mcpSearch] = await pair(
    () => get(`/v1/search?q=${encodeURIComponent(query)}&limit=10`),
    () => call("search_sessions", { query, limit: 10 }),
  );
  const [md, mcpRead] = await pair(
    () => get("/v1/sessions/bench-large/md"),
    () => call("read_session", { id: "bench-large" }),
  );
  const rows: [string, number[]][] = [
    ["GET /v1/search (limit 10)", search],
    ["MCP search_sessions (limit 10)", mcpSearch],
    ["GET /v1/sessions/:id/md (whole, ~2 MB session)", md],
    ["MCP read_session, first page", mcpRead],
  ];
  const s = Object.fromEntries(rows.map(([name, samples]) => [name, stats(samples)]));
  console.log(`${SESSIONS + 1} sessions, ${RUNS} runs each (ms)`);
  for (const [name] of rows)
    console.log(`${name.padEnd(48)} p50 ${s[name].p50.toFixed(1)}  p95 ${s[name].p95.toFixed(1)}`);
  const ratio = (a: string, b: string) =>
    `p50 ${(s[a].p50 / s[b].p50).toFixed(2)}×, p95 ${(s[a].p95 / s[b].p95).toFixed(2)}×`;
  console.log(`search through MCP / through /v1/search: ${ratio(rows[1][0], rows[0][0])}`);
  console.log(`first read_session page / the whole /md: ${ratio(rows[3][0], rows[2][0])}`);
  await client.close();
  await new Promise((resolve) => server.close(resolve));
  index.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
