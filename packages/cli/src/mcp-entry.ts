/**
 * Entry of the second bundle, `dist/pisync-mcp.mjs`: `pisync mcp` with the MCP SDK. It is built
 * apart so that `pisync.mjs` (which `pisync watch` keeps in memory all day) holds no SDK; the
 * main bundle loads this file from beside itself when `pisync mcp` runs (see commands/mcp-load.ts).
 */
export { CliError } from "./cli-error.js";
export { mcp } from "./commands/mcp.js";
