/**
 * `pisync mcp` as the main bundle runs it: the command and the MCP SDK live in a second bundle,
 * `pisync-mcp.mjs` beside `pisync.mjs`, loaded only when the command runs. The main bundle stays
 * small (no SDK, and only the parts of zod the engine uses) and each bundle has its own copy of
 * zod, set up in its own order.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CliError, EXIT } from "../cli-error.js";
import type * as McpBundle from "../mcp-entry.js";
import type { Io } from "./common.js";

/** The second bundle's file name, next to the main one. */
export const MCP_BUNDLE = "pisync-mcp.mjs";

/** Where the command's code is: the bundle beside this one, or the sources when run from them. */
function mcpModule(): URL {
  // Run from the sources (tsx, tests), this file is a .ts and the entry is beside it. Bundled, it
  // is in `pisync.mjs` (or, should the bundler move it, in a chunk of `chunks/` beside that).
  if (import.meta.url.endsWith(".ts")) return new URL("../mcp-entry.ts", import.meta.url);
  return new URL(`${import.meta.url.includes("/chunks/") ? "../" : "./"}${MCP_BUNDLE}`, import.meta.url);
}

/** Runs `pisync mcp` from the second bundle; its errors become this bundle's CliErrors. */
export async function mcp(argv: string[], io: Io): Promise<number> {
  const url = mcpModule();
  if (!existsSync(fileURLToPath(url))) {
    throw new CliError(
      `pisync mcp: ${MCP_BUNDLE} is missing beside pisync (install pisync again: it ships both files)`,
      EXIT.failed,
    );
  }
  // A specifier computed at run time: esbuild leaves it to Node and never inlines the SDK here.
  const loaded = (await import(url.href)) as typeof McpBundle;
  try {
    return await loaded.mcp(argv, io);
  } catch (error) {
    // The other bundle's CliError is another class: its message and exit code carry over.
    if (error instanceof loaded.CliError) throw new CliError(error.message, error.code);
    throw error;
  }
}
