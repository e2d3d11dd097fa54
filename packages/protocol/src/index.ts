/**
 * @pisync/protocol: the wire contract between the pisync API and its clients. Request and
 * answer shapes (zod/mini schemas), header names, id patterns, the dictionary encoding, the
 * machine-readable error codes, and every route as data (the OpenAPI document's source).
 */
export * from "./errors.js";
export * from "./headers.js";
export * from "./ids.js";
export * from "./limits.js";
export * from "./mcp.js";
export * from "./routes.js";
export * from "./schemas.js";
