/**
 * `pisync insights` against a report whose sums are not numbers (a server that summed a cost of
 * `1e308` twice answered `null`, and a hostile one may answer a string): every grouping prints,
 * showing "—" where a number cannot be shown, and exits 0.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Io } from "../src/commands/common.js";
import { main } from "../src/main.js";

const broken = {
  input: null,
  output: "NaN",
  cacheRead: 0,
  cacheWrite: 0,
  tokens: null,
  cost: null,
  ms: "Infinity",
  turns: 1,
  sessions: 1,
};
const REPORT = {
  from: "2026-04-01",
  to: "2026-04-30",
  uncounted: 0,
  totals: broken,
  ...Object.fromEntries(
    ["byDay", "byWeek", "byModel", "byProject", "byDevice"].map((k) => [k, [{ key: "k", label: "k", ...broken }]]),
  ),
  byTool: [{ tool: "read", calls: 1, ms: null, sessions: 1 }],
  topSessions: [],
};

let server: Server;
let url: string;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "pisync-insights-numbers-"));
  server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(REPORT));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

async function run(args: string[]) {
  let out = "";
  let err = "";
  const io: Io = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_STATE_HOME: join(home, ".state"),
      PISYNC_ENDPOINT: url,
      PISYNC_TOKEN: `pst_${"a".repeat(43)}`,
    },
    isTTY: false,
  };
  return { code: await main(args, io), out, err };
}

describe("pisync insights on sums that are not numbers", () => {
  it.each([["model"], ["project"], ["machine"], ["day"], ["week"], ["tool"]])(
    "--by %s prints — and exits 0",
    async (by) => {
      const { code, out, err } = await run(["insights", "--by", by]);
      expect(code, err).toBe(0);
      expect(out.split("\n")[0]).toBe(
        "last 30 days (2026-04-01 to 2026-04-30, UTC): —, — tokens, — of model time, 1 turns in 1 sessions",
      );
      expect(out).not.toMatch(/Infinity|NaN|null/);
    },
  );
});
