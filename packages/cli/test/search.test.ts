/** `pisync search` against `npm start`: hits with snippets and pull commands, JSON, and usage errors. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assistantMessage, entry } from "@pisync/testing";
import { buildCli, machine, type Server, startServer } from "@pisync/testing/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: Server;
let dataDir: string;
let m: ReturnType<typeof machine>;

const session = (id: string, text: string) =>
  [
    { type: "session", version: 3, id, timestamp: "2026-02-01T00:00:00.000Z", cwd: "/home/dev/search" },
    {
      type: "message",
      id: "e0000001",
      parentId: null,
      timestamp: "2026-02-01T00:00:01.000Z",
      message: { role: "user", content: text, timestamp: 1 },
    },
  ]
    .map((line) => `${JSON.stringify(line)}\n`)
    .join("");

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "pisync-search-cli-"));
  server = await startServer(dataDir);
  m = machine(server.url, server.token);
  const toolCall = entry(
    "e0000002",
    "e0000001",
    2,
    assistantMessage([{ type: "toolCall", id: "t1", name: "bash", arguments: { command: 'rg "kingfisher" src\nls' } }]),
  );
  for (const [id, body] of [
    ["s-heron", session("s-heron", "the grey heron waits by the retry loop")],
    ["s-egret", session("s-egret", "an egret, and a \u001b[31mred\u001b[0m escape")],
    ["s-polyfill", session("s-polyfill", "Temporal without a polyfill")],
    ["s-temporal", session("s-temporal", "Temporal arrives natively")],
    ["s-tool", `${session("s-tool", "look for the bird")}${JSON.stringify(toolCall)}\n`],
  ]) {
    const r = await fetch(`${server.url}/v1/sessions/${id}`, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${server.token}`, "Upload-Offset": "0" },
      body,
    });
    expect(r.ok).toBe(true);
  }
  // The server indexes in the background: wait (at most 10 s) until the sessions are searchable.
  const until = Date.now() + 10_000;
  for (const q of ["heron", "egret", "natively", "kingfisher"]) {
    for (;;) {
      const r = await fetch(`${server.url}/v1/search?q=${q}`, { headers: { Authorization: `Bearer ${server.token}` } });
      const { sessions } = (await r.json()) as { sessions: unknown[] };
      if (sessions.length > 0 || Date.now() > until) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}, 120_000);

afterAll(async () => {
  await m?.cleanup();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("pisync search", () => {
  it("prints each hit's session, entry, snippet and pull command", () => {
    const r = m.run(["search", '"grey heron"']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        "s-heron  /home/dev/search",
        "  e0000001  user  the [grey heron] waits by the retry loop",
        "  pisync pull s-heron",
        "",
      ].join("\n"),
    );
  });

  it("prints snippets without their control characters", () => {
    const r = m.run(["search", "egret"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("\u001b");
    expect(r.stdout).toContain("pisync pull s-egret");
  });

  it("takes a query that starts with an exclusion", () => {
    const r = m.run(["search", "-polyfill Temporal"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("pisync pull s-temporal");
    expect(r.stdout).not.toContain("s-polyfill");
    expect(m.run(["search", "--limit", "5", "-polyfill Temporal"]).stdout).toContain("s-temporal");
  });

  it("shows a tool call's snippet as text, without JSON escapes", () => {
    const r = m.run(["search", "kingfisher"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('tool_call  bash command: rg "[kingfisher]" src ls');
    expect(r.stdout).not.toContain('\\"');
  });

  it("answers JSON with --json, and says when nothing matches", () => {
    const r = m.run(["search", "heron OR egret", "--json", "--limit", "5"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).sessions).toEqual([]);
    const none = m.run(["search", "albatross"]);
    expect(none).toMatchObject({ code: 0, stdout: "no sessions match\n" });
  });

  it("refuses bad arguments and bad queries with exit 2", () => {
    for (const [args, message] of [
      [["search"], "expects one argument: QUERY"],
      [["search", "x", "--limit", "0"], "--limit: a whole number from 1 to 100"],
      [["search", "x", "--bogus"], "unknown option --bogus"],
      [["search", "role:robot"], 'role: is user, assistant or tool, not "robot"'],
      [["search", '"open'], "unclosed quote"],
    ] as const) {
      const r = m.run([...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
    }
    const help = m.run(["search", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("examples:");
  });
});
