/** `pisync insights` against `npm start`: totals and a table per grouping, JSON, and usage errors. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCli, machine, type Server, startServer } from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** What a hostile session puts in names: escape, bell, right-to-left override. */
const CONTROLS = ["\u001b", "\u0007", "\u202e"];

let server: Server;
let dataDir: string;
let m: ReturnType<typeof machine>;

/** A session of today: a user message, and a reply by `model` costing `cost`, calling `read`. */
function session(id: string, model: string, cost: number): string {
  const now = new Date().toISOString();
  return [
    { type: "session", version: 3, id, timestamp: now, cwd: "/home/dev/\u001b]0;pwned\u0007shop" },
    { type: "message", id: "u1", parentId: null, timestamp: now, message: { role: "user", content: "hi" } },
    {
      type: "message",
      id: "a1",
      parentId: "u1",
      timestamp: now,
      message: {
        role: "assistant",
        provider: "anthropic",
        model,
        content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } }],
        usage: { input: 1000, output: 200, cacheRead: 0, cacheWrite: 0, totalTokens: 1200, cost: { total: cost } },
      },
    },
  ]
    .map((line) => `${JSON.stringify(line)}\n`)
    .join("");
}

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-insights-cli-"));
  server = await startServer(dataDir);
  m = machine(server.url, server.token);
  for (const [id, model, cost] of [
    ["s-one", "claude-sonnet-4-5", 1.25],
    ["s-two", "claude-\u202eevil", 0.5],
  ] as const) {
    const r = await fetch(`${server.url}/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${server.token}`, "Upload-Offset": "0" },
      body: session(id, model, cost),
    });
    expect(r.ok).toBe(true);
  }
}, 120_000);

afterAll(async () => {
  await m?.cleanup();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("pisync insights", () => {
  it("prints the totals and the models, most costly first, without control characters", () => {
    const r = m.run(["insights"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/: \$1\.75, 2\.4k tokens, .* 2 turns in 2 sessions$/);
    // The range it used, in words and days.
    expect(lines[0]).toMatch(/^last 30 days \(\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}, UTC\): /);
    expect(lines[1]).toMatch(/^model\s+cost\s+tokens/);
    expect(lines[2]).toMatch(/^anthropic\/claude-sonnet-4-5\s+\$1\.25/);
    expect(lines[3]).toMatch(/^anthropic\/claude-.*evil\s+\$0\.50/);
    for (const c of CONTROLS) expect(r.stdout).not.toContain(c);
  });

  it("groups by project, tool and day", () => {
    const project = m.run(["insights", "--by", "project"]);
    expect(project.stdout).toMatch(/\n\/home\/dev\/.*shop\s+\$1\.75/);
    for (const c of CONTROLS) expect(project.stdout).not.toContain(c);
    const tool = m.run(["insights", "--by", "tool"]);
    expect(tool.stdout).toMatch(/\nread\s+2\s/);
    const day = m.run(["insights", "--by", "day", "--since", "7d"]);
    expect(day.stdout.trimEnd().split("\n")).toHaveLength(2 + 7);
    expect(day.stdout.trimEnd().split("\n").pop()).toMatch(/\$1\.75/);
  });

  it("--since all counts from the first day with usage to today, and says so", () => {
    const today = new Date().toISOString().slice(0, 10);
    const r = m.run(["insights", "--since", "all"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(new RegExp(`^all time \\(${today} to ${today}, UTC\\): \\$1\\.75`));
    const long = m.run(["insights", "--since", "1000d", "--json"]);
    expect(long.code, long.stderr).toBe(0);
    expect(JSON.parse(long.stdout)).toMatchObject({ from: today, to: today, totals: { cost: 1.75 } });
  });

  it("--json prints the whole report with control characters escaped", () => {
    const r = m.run(["insights", "--json"]);
    expect(r.code).toBe(0);
    for (const c of CONTROLS) expect(r.stdout).not.toContain(c);
    const report = JSON.parse(r.stdout) as { totals: { cost: number }; byModel: { key: string }[] };
    expect(report.totals.cost).toBe(1.75);
    expect(report.byModel.map((g) => g.key)).toContain("anthropic/claude-\u202eevil");
  });

  it("refuses a bad --since or --by as a usage error", () => {
    for (const args of [["--since", "soon"], ["--by", "colour"], ["extra"]]) {
      const r = m.run(["insights", ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage: pisync insights");
    }
  });
});
