/**
 * A session's text a bounded page at a time, for agents (MCP's `read_session` and
 * `get_context`, and `GET /v1/sessions/:id/page`): the owner's branch as Markdown or the context
 * pi would send at its leaf, credentials masked as on share pages, at most a page of bytes per
 * answer. The cursor pins the branch and the generation; a Markdown page reads only the entries
 * it shows (from where the last one stopped), so a 40 MB session pages instead of timing out.
 */
import { MCP_PAGE_BYTES, MCP_PAGE_FRAME_BYTES, type ReadPage } from "@pisync/protocol";
import type { SessionHead, ShareRecord } from "@pisync/store";
import { BadRequest } from "./errors.js";
import { ownerView } from "./library.js";
import type { Reader } from "./reader.js";
import type { ShareReading } from "./share-reading.js";

/** Session text in one page: the page's bytes less the frame the tool adds around it. */
export const PAGE_TEXT_BYTES = MCP_PAGE_BYTES - MCP_PAGE_FRAME_BYTES;

/** Entries read (and masked) at once while filling a Markdown page. */
const WINDOW = 32;

/** Where the next page starts: the view, its leaf and generation, a position and the characters of it already given. */
interface Cursor {
  v: "md" | "context";
  /** The leaf the first page resolved (null: an empty session). */
  l: string | null;
  /** The generation and the session's creation: another one is a rewritten session. */
  g: number;
  c: string;
  /** Markdown: a position on the path; context: characters of the JSON text. */
  p: number;
  /** Markdown: characters of the entry at `p` already given. */
  s: number;
  /** The number of the next page. */
  n: number;
}

const encodeCursor = (cursor: Cursor) =>
  btoa(JSON.stringify(cursor)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

function decodeCursor(text: string, view: Cursor["v"]): Cursor {
  const bad = () => new BadRequest("the cursor is not one a page of this session gave: start again without it");
  let cursor: Cursor;
  try {
    cursor = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    throw bad();
  }
  const natural = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  if (
    typeof cursor !== "object" ||
    cursor === null ||
    cursor.v !== view ||
    !(cursor.l === null || (typeof cursor.l === "string" && cursor.l.length <= 256)) ||
    typeof cursor.c !== "string" ||
    ![cursor.g, cursor.p, cursor.s, cursor.n].every(natural)
  ) {
    throw bad();
  }
  return cursor;
}

/**
 * How many characters from the start of `text` fit in `bytes` of UTF-8 (never half a surrogate
 * pair); the whole text when it fits.
 */
export function fitUtf8(text: string, bytes: number): number {
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (used + size > bytes) return i;
    used += size;
    if (pair) i++;
  }
  return text.length;
}

const utf8Length = (text: string) => new TextEncoder().encode(text).length;

/** The viewer's Markdown writers, loaded when a page is first asked for (they are a large module). */
const markdownWriters = () => import("@pisync/viewer");

/** The pages of a user's sessions (another user's session is not found). */
export class SessionPages {
  constructor(
    private readonly reader: Reader,
    private readonly reading: ShareReading,
    /** Bytes of session text in one page (tests make it smaller). */
    private readonly pageBytes = PAGE_TEXT_BYTES,
  ) {}

  /** The owner's session seen as a share that masks: what share pages with masking show. */
  private async masked(userId: string, sessionId: string): Promise<{ share: ShareRecord; head: SessionHead }> {
    const { share, head } = await ownerView(this.reader, userId, sessionId);
    return { share: { ...share, id: `agent:${sessionId}`, maskSecrets: true }, head };
  }

  /** One page of the branch to `leaf` (pi's leaf without it) as Markdown, or of its context. */
  async page(
    userId: string,
    sessionId: string,
    view: "md" | "context",
    leaf?: string,
    cursorText?: string,
  ): Promise<ReadPage> {
    const { share, head } = await this.masked(userId, sessionId);
    const cursor = cursorText === undefined ? undefined : decodeCursor(cursorText, view);
    if (cursor && (cursor.g !== head.current.generation || cursor.c !== head.createdAt)) {
      throw new BadRequest("the session was rewritten since the first page: start again without the cursor");
    }
    if (cursor && leaf !== undefined && leaf !== cursor.l) {
      throw new BadRequest("the cursor belongs to another leaf: pass the same leaf, or none");
    }
    const leafAsked = cursor ? (cursor.l ?? undefined) : leaf;
    return view === "md"
      ? this.markdownPage(share, head, leafAsked, cursor)
      : this.contextPage(share, head, leafAsked, cursor);
  }

  private next(head: SessionHead, view: Cursor["v"], leafId: string | null, p: number, s: number, n: number) {
    return encodeCursor({ v: view, l: leafId, g: head.current.generation, c: head.createdAt, p, s, n });
  }

  private async markdownPage(
    share: ShareRecord,
    head: SessionHead,
    leaf: string | undefined,
    cursor: Cursor | undefined,
  ): Promise<ReadPage> {
    const { entriesMarkdown, markdownHead } = await markdownWriters();
    const branch = await this.reading.branchFrom(share, head, leaf, cursor?.p ?? 0, WINDOW);
    const pieces: string[] = [];
    let room = this.pageBytes;
    const page = cursor?.n ?? 1;
    if (!cursor) {
      const start = markdownHead(branch.facts, {
        leafId: branch.leafId,
        notes: ["credentials masked as on share pages"],
      });
      pieces.push(start.slice(0, fitUtf8(start, room)));
      room -= utf8Length(pieces[0]);
    }
    let nextAt: { p: number; s: number } | undefined;
    let skip = cursor?.s ?? 0;
    try {
      fill: for await (const window of branch.windows) {
        for (const { at, entry } of window) {
          const piece = entriesMarkdown([entry]).slice(skip);
          const given = skip;
          skip = 0;
          if (!piece) continue;
          const fits = fitUtf8(piece, room);
          pieces.push(piece.slice(0, fits));
          room -= utf8Length(pieces[pieces.length - 1]);
          if (fits < piece.length) {
            nextAt = { p: at, s: given + fits };
            break fill;
          }
          if (room <= 0) {
            nextAt = { p: at + 1, s: 0 };
            break fill;
          }
        }
      }
    } finally {
      await branch.windows.return(undefined);
    }
    // A last position past the end is the end: nothing is left to give.
    if (nextAt && nextAt.s === 0 && nextAt.p >= branch.total) nextAt = undefined;
    return {
      text: pieces.join(""),
      leafId: branch.leafId,
      page,
      masked: branch.masked(),
      entries: branch.total,
      ...(nextAt ? { nextCursor: this.next(head, "md", branch.leafId, nextAt.p, nextAt.s, page + 1) } : {}),
    };
  }

  private async contextPage(
    share: ShareRecord,
    head: SessionHead,
    leaf: string | undefined,
    cursor: Cursor | undefined,
  ): Promise<ReadPage> {
    // The context's JSON text from its start, up to where this page ends: a batch of messages at
    // a time, so what is held is a page and one batch; what comes after the page is never read.
    const chunks = this.reading.context(share, head, leaf);
    const leafId = cursor ? cursor.l : await this.leafOf(share, head, leaf);
    let skip = cursor?.p ?? 0;
    let room = this.pageBytes;
    let given = 0;
    const pieces: string[] = [];
    let more = false;
    let last = "";
    try {
      for await (const chunk of chunks) {
        last = chunk;
        if (room <= 0) {
          more = true;
          break;
        }
        if (skip >= chunk.length) {
          skip -= chunk.length;
          continue;
        }
        const rest = chunk.slice(skip);
        skip = 0;
        const fits = fitUtf8(rest, room);
        pieces.push(rest.slice(0, fits));
        given += fits;
        room -= utf8Length(pieces[pieces.length - 1]);
        if (fits < rest.length) {
          more = true;
          break;
        }
      }
    } finally {
      await chunks.return(undefined);
    }
    const masked = more ? undefined : Number(/"masked":(\d+)\}$/.exec(last)?.[1] ?? 0);
    const page = cursor?.n ?? 1;
    return {
      text: pieces.join(""),
      leafId,
      page,
      ...(masked === undefined ? {} : { masked }),
      ...(more ? { nextCursor: this.next(head, "context", leafId, (cursor?.p ?? 0) + given, 0, page + 1) } : {}),
    };
  }

  /** The leaf a first context page resolves (pi's default leaf without one). */
  private async leafOf(share: ShareRecord, head: SessionHead, leaf: string | undefined): Promise<string | null> {
    const { index } = await this.reading.index(share, head);
    return this.reading.leafOf(share, index, leaf)?.id ?? index.defaultLeafId ?? null;
  }
}
