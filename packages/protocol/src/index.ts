/**
 * @pisync/protocol: the wire contract between the pisync API and its clients. Request and
 * answer shapes (zod/mini schemas), header names, id patterns, the dictionary encoding, the
 * machine-readable error codes, and every route as data (the OpenAPI document's source).
 */
export * from "./errors.js";
export * from "./headers.js";
export * from "./ids.js";
export * from "./limits.js";
// The tools themselves (values): `@pisync/protocol/mcp`, loaded only where MCP is served.
export type { McpSearchHits, McpSessionItem, McpSource, McpTool, McpToolRegistry, McpToolResult } from "./mcp.js";
export {
  MCP_LIST_MAX,
  MCP_PAGE_BYTES,
  MCP_PAGE_FRAME_BYTES,
  MCP_SEARCH_MAX,
  McpMessage,
  ReadPage,
  ReadPageQuery,
} from "./mcp-pages.js";
// The route table (every route as data, the source of /openapi.json): `@pisync/protocol/routes`.
export type { Content, ResponseSpec, RouteSpec } from "./routes.js";
export * from "./schemas.js";
