/**
 * /s/<token>: what a share link shows, to anyone holding it. The token is verified and the
 * share's record checked on every request (tampered or unknown: 404; expired or revoked: 410).
 * This module only translates HTTP: what a share may show is core's `ShareReading`; the heavy
 * work (masking, rendering) runs through `work`. Every response carries a strict CSP (no inline
 * script), no-referrer (the token is in the URL), noindex and nosniff.
 */
import { Busy, Gone, Lru, Memo, type SessionHead, type ShareRecord, type Shares } from "@pisync/core";
import { SharePageQuery, TreeFindQuery } from "@pisync/protocol";
import type { Context } from "hono";
import { compress } from "hono/compress";
import { Hono } from "hono/quick";
import { SECURITY_HEADERS, wantsHtml } from "../html.js";
import { KeptBodies } from "../kept-bodies.js";
import { publicOrigin } from "../library-auth.js";
import { markdownResponse, wantsMarkdown } from "../markdown.js";
import { type PreviewCard, previewCard } from "../preview/card.js";
import { Gate } from "../preview/gate.js";
import { admit } from "../rate-limit.js";
import type { Services } from "../services.js";
import { started, textStream } from "../stream.js";
import { parseQuery } from "../validate.js";
import { viewer } from "../viewer.js";

/** Preview images drawn at once, and waiting to be, at most (each takes a share-pool thread for 0.2–1 s). */
const PREVIEWS_AT_ONCE = 2;
const PREVIEWS_WAITING = 16;

/**
 * `/s/*`: the page, its windows, tree, live state and downloads of a share link. Every answer
 * carries the share page's security headers; the work is done by core's `ShareReading`.
 */
export function sharePageRoutes(services: Services, shares: Shares) {
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  });

  app.get("/assets/style.css", (c) => c.body(viewer().STYLE_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/assets/app.js", (c) => c.body(viewer().APP_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  const context = shareRouteContext(services, shares);
  pageRoutes(app, context);
  readRoutes(app, context);
  return app;
}

/**
 * What the share page's route groups share: the link opened and admitted, read counters, kept
 * bodies, the public origin, the Markdown of a branch.
 */
function shareRouteContext(services: Services, shares: Shares) {
  const { reading } = services;
  const pageQuery = (c: Parameters<typeof parseQuery>[1]) => {
    const q = parseQuery(SharePageQuery, c);
    return { leaf: q.leaf ?? q.leafId, target: q.target ?? q.targetId, before: q.before, from: q.from, after: q.after };
  };

  /**
   * The share a request's token names, once it checks: only then does the request count against
   * the link's budget (a forged token is the client address's to pay for).
   */
  const open = async (c: Context) => {
    const opened = await shares.open(c.req.param("token") as string);
    admit(c, "link", opened.share.id, opened.share.userId);
    return opened;
  };

  /** Counts a read (a page view or a download) of a GET answered 200; a counter that fails never costs the reader. */
  const count = async (c: Context, read: () => Promise<void>) => {
    if (c.req.method === "GET") await read().catch(() => undefined);
  };

  // Pages and trees are kept, with their gzip, per version of the session and request: readers
  // of one link get the same bytes, made once. Windows go compressed too (downloads do not).
  const pages = new KeptBodies(32, 64 * 1024 * 1024);
  const trees = new KeptBodies(8, 64 * 1024 * 1024);

  /** The public origin links are made absolute with (unfurlers need absolute URLs). */
  const origin = (c: Parameters<typeof parseQuery>[1]) => publicOrigin(c, services.publicUrl);
  /** `?leaf=` for links to one branch of a whole share. */
  const leafQuery = (leaf: string | undefined) => (leaf === undefined ? "" : `?leaf=${encodeURIComponent(leaf)}`);

  /**
   * The branch as Markdown, masked like the page. The link is not written in it: it is a read
   * credential, and the document is made to be pasted.
   */
  const markdown = async (c: Context) => {
    const { share, head } = await open(c);
    const { leaf } = pageQuery(c);
    const doc = await reading.document(share, head, leaf);
    const notes = [
      share.leafId === undefined ? "" : "one branch, as of its last entry",
      `link expires ${share.expiresAt.slice(0, 16).replace("T", " ")} UTC`,
      // Blob images are linked under the share's own address: say so, as the link is a read credential.
      head.summary.blobRefs?.length || head.summary.blobRefsCut
        ? "its image links carry this share's read credential: keep the document as private as the link"
        : "",
    ].filter(Boolean);
    await count(c, () => shares.recordDownload(share));
    const token = c.req.param("token") as string;
    return markdownResponse(c, doc, notes, share.maskSecrets, `${origin(c)}/s/${token}/blobs/`);
  };

  /** A whole share's tree as kept bytes; `leaf` marks another leaf than the default one. */
  const treeOf = (share: ShareRecord, head: SessionHead, leaf?: string) =>
    trees.get(`${reading.versionKey(share, head)} ${leaf ?? ""}`, async () =>
      JSON.stringify(await reading.tree(share, head, leaf)),
    );
  return { services, shares, pageQuery, open, count, pages, trees, origin, leafQuery, markdown, treeOf };
}

/** The share page's route groups' context (see {@link shareRouteContext}). */
type ShareRouteContext = ReturnType<typeof shareRouteContext>;

/** The page a link opens (HTML, or Markdown for agents), its Markdown, and its preview image. */
function pageRoutes(
  app: Hono,
  { services, shares, pageQuery, open, count, pages, origin, leafQuery, markdown, treeOf }: ShareRouteContext,
): void {
  const { reading, work } = services;
  app.get("/:token/md", (c) => markdown(c));

  app.get("/:token", async (c) => {
    const token = c.req.param("token");
    // Agents that ask for Markdown get it from the page's own address.
    if (wantsMarkdown(c)) return markdown(c);
    let opened: Awaited<ReturnType<typeof shares.open>>;
    try {
      opened = await open(c);
    } catch (error) {
      // A revoked or expired link pasted somewhere unfurls as such: its notice carries a card.
      if (error instanceof Gone && wantsHtml(c)) return gonePage(c, token, error.message);
      throw error;
    }
    const { share, head } = opened;
    const { leaf, target, before, from } = pageQuery(c);
    const request = { leaf, target, before, from };
    const base = `/s/${token}`;
    const key = `${reading.versionKey(share, head)} ${base} ${JSON.stringify(request)}`;
    const page = await pages.get(key, async () => {
      const view = await reading.page(share, head, base, request);
      view.blobs = `${base}/blobs/`;
      const absolute = `${origin(c)}${base}`;
      view.card = {
        url: `${absolute}${leafQuery(leaf)}`,
        markdown: `${absolute}/md${leafQuery(leaf)}`,
        image: `${absolute}/preview.png`,
      };
      return work.renderPage(view);
    });
    // One view per page load the reader got (a GET, not a HEAD, not an error): the owner sees it.
    await count(c, () => shares.recordView(share));
    // The page's script asks for the tree next: a whole share's starts being made once this
    // answer is out, so that its work never delays it (errors are the tree request's to answer).
    if (share.leafId === undefined) setImmediate(() => treeOf(share, head).catch(() => {}));
    const answer = KeptBodies.respond(c, page, "text/html; charset=UTF-8");
    // The same address answers Markdown to clients that ask for it.
    answer.headers.set("Vary", "Accept, Accept-Encoding");
    return answer;
  });

  /** A revoked or expired link's notice, with a card saying so (its image says so too). */
  const gonePage = (c: Parameters<typeof parseQuery>[1], token: string, message: string) => {
    const absolute = `${origin(c)}/s/${token}`;
    const card = { url: absolute, markdown: `${absolute}/md`, image: `${absolute}/preview.png` };
    return c.html(viewer().renderNotice({ title: "This link is no longer available", message, card }), 410);
  };

  // Preview images by version of the session and what a share shows of it (every link to it
  // shares one), drawn a few at a time by `services.preview` (the share pool's threads on the
  // Node server, never the event loop); past the queue, the session's last image or a 503.
  const images = new Memo<Uint8Array>(64, 16 * 1024 * 1024, (png) => png.length);
  const lastDrawn = new Lru<Uint8Array>(64, 16 * 1024 * 1024, (png) => png.length);
  const drawing = new Gate(PREVIEWS_AT_ONCE, PREVIEWS_WAITING);
  const draw = async (card: () => Promise<PreviewCard>) => {
    const drawn = await drawing.run(async () => services.preview(await card()));
    if (!drawn) throw new Busy("too many preview images are being drawn; try again in a moment", 5);
    return drawn.value;
  };

  /** The link's preview image: a revoked or expired link's says so (200: unfurlers show it). */
  app.get("/:token/preview.png", async (c) => {
    let png: Uint8Array;
    try {
      const { share, head } = await open(c);
      const anyVersion = reading.imageKey(share, head, false);
      try {
        png = await images.get(reading.imageKey(share, head), async () => {
          const made = await draw(async () => {
            const doc = await reading.document(share, head);
            const { cardText, factsLine } = viewer();
            return previewCard(doc, { title: cardText(doc.facts).title, facts: factsLine(doc.facts) });
          });
          lastDrawn.set(anyVersion, made);
          return made;
        });
      } catch (error) {
        // Busy: an earlier version's image says nearly as much, at once.
        const previous = error instanceof Busy ? lastDrawn.get(anyVersion) : undefined;
        if (!previous) throw error;
        png = previous;
      }
    } catch (error) {
      if (!(error instanceof Gone)) throw error;
      png = await images.get(`gone ${error.message}`, () =>
        draw(async () => ({ title: "", facts: "", lines: [], gone: error.message })),
      );
    }
    return c.body(png as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "image/png" });
  });
}

/** What the page reads as it is used: find, live state, windows of entries, images, the tree, the raw bytes, the context. */
function readRoutes(app: Hono, { services, shares, pageQuery, open, count, treeOf }: ShareRouteContext): void {
  const { reading, work } = services;
  /** The tree's search over the whole text of every entry (masked), a page of matches at a time. */
  app.get("/:token/find", async (c) => {
    const { q, from } = parseQuery(TreeFindQuery, c);
    const { share, head } = await open(c);
    return c.json(await reading.find(share, head, q, from));
  });

  /** For live pages: an ETag that changes as the session grows (a pinned share's never does: its path is fixed). */
  app.get("/:token/state", async (c) => {
    const { share, head } = await open(c);
    const state = await reading.state(share, head);
    const etag = `"${state.generation}-${share.leafId === undefined ? "" : "p"}${state.bytes}"`;
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    // A live page updates its header with these (only when the session moved: a 304 reads nothing).
    return c.json(share.leafId === undefined ? { ...state, facts: await reading.liveFacts(share, head) } : state);
  });

  /** A window of a branch (`before`/`from`), or the entries after `after` (live updates), as an HTML fragment. */
  app.get("/:token/entries", compress(), async (c) => {
    const { share, head } = await open(c);
    const window = await reading.window(share, head, pageQuery(c));
    return c.html(await work.renderEntries({ ...window, blobs: `/s/${c.req.param("token")}/blobs/` }));
  });

  /** An image the share's session names, kept as a blob (oh-my-pi's `blob:sha256:`): no other blob of its owner. */
  app.get("/:token/blobs/:hash", async (c) => {
    const { head } = await open(c);
    const image = await services.blobs.sessionImage(
      head,
      c.req.param("hash"),
      async () => (await services.reader.raw(head.userId, head.sessionId, {})).bytes,
    );
    c.header("Content-Type", image.contentType);
    return c.body(image.bytes as Uint8Array<ArrayBuffer>);
  });

  /** The compact tree of a whole share (JSON, parallel arrays, masked), for the navigator. */
  app.get("/:token/tree", async (c) => {
    const { share, head } = await open(c);
    return KeptBodies.respond(c, await treeOf(share, head, pageQuery(c).leaf), "application/json; charset=UTF-8");
  });

  /** The JSONL: the whole session, or (pinned) the header and the path's entries; streamed, masked. */
  app.get("/:token/raw", async (c) => {
    const { share, head } = await open(c);
    const pieces = await started(reading.branchFile(share, head));
    await count(c, () => shares.recordDownload(share));
    c.header("Content-Type", "application/x-ndjson; charset=utf-8");
    c.header("Content-Disposition", `attachment; filename="${head.sessionId}${share.leafId ? "-branch" : ""}.jsonl"`);
    return c.body(textStream(pieces));
  });

  /** The rebuilt context, as JSON: for people and for agents that read links; streamed, masked. */
  app.get("/:token/context", async (c) => {
    const { leaf } = pageQuery(c);
    const { share, head } = await open(c);
    const pieces = await started(reading.context(share, head, leaf));
    await count(c, () => shares.recordDownload(share));
    c.header("Content-Type", "application/json; charset=utf-8");
    return c.body(textStream(pieces));
  });
}
