/**
 * `POST /mcp`: pisync's MCP tools over the Streamable HTTP transport, stateless (a server and a
 * transport per request, JSON answers, no session id), so it runs on Lambda as on `npm start`.
 * The bearer token names the user; every tool answers for that user only. GET (a server's
 * event stream) and DELETE (ending a session) answer 405: a stateless server has neither.
 */
import { boundedSearchPage } from "@pisync/core";
import type { McpSource } from "@pisync/protocol";
import { parseQuery } from "@pisync/search";
import { Hono } from "hono/quick";
import type { AuthEnv } from "../auth.js";
import { lazy } from "../lazy.js";
import type { Services } from "../services.js";
import { loadViewer } from "../viewer.js";
import type { SearchDeps } from "./search.js";

/** The SDK's server half and the tools, loaded on the first MCP request (an API cold start never needs it). */
const sdk = lazy(async () => {
  const [{ McpServer }, { WebStandardStreamableHTTPServerTransport }, { registerMcpTools }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/mcp.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@pisync/protocol/mcp"),
  ]);
  return { McpServer, WebStandardStreamableHTTPServerTransport, registerMcpTools };
});

/** The largest MCP request body: a tool call's arguments are small. */
const MAX_MCP_BODY = 64 * 1024;

/** The tools' source for one user, over the use cases in this process. */
export function serverSource(services: Services, search: SearchDeps | undefined, userId: string): McpSource {
  return {
    async search(query, limit) {
      if (!search) throw new Error("search is not enabled on this server");
      const page = await search.index.search(userId, parseQuery(query, services.clock().getTime()), { limit });
      return boundedSearchPage(page);
    },
    list: (limit, cursor) => services.reader.list(userId, { limit, cursor }, () => services.tokens.list(userId)),
    async page(sessionId, view, leaf, cursor) {
      // Masking a title made again from its entry runs synchronously: the viewer loaded first.
      await loadViewer();
      return services.pages.page(userId, sessionId, view, leaf, cursor);
    },
  };
}

/** The `/mcp` routes (mounted behind bearer authentication). */
export function mcpRoutes(services: Services, search: SearchDeps | undefined) {
  const app = new Hono<AuthEnv>();
  app.post("/", async (c) => {
    const { McpServer, WebStandardStreamableHTTPServerTransport, registerMcpTools } = await sdk.load();
    const server = new McpServer({ name: "pisync", version: "0.1.0" }, { capabilities: { tools: {} } });
    registerMcpTools(server, serverSource(services, search, c.get("userId")));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_MCP_BODY,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  const notAllowed = () =>
    Response.json(
      {
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed: this MCP server is stateless (POST only)" },
        id: null,
      },
      { status: 405, headers: { Allow: "POST" } },
    );
  app.get("/", notAllowed);
  app.delete("/", notAllowed);
  return app;
}
