import { McpMessage } from "../mcp-pages.js";
import { error, json, type RouteSpec } from "./common.js";

/** The MCP endpoint (Streamable HTTP). */
export const MCP_ROUTES: readonly RouteSpec[] = [
  {
    method: "post",
    path: "/mcp",
    summary:
      "MCP (Model Context Protocol) over Streamable HTTP, stateless, JSON answers: the tools search_sessions, list_sessions, read_session, get_context",
    auth: "bearer",
    body: json(McpMessage),
    responses: {
      200: { description: "the JSON-RPC answer", content: json(McpMessage) },
      202: { description: "a notification, taken" },
      401: error("a missing or refused token", "unauthorized"),
      406: { description: "Accept names neither application/json nor text/event-stream" },
      413: { description: "a body over 64 KiB" },
    },
  },
  {
    method: "get",
    path: "/mcp",
    summary: "No server-sent stream: the MCP server is stateless (405)",
    auth: "bearer",
    responses: { 405: { description: "POST only" } },
  },
  {
    method: "delete",
    path: "/mcp",
    summary: "No MCP session to end: the server is stateless (405)",
    auth: "bearer",
    responses: { 405: { description: "POST only" } },
  },
];
