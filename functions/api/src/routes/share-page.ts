/**
 * /s/<token>: what a share link shows, to anyone holding it. The token is verified and the
 * share's record checked on every request (tampered or unknown: 404; expired or revoked: 410).
 * A pinned share shows only the path from the root to its entry; a whole share follows the
 * session and lets the reader switch branches. Every response carries a strict CSP (no inline
 * script), no-referrer (the token is in the URL), noindex and nosniff.
 */
import { isCutPreview, NotFound, pathFacts, pathTotals, type Shares } from "@pisync/core";
import { contextSettings, decodeUtf8, type LineRecord, labelsOf, pathTo, type SessionIndex } from "@pisync/format";
import type { SessionHead, ShareRecord } from "@pisync/store";
import { APP_JS, maskText, type PageEntry, STYLE_CSS } from "@pisync/viewer";
import { Hono } from "hono";
import * as z from "zod/mini";
import type { Services } from "../app.js";
import { SECURITY_HEADERS } from "../html.js";
import { contextJson, textStream } from "../stream.js";
import { parseQuery } from "../validate.js";

/** Entries shown at once: the latest ones first, earlier ones on demand. */
const PAGE_ENTRIES = 150;

const PageQuery = z.object({
  leaf: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  before: z.optional(z.pipe(z.string().check(z.regex(/^\d{1,9}$/)), z.transform(Number))),
});
const AfterQuery = z.object({ after: z.optional(z.string().check(z.maxLength(256))) });

export function sharePageRoutes(services: Services, shares: Shares) {
  const { reader, work } = services;
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  });

  app.get("/assets/style.css", (c) => c.body(STYLE_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/assets/app.js", (c) => c.body(APP_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));

  /** The index of a share's session; a pinned share whose entry is gone looks like a missing link. */
  async function indexOf(share: ShareRecord, head: SessionHead) {
    const { index, previews } = await reader.index(head, head.current);
    if (share.leafId !== undefined && !index.byId(share.leafId)) throw new NotFound("no such link");
    return { index, previews };
  }

  /** The share, its session's head and index; a missing session looks like a missing link. */
  async function open(token: string) {
    const { share, head } = await shares.open(token);
    return { share, head, ...(await indexOf(share, head)) };
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
          const result = await work.maskLines(lines);
          masked += result.count;
          return result.lines;
        }
      : undefined;
    return { transform, masked: () => masked };
  };

  /**
   * The labels shown beside entries (a pinned share's: those set on its path), masked like any
   * session text.
   */
  const shownLabels = async (share: ShareRecord, index: SessionIndex) => {
    const leaf = share.leafId === undefined ? undefined : index.byId(share.leafId);
    const labels = leaf ? pathFacts(pathTo(index, leaf).records, {}).labels : labelsOf(index);
    if (!share.maskSecrets || labels.size === 0) return labels;
    const masked = await work.maskTexts([...labels.values()]);
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
    // Walking a large tree again: let other requests run first.
    if (path.length > 50_000) await new Promise((resolve) => setImmediate(resolve));
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
    // A pinned share's title, times and totals come from its path only.
    const pinned = share.leafId !== undefined ? pathFacts(path, previews) : undefined;
    const totals = pinned ? await pathTotals(reader, head, path) : undefined;
    // The title, the folder and branch previews are session text too: masked like the entries,
    // and before they are cut (a stored preview was cut first: a cut one is made again).
    const named = pinned ? pinned.name : summary.name;
    let title = named ?? (pinned ? pinned.firstMessage : summary.firstMessage) ?? head.sessionId;
    let cwd = summary.cwd;
    if (share.maskSecrets) {
      const first =
        named === undefined
          ? (pinned ? path : index.records).find((r) => r.type === "message" && r.role === "user")
          : undefined;
      const shown = [...(leaves ?? []).map((l) => index.byId(l.id)), first].filter((r) => r !== undefined);
      const cut = shown.filter((r) => isCutPreview(previews[r.line] ?? ""));
      const remade = await reader.previews(head, cut, (text) => maskText(text).text);
      const remadeOf = (r: LineRecord | undefined) => (r ? remade.get(r.line) : undefined);
      const texts = await work.maskTexts([title, cwd ?? "", ...(leaves ?? []).map((l) => l.preview)]);
      [title, cwd] = [remadeOf(first) ?? texts[0], cwd === undefined ? undefined : texts[1]];
      leaves?.forEach((l, i) => {
        l.preview = remadeOf(index.byId(l.id)) ?? texts[i + 2];
      });
    }
    const base = `/s/${c.req.param("token")}`;
    return c.html(
      await work.renderPage({
        base,
        title,
        cwd,
        startedAt: summary.startedAt,
        updatedAt: pinned ? pinned.updatedAt : head.updatedAt,
        model,
        thinkingLevel,
        tokens: totals ? totals.totalTokens : summary.tokens,
        cost: totals ? Math.round(totals.cost * 1e6) / 1e6 : summary.cost,
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

  /** For live pages: an ETag that changes as the session grows (a pinned share's never does: its path is fixed). */
  app.get("/:token/state", async (c) => {
    const { share, head } = await shares.open(c.req.param("token"));
    let state = { generation: head.current.generation, bytes: head.current.length, leafId: head.summary.leafId };
    if (share.leafId !== undefined) {
      const { index } = await indexOf(share, head);
      const path = pathTo(index, index.byId(share.leafId) as NonNullable<ReturnType<typeof index.byId>>).records;
      state = { generation: head.current.generation, bytes: pathFacts(path, {}).bytes, leafId: share.leafId };
    }
    const etag = `"${state.generation}-${share.leafId === undefined ? "" : "p"}${state.bytes}"`;
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    return c.json(state);
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
    return c.html(await work.renderEntries({ entries, labels: await shownLabels(share, index) }));
  });

  /**
   * The JSONL: the whole session, or (pinned) the header and the path's entries: a valid session
   * file. Streamed and masked a batch of lines at a time, so what the server holds does not grow
   * with the session.
   */
  app.get("/:token/raw", async (c) => {
    // A whole share's download is the file's bytes: no index is needed (nor held) for it.
    const { share, head } = await shares.open(c.req.param("token"));
    const index = share.leafId === undefined ? undefined : (await indexOf(share, head)).index;
    const mask = async (lines: string[]) => (share.maskSecrets ? (await work.maskLines(lines)).lines : lines);
    async function* batches(): AsyncGenerator<string[]> {
      if (share.leafId === undefined) {
        yield* reader.rawLines(head.userId, head.sessionId, head.current.generation);
        return;
      }
      const leaf = index?.byId(share.leafId);
      const path = index && leaf ? pathTo(index, leaf).records : [];
      const headerEnd = path.length ? path[0].offset : head.current.length;
      const headerBytes = (
        await reader.raw(head.userId, head.sessionId, { start: 0, end: Math.min(headerEnd, 1024 * 1024) })
      ).bytes;
      // The header is the first line with a session type before the entries (a title slot may precede it).
      const header = decodeUtf8(headerBytes)
        .split("\n")
        .find((line) => /"type"\s*:\s*"session"/.test(line));
      if (header) yield [header];
      for await (const batch of reader.batches(head, path)) yield batch.map((b) => b.text).filter(Boolean);
    }
    async function* pieces(): AsyncGenerator<string> {
      for await (const lines of batches()) yield (await mask(lines)).map((line) => `${line}\n`).join("");
    }
    const body = textStream(pieces());
    c.header("Content-Type", "application/x-ndjson; charset=utf-8");
    c.header("Content-Disposition", `attachment; filename="${head.sessionId}${share.leafId ? "-branch" : ""}.jsonl"`);
    return c.body(body);
  });

  /**
   * The rebuilt context, as JSON: for people and for agents that read links. Streamed and
   * masked a batch of entries at a time, so what the server holds does not grow with the context.
   */
  app.get("/:token/context", async (c) => {
    const query = parseQuery(PageQuery, c);
    const { share, head, index } = await open(c.req.param("token"));
    const leaf = leafOf(share, index, query.leaf);
    const mask = maskOf(share);
    const leafId = leaf?.id ?? index.defaultLeafId;
    // The count is known only once every message is out: the rest of the object comes last.
    const pieces = contextJson(reader.contextMessages(head, index, leaf?.id, mask.transform), () => ({
      ...contextSettings(index, leaf?.id),
      leafId,
      masked: mask.masked(),
    }));
    c.header("Content-Type", "application/json; charset=utf-8");
    return c.body(textStream(pieces));
  });

  return app;
}
