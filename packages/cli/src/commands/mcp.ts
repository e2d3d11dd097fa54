/**
 * `mcp`: pisync's MCP server over stdio, for pi, Claude Code and other agents. The tools are
 * `@pisync/protocol`'s (the server's `POST /mcp` has the same); here they read through the HTTP
 * API with the saved login (or PISYNC_ENDPOINT / PISYNC_TOKEN), and `pull_session` brings a
 * session onto this machine as `pisync pull` does. stdout carries the protocol and nothing
 * else: what the CLI says goes to stderr.
 */

// Imported statically: a dynamic import of the SDK inside one bundle makes esbuild wrap zod, which
// the bundle's other modules then use before it is set up, and as a chunk of the main bundle it
// would keep all of zod in the engine's start. This module is the entry of its own bundle instead
// (mcp-entry.ts): the main one loads it when `pisync mcp` runs (commands/mcp-load.ts).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type McpSource, ReadPage, SESSION_ID, type SearchPage, type SessionList } from "@pisync/protocol";
import { MCP_TOOLS, registerMcpTools } from "@pisync/protocol/mcp";
import type * as z from "zod/mini";
import * as zm from "zod/mini";
import packageJson from "../../package.json" with { type: "json" };
import type { Api } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { api, type CommandHelp, type Io, parse } from "./common.js";
import { pullSession } from "./remote.js";

const MCP_HELP: CommandHelp = {
  usage: "pisync mcp",
  args: [],
  help: `An MCP server over stdio: an agent reads your backed-up sessions through it. Its tools:
${MCP_TOOLS.map((t) => `  ${t.name}`).join("\n")}
It uses the saved login (pisync login) or PISYNC_ENDPOINT and PISYNC_TOKEN.

examples:
  pi mcp add pisync -- pisync mcp
  claude mcp add pisync -- pisync mcp`,
};

const Args = zm.object({ positionals: zm.tuple([]) });

/** The tools' source over the HTTP API (the server answers for the token's user only). */
export function apiSource(client: Api, io: Io): McpSource {
  const id = (sessionId: string) => {
    // An id outside the safe set names no session: not found, as the server would say.
    if (!SESSION_ID.test(sessionId)) throw Object.assign(new Error("no such session"), { code: "not_found" });
    return encodeURIComponent(sessionId);
  };
  return {
    search: (query, limit) =>
      client.json<z.infer<typeof SearchPage>>(`/v1/search?q=${encodeURIComponent(query)}&limit=${limit}`),
    list: (limit, cursor) =>
      client.json<z.infer<typeof SessionList>>(
        `/v1/sessions?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      ),
    async page(sessionId, view, leaf, cursor) {
      const query = new URLSearchParams({ view });
      if (leaf !== undefined) query.set("leaf", leaf);
      if (cursor !== undefined) query.set("cursor", cursor);
      const response = await client.json<unknown>(`/v1/sessions/${id(sessionId)}/page?${query}`);
      // The answer is checked, not trusted: a page is what the schema says or nothing.
      return ReadPage.parse(response);
    },
    async pull(sessionId, cwd) {
      id(sessionId);
      const pulled = await pullSession({ positionals: [sessionId], cwd }, io);
      return pulled.path;
    },
  };
}

/** Serves MCP on stdin/stdout until the client closes stdin. */
export async function mcp(argv: string[], io: Io): Promise<number> {
  parse(argv, {}, Args, MCP_HELP);
  const client = api(io);
  const server = new McpServer({ name: "pisync", version: packageJson.version }, { capabilities: { tools: {} } });
  registerMcpTools(server, apiSource(client, io));
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  try {
    await server.connect(transport);
  } catch (error) {
    throw new CliError(`pisync mcp: ${(error as Error).message}`, EXIT.failed);
  }
  await closed;
  await server.close();
  return EXIT.ok;
}
