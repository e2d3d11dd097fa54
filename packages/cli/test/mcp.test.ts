/**
 * `pisync mcp` (the bundled CLI over stdio) with the official SDK's client, against `npm start`
 * on both store pairs: every tool (pull_session as `pisync pull`), a long session paged through,
 * masking, tenancy (a second user's token), a refused token, nothing but protocol on stdout.
 * And pi 1.6.0 as the client (`pi mcp add` / `pi mcp list` under Node 22): it connects to the
 * stdio server and to the server's `POST /mcp`, and lists their tools.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MCP_PAGE_BYTES } from "@pisync/protocol";
import { line } from "@pisync/testing";
import { buildCli, cliPath, machine, type Server, startServer, testAwsEnv } from "@pisync/testing/cli";
import { node22 } from "@pisync/testing/node22";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const GITHUB = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, 0) + s * 1000).toISOString();
const msg = (id: string, parentId: string | null, s: number, message: Record<string, unknown>) =>
  line({ type: "message", id, parentId, timestamp: at(s), message: { timestamp: s, ...message } });
const header = (id: string) => line({ type: "session", version: 3, id, timestamp: at(0), cwd: "/home/dev/app" });

function session(id: string, word: string, turns: number) {
  // A first message longer than a preview: the server makes the title again from it, masked.
  const first = `The ${word} plan; my token is ${GITHUB}. ${"And more detail. ".repeat(10)}`;
  let text = header(id) + msg("u0", null, 1, { role: "user", content: first });
  let parent = "u0";
  for (let i = 1; i <= turns; i++) {
    text += msg(`a${i}`, parent, i * 2, {
      role: "assistant",
      content: [{ type: "text", text: `MARK-${i} ${"w ".repeat(4000)}` }],
    });
    text += msg(`u${i}`, `a${i}`, i * 2 + 1, { role: "user", content: `go on ${i}` });
    parent = `u${i}`;
  }
  return text;
}

const textOf = (result: unknown) =>
  ((result as { content: { text: string }[] }).content ?? []).map((c) => c.text).join("");
const inside = (text: string) =>
  (/<<<SESSION-DATA ([0-9a-f]{16})\n([\s\S]*)\nSESSION-DATA \1>>>/.exec(text) as RegExpExecArray)[2];

const PI = new URL("../../../node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js", import.meta.url)
  .pathname;

/** `npm run token` for another user of the same server (its store and settings). */
function tokenFor(user: string, dataDir: string, args: string[], env: NodeJS.ProcessEnv): string {
  const out = execFileSync("npm", ["run", "--silent", "token", "--", "--user", user, "--data", dataDir, ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return out.trim().split("\n").pop() as string;
}

for (const store of ["embedded", "aws"] as const) {
  describe(`pisync mcp over stdio (${store})`, () => {
    let server: Server;
    let dataDir: string;
    let bobToken: string;
    let m: ReturnType<typeof machine>;
    const clients: Client[] = [];
    const stderr: string[] = [];
    const protocolErrors: Error[] = [];

    async function connect(env: NodeJS.ProcessEnv) {
      const client = new Client({ name: "pisync-test", version: "1.0.0" });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, "mcp"],
        env: env as Record<string, string>,
        stderr: "pipe",
      });
      transport.stderr?.on("data", (chunk) => stderr.push(String(chunk)));
      client.onerror = (error) => protocolErrors.push(error);
      await client.connect(transport);
      clients.push(client);
      return client;
    }

    beforeAll(async () => {
      buildCli();
      dataDir = mkdtempSync(join(tmpdir(), "pisync-mcp-cli-"));
      const aws =
        store === "aws"
          ? testAwsEnv(
              { s3: inject("s3Endpoint"), dynamodb: inject("dynamodbEndpoint"), bucket: inject("s3Bucket") },
              `pisync-mcp-${Date.now()}`,
            )
          : undefined;
      const storeArgs = aws ? ["--store", "aws", "--create"] : [];
      server = await startServer(dataDir, { args: storeArgs, env: aws });
      bobToken = tokenFor("bob", dataDir, storeArgs, aws ?? {});
      const put = async (token: string, id: string, body: string) => {
        const r = await fetch(`${server.url}/v1/sessions/${id}`, {
          method: "PUT",
          headers: { Authorization: `Bearer ${token}` },
          body,
        });
        expect(r.status).toBe(200);
      };
      await put(server.token, "s-mine", session("s-mine", "osprey", 40));
      await put(bobToken, "s-bob", session("s-bob", "walrus", 1));
      m = machine(server.url, server.token);
    }, 180_000);
    afterAll(async () => {
      for (const client of clients) await client.close();
      await server?.stop();
      await m?.cleanup();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it("serves every tool: search, list, read (paged, masked), context, pull", async () => {
      const client = await connect(m.env);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        "search_sessions",
        "list_sessions",
        "read_session",
        "get_context",
        "pull_session",
      ]);

      let found = "";
      for (let i = 0; i < 100 && !found.includes("s-mine"); i++) {
        found = textOf(await client.callTool({ name: "search_sessions", arguments: { query: "osprey" } }));
        if (!found.includes("s-mine")) await new Promise((r) => setTimeout(r, 100));
      }
      expect(found).toContain('"id": "s-mine"');
      const listed = inside(textOf(await client.callTool({ name: "list_sessions", arguments: {} })));
      expect(JSON.parse(listed).map((s: { id: string }) => s.id)).toEqual(["s-mine"]);

      // Paged through: every page at most 64 KiB, every turn once, in order, the token masked.
      const pages: string[] = [];
      let cursor: string | undefined;
      do {
        const result = await client.callTool({
          name: "read_session",
          arguments: { id: "s-mine", ...(cursor ? { cursor } : {}) },
        });
        const text = textOf(result);
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MCP_PAGE_BYTES);
        pages.push(inside(text));
        cursor = (result.structuredContent as { nextCursor?: string }).nextCursor;
      } while (cursor);
      expect(pages.length).toBeGreaterThan(2);
      const whole = pages.join("");
      expect(whole).not.toContain(GITHUB);
      expect([...whole.matchAll(/MARK-(\d+) /g)].map((x) => Number(x[1]))).toEqual(
        Array.from({ length: 40 }, (_, i) => i + 1),
      );

      const context = await client.callTool({ name: "get_context", arguments: { id: "s-mine" } });
      expect(Buffer.byteLength(textOf(context))).toBeLessThanOrEqual(MCP_PAGE_BYTES);
      expect(inside(textOf(context))).toMatch(/^\{"messages":\[/);

      const pulled = await client.callTool({ name: "pull_session", arguments: { id: "s-mine", cwd: "/home/dev/app" } });
      expect(pulled.isError).toBeFalsy();
      const path = (pulled.structuredContent as { path: string }).path;
      expect(path.startsWith(m.sessionsRoot)).toBe(true);
      expect(existsSync(path)).toBe(true);
      expect(readFileSync(path, "utf8")).toBe(session("s-mine", "osprey", 40));
      expect(textOf(pulled)).toContain(path);
      expect(protocolErrors).toEqual([]);
    }, 120_000);

    it("never shows another user's session; a refused token is an error result", async () => {
      const client = await connect(m.env);
      for (const name of ["read_session", "get_context", "pull_session"]) {
        const result = await client.callTool({ name, arguments: { id: "s-bob" } });
        expect(result.isError).toBe(true);
        expect(textOf(result)).not.toContain("walrus");
      }
      const search = textOf(await client.callTool({ name: "search_sessions", arguments: { query: "walrus" } }));
      expect(search).not.toContain("s-bob");
      const bob = await connect({ ...m.env, PISYNC_TOKEN: bobToken });
      expect(textOf(await bob.callTool({ name: "list_sessions", arguments: {} }))).not.toContain("s-mine");
      expect((await bob.callTool({ name: "read_session", arguments: { id: "s-mine" } })).isError).toBe(true);
      const refused = await connect({ ...m.env, PISYNC_TOKEN: `pst_${"x".repeat(43)}` });
      const answer = await refused.callTool({ name: "list_sessions", arguments: {} });
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/refused the token/);
      expect(protocolErrors).toEqual([]);
      expect(stderr.join("")).not.toContain(server.token);
    }, 60_000);

    it("without a login says so on stderr and exits 3, nothing on stdout", () => {
      const { PISYNC_TOKEN: _, ...env } = m.env;
      const result = spawnSync(process.execPath, [cliPath, "mcp"], { env, encoding: "utf8", input: "" });
      expect(result.status).toBe(3);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/login|PISYNC_TOKEN/);
    });

    it("is what pi 1.6.0 connects to: the stdio server and the remote one, their tools listed", () => {
      const agentDir = mkdtempSync(join(tmpdir(), "pisync-pi-mcp-"));
      try {
        const env = { ...m.env, PI_CODING_AGENT_DIR: agentDir };
        const pi = (args: string[]) =>
          spawnSync(node22, [PI, ...args], { env, encoding: "utf8", timeout: 90_000, cwd: agentDir });
        // As the README says, with this build of the CLI for `pisync`.
        expect(pi(["mcp", "add", "pisync", "--", process.execPath, cliPath, "mcp"]).status).toBe(0);
        expect(
          pi(["mcp", "add", "remote", "--url", `${server.url}/mcp`, "--bearer-token-env-var", "PISYNC_TOKEN"]).status,
        ).toBe(0);
        const listed = pi(["mcp", "list", "--json"]);
        expect(listed.status, listed.stderr + listed.stdout).toBe(0);
        const servers = (JSON.parse(listed.stdout) as { servers: { name: string; state: string; tools: string[] }[] })
          .servers;
        const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
        expect(byName.pisync).toMatchObject({ state: "connected" });
        expect(byName.pisync.tools).toEqual([
          "search_sessions",
          "list_sessions",
          "read_session",
          "get_context",
          "pull_session",
        ]);
        expect(byName.remote).toMatchObject({ state: "connected" });
        expect(byName.remote.tools).toEqual(["search_sessions", "list_sessions", "read_session", "get_context"]);
      } finally {
        rmSync(agentDir, { recursive: true, force: true });
      }
    }, 120_000);
  });
}
