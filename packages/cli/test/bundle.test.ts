/**
 * The built CLI: what every start reads (`pisync.mjs` and the chunks it imports, which
 * `pisync watch` holds all day) stays within 150 KB; the MCP SDK is in `pisync-mcp.mjs` alone,
 * which `pisync mcp` loads and serves from; a command split into a chunk runs too.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { buildCli, cliPath } from "@pisync/testing/cli";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readAtStart } from "../../../scripts/bundle-start.js";
import packageJson from "../package.json" with { type: "json" };

/** The most a start may read, in bytes. */
const START_BUDGET = 150 * 1024;
/** A string of the MCP SDK that minifying keeps (a method of the protocol). */
const SDK_MARK = "notifications/initialized";
const dist = dirname(cliPath);
const home = mkdtempSync(join(tmpdir(), "pisync-bundle-"));
// A well-formed token and a server that is not there: enough for what runs before a request.
const env = {
  PATH: process.env.PATH ?? "",
  HOME: home,
  PISYNC_ENDPOINT: "http://127.0.0.1:9",
  PISYNC_TOKEN: `pst_${"a".repeat(43)}`,
};

beforeAll(() => buildCli(), 120_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

it("reads at most 150 KB at start, without the MCP SDK", () => {
  const files = readAtStart(cliPath);
  const bytes = [...files.values()].reduce((n, size) => n + size, 0);
  expect(bytes).toBeLessThanOrEqual(START_BUDGET);
  // The parse found the chunks (the engine is split across some), and none of them is the SDK's.
  expect(files.size).toBeGreaterThan(1);
  for (const path of files.keys()) expect(readFileSync(path, "utf8")).not.toContain(SDK_MARK);
  expect(readFileSync(join(dist, "pisync-mcp.mjs"), "utf8")).toContain(SDK_MARK);
});

it("runs: --version, and a command that lives in a chunk of its own", () => {
  expect(execFileSync(cliPath, ["--version"], { env, encoding: "utf8" })).toBe(`${packageJson.version}\n`);
  expect(execFileSync(process.execPath, [cliPath, "team", "--help"], { env, encoding: "utf8" })).toContain(
    "usage: pisync team",
  );
});

it("serves MCP from pisync-mcp.mjs when pisync mcp runs", async () => {
  expect(existsSync(join(dist, "pisync-mcp.mjs"))).toBe(true);
  const client = new Client({ name: "bundle-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, "mcp"], env }));
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("search_sessions");
  } finally {
    await client.close();
  }
}, 30_000);
