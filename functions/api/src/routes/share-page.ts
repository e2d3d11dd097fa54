/**
 * /s/<token>: what a share link shows, to anyone holding it. The token is verified and the
 * share's record checked on every request (tampered or unknown: 404; expired or revoked: 410).
 * A pinned share shows only the path from the root to its entry; a whole share follows the
 * session and lets the reader switch branches. Every response carries a strict CSP (no inline
 * script), no-referrer (the token is in the URL), noindex and nosniff.
 */
import { isCutPreview, NotFound, type Shares } from "@pisync/core";
import { decodeUtf8, type LineRecord, labelsOf, pathTo, type SessionIndex } from "@pisync/format";
import type { SessionHead, ShareRecord } from "@pisync/store";
import {
  APP_JS,
  maskLines,
  maskText,
  maskTexts,
  type PageEntry,
  renderEntries,
  renderPage,
  STYLE_CSS,
} from "@pisync/viewer";
import { Hono } from "hono";
import * as z from "zod/mini";
import type { Services } from "../app.js";
import { parseQuery } from "../validate.js";

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Robots-Tag": "noindex, nofollow",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cache-Control": "private, no-store",
};

/** Entries shown at once: the latest ones first, earlier ones on demand. */
const PAGE_ENTRIES = 150;

const PageQuery = z.object({
  leaf: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  before: z.optional(z.pipe(z.string().check(z.regex(/^\d{1,9}$/)), z.transform(Number))),
});
const AfterQuery = z.object({ after: z.optional(z.string().check(z.maxLength(256))) });

export function sharePageRoutes(services: Services, shares: Shares) {
  const { reader } = services;
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  });

  app.get("/assets/style.css", (c) => c.body(STYLE_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/assets/app.js", (c) => c.body(APP_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));

  /** The share, its session's head and index; a missing session looks like a missing link. */
  async function open(token: string) {
    const share = await shares.resolve(token);
    let head: SessionHead;
    try {
      head = await reader.head(share.userId, share.sessionId);
    } catch (error) {
      if (error instanceof NotFound) throw new NotFound("no such link");
      throw error;
    }
    const { index, previews } = await reader.index(head, head.current);
    if (share.leafId !== undefined && !index.byId(share.leafId)) throw new NotFound("no such link");
    return { share, head, index, previews };
  }

  /** The leaf a request may see: a pinned share's own; in a whole share, any entry (default: pi's leaf). */
  function leafOf(share: ShareRecord, index: SessionIndex, asked?: string) {
    if (share.leafId !== undefined) {
      if (asked !== undefined && asked !== share.leafId) throw new NotFound("no such entry in this link");
      return index.byId(share.leafId);
    }
    if (asked !== undefined) {
      const leaf = index.byId(asked);
      if (!leaf) throw new NotFound("no such entry in this link");
      return leaf;
    }
    return index.defaultLeaf;
  }

  const maskOf = (share: ShareRecord) => {
    let masked = 0;
    const transform = share.maskSecrets
      ? async (lines: string[]) => {
          const result = await maskLines(lines);
          masked += result.count;
          return result.lines;
        }
      : undefined;
    return { transform, masked: () => masked };
  };

  /** The labels shown beside entries: label entries are session text too, masked like it. */
  const shownLabels = async (share: ShareRecord, index: SessionIndex) => {
    const labels = labelsOf(index);
    if (!share.maskSecrets || labels.size === 0) return labels;
    const masked = await maskTexts([...labels.values()]);
    return new Map([...labels.keys()].map((id, i) => [id, masked[i]]));
  };

  /** Loads (and masks) the entries of path records for the page. */
  async function pageEntries(
    share: ShareRecord,
    head: SessionHead,
    index: SessionIndex,
    records: ReturnType<typeof pathTo>["records"],
  ) {
    const mask = maskOf(share);
    await reader.prime(head, index, records, mask.transform);
    const entries: PageEntry[] = [];
    for (const r of records) {
      if (r.id === undefined || r.type === undefined) continue;
      let entry: Record<string, unknown>;
      try {
        entry = index.entry(r);
      } catch {
        continue;
      }
      entries.push({ id: r.id, type: r.type, timestamp: r.timestamp, entry });
    }
    return { entries, masked: mask.masked() };
  }

  app.get("/:token", async (c) => {
    const query = parseQuery(PageQuery, c);
    const { share, head, index, previews } = await open(c.req.param("token"));
    const leaf = leafOf(share, index, query.leaf);
    const path = leaf ? pathTo(index, leaf).records : [];
    const end = Math.min(query.before ?? path.length, path.length);
    const start = Math.max(0, end - PAGE_ENTRIES);
    const { entries, masked } = await pageEntries(share, head, index, path.slice(start, end));
    let model: string | undefined;
    let thinkingLevel: string | undefined;
    for (const r of path) {
      if (r.type === "model_change") model = `${r.facts?.provider ?? "?"}/${r.facts?.modelId ?? "?"}`;
      if (r.type === "message" && r.role === "assistant" && r.facts?.messageModel) {
        model = `${r.facts.messageProvider}/${r.facts.messageModel}`;
      }
      if (r.type === "thinking_level_change") thinkingLevel = String(r.facts?.thinkingLevel ?? "off");
    }
    const leaves =
      share.leafId === undefined
        ? index
            .leafIds()
            .map((id) => index.byId(id))
            .filter((r) => r !== undefined)
            .sort((a, b) => b.index - a.index)
            .slice(0, 50)
            .map((r) => ({ id: r.id as string, timestamp: r.timestamp, preview: previews[r.line] ?? r.type ?? "" }))
        : undefined;
    const summary = head.summary;
    // The title, the folder and branch previews are session text too: masked like the entries,
    // and before they are cut (a stored preview was cut first: a cut one is made again).
    let title = summary.name ?? summary.firstMessage ?? head.sessionId;
    let cwd = summary.cwd;
    if (share.maskSecrets) {
      const first =
        summary.name === undefined ? index.records.find((r) => r.type === "message" && r.role === "user") : undefined;
      const shown = [...(leaves ?? []).map((l) => index.byId(l.id)), first].filter((r) => r !== undefined);
      const cut = shown.filter((r) => isCutPreview(previews[r.line] ?? ""));
      const remade = await reader.previews(head, cut, (text) => maskText(text).text);
      const masked = (r: LineRecord | undefined, text: string) => (r && remade.get(r.line)) ?? maskText(text).text;
      [title, cwd] = [masked(first, title), cwd === undefined ? undefined : maskText(cwd).text];
      leaves?.forEach((l) => {
        l.preview = masked(index.byId(l.id), l.preview);
      });
    }
    const base = `/s/${c.req.param("token")}`;
    return c.html(
      renderPage({
        base,
        title,
        cwd,
        startedAt: summary.startedAt,
        updatedAt: head.updatedAt,
        model,
        thinkingLevel,
        tokens: summary.tokens,
        cost: summary.cost,
        entries,
        earlier: start,
        leafId: leaf?.id ?? null,
        leaves,
        labels: await shownLabels(share, index),
        masked,
        maskSecrets: share.maskSecrets,
        live: share.leafId === undefined && query.leaf === undefined && query.before === undefined,
        pinned: share.leafId !== undefined,
        expiresAt: share.expiresAt,
      }),
    );
  });

  /** For live pages: an ETag that changes as the session grows. */
  app.get("/:token/state", async (c) => {
    const share = await shares.resolve(c.req.param("token"));
    const head = await reader.head(share.userId, share.sessionId).catch(() => {
      throw new NotFound("no such link");
    });
    const etag = `"${head.current.generation}-${head.current.length}"`;
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    return c.json({ generation: head.current.generation, bytes: head.current.length, leafId: head.summary.leafId });
  });

  /** Entries after `after` on the default leaf's path, as an HTML fragment (live updates). */
  app.get("/:token/entries", async (c) => {
    const query = parseQuery(AfterQuery, c);
    const { share, head, index } = await open(c.req.param("token"));
    const leaf = leafOf(share, index);
    const path = leaf ? pathTo(index, leaf).records : [];
    const at = query.after ? path.findIndex((r) => r.id === query.after) : -1;
    const records = at >= 0 ? path.slice(at + 1) : path.slice(-PAGE_ENTRIES);
    const { entries } = await pageEntries(share, head, index, records.slice(0, PAGE_ENTRIES));
    return c.html(renderEntries(entries, await shownLabels(share, index)));
  });

  /** The JSONL: the whole session, or (pinned) the header and the path's entries: a valid session file. */
  app.get("/:token/raw", async (c) => {
    const { share, head, index } = await open(c.req.param("token"));
    let lines: string[];
    if (share.leafId === undefined) {
      const { bytes } = await reader.raw(head.userId, head.sessionId);
      lines = decodeUtf8(bytes).split("\n");
      lines.pop(); // the text after the last newline: nothing
    } else {
      const leaf = index.byId(share.leafId);
      const path = leaf ? pathTo(index, leaf).records : [];
      const headerEnd = path.length ? path[0].offset : head.current.length;
      const headerBytes = (
        await reader.raw(head.userId, head.sessionId, { start: 0, end: Math.min(headerEnd, 1024 * 1024) })
      ).bytes;
      // The header is the first line with a session type before the entries (a title slot may precede it).
      const header = decodeUtf8(headerBytes)
        .split("\n")
        .find((line) => /"type"\s*:\s*"session"/.test(line));
      const bytes = await reader.lines(head, path);
      lines = [header ?? "", ...path.map((r) => decodeUtf8(bytes.get(r.line) as Uint8Array))].filter(Boolean);
    }
    if (share.maskSecrets) lines = (await maskLines(lines)).lines;
    c.header("Content-Type", "application/x-ndjson; charset=utf-8");
    c.header("Content-Disposition", `attachment; filename="${head.sessionId}${share.leafId ? "-branch" : ""}.jsonl"`);
    return c.body(lines.length ? `${lines.join("\n")}\n` : "");
  });

  /** The rebuilt context, as JSON: for people and for agents that read links. */
  app.get("/:token/context", async (c) => {
    const query = parseQuery(PageQuery, c);
    const { share, head, index } = await open(c.req.param("token"));
    const leaf = leafOf(share, index, query.leaf);
    const mask = maskOf(share);
    const context = await reader.context(head.userId, head.sessionId, leaf?.id, mask.transform);
    return c.json({ ...context, masked: mask.masked() });
  });

  return app;
}
