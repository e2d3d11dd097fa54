/**
 * What the MCP tools' pages and the `POST /mcp` route share with the rest of the wire contract:
 * page sizes, the page route's query and answer, the JSON-RPC message. The tools themselves are
 * in `mcp.ts` (`@pisync/protocol/mcp`), loaded only where MCP is served.
 */
import * as z from "zod/mini";
import { lazySchema } from "./lazy-schema.js";

/** At most this many bytes (UTF-8) of text in one tool result: a page of `read_session` or `get_context`. */
export const MCP_PAGE_BYTES = 64 * 1024;
/** Room kept in a page for what the tool adds around the session text (delimiters, the cursor's note). */
export const MCP_PAGE_FRAME_BYTES = 2 * 1024;
/** Sessions in one `search_sessions` result (its default is 10). */
export const MCP_SEARCH_MAX = 20;
/** Sessions in one `list_sessions` page (its default is 20). */
export const MCP_LIST_MAX = 50;

/** An entry id as the tools and the page route take it. */
export const entryId = () => z.string().check(z.minLength(1), z.maxLength(256));
/** A page's cursor, as the tools and the page route take it. */
export const pageCursor = () => z.string().check(z.minLength(1), z.maxLength(512));

/**
 * `GET /v1/sessions/:id/page?view=&leaf=&cursor=`: one page of a branch as masked Markdown
 * (`md`), or of the context pi would send at its leaf (`context`, JSON text).
 */
export const ReadPageQuery = lazySchema(() =>
  z.object({
    view: z.enum(["md", "context"]),
    leaf: z.optional(entryId()),
    cursor: z.optional(pageCursor()),
  }),
);
export type ReadPageQuery = z.infer<typeof ReadPageQuery>;

/**
 * One page of a session's text: at most {@link MCP_PAGE_BYTES} less the frame, credentials
 * masked. `nextCursor` (absent on the last page) asks for the next; `leafId` is the branch the
 * pages follow (fixed by the first page); `page` counts from 1. `masked`: credentials masked in
 * this page's entries (Markdown), or in the whole context (on its last page).
 */
export const ReadPage = lazySchema(() =>
  z.looseObject({
    text: z.string(),
    leafId: z.nullable(z.string()),
    nextCursor: z.optional(z.string()),
    page: z.number(),
    masked: z.optional(z.number()),
    /** Entries on the branch (Markdown). */
    entries: z.optional(z.number()),
  }),
);
export type ReadPage = z.infer<typeof ReadPage>;

/** A JSON-RPC message of MCP, or a batch of them (`POST /mcp`'s body and answer). */
export const McpMessage = lazySchema(() =>
  z.union([z.looseObject({ jsonrpc: z.literal("2.0") }), z.array(z.looseObject({ jsonrpc: z.literal("2.0") }))]),
);
