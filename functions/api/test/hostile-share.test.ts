/**
 * A hostile session shared: every credential shape of the corpus in every placement (message
 * text, thinking, tool arguments and results, bash output after a newline or tab, after a
 * disable comment, doubly escaped, crossing the preview cut, custom messages, compaction
 * summaries, session names, labels, the header's folder). On the page (every page of it and
 * the branch list), `/raw` and `/context` of a whole and a pinned share, no 12 consecutive
 * characters of any credential show, and the masked `/raw` holds the same entries. A large
 * session's index is built once per version, whoever reads it and however many at once.
 */
import { newShareKeys } from "@pisync/core";
import type { MetaStore } from "@pisync/store";
import { openPair, type Pair } from "@pisync/testing";
import { credentialShapes, everyFieldSession, hostileSession, leaks } from "@pisync/testing/hostile";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const shapes = credentialShapes();

/** Every credential that shows in `text`, with what of it shows. */
function leaked(text: string) {
  return shapes.map((s) => ({ rule: s.rule, shown: leaks(text, s.secret) })).filter((l) => l.shown.length > 0);
}

for (const name of ["embedded", "aws"] as const) {
  describe(`a hostile session shared (${name})`, () => {
    let pair: Pair;
    let app: ReturnType<typeof createApp>;
    let c: ReturnType<typeof client>;
    const id = `hostile-${name}`;
    const session = hostileSession(id, shapes);
    const tip = (JSON.parse(session.lines[session.lines.length - 1]) as { id: string }).id;
    /** The last entry the page renders as an article (the tip is a label). */
    const lastShown = `e${shapes.length - 1}-0`;
    const pathLength = session.placed.filter((p) => p.id?.startsWith("e")).length + 1;

    beforeAll(async () => {
      pair = await openPair(name);
      const keys = newShareKeys();
      app = createApp({ stores: pair.stores, shareKeys: async () => keys, log: () => {} });
      c = client(app, await userToken(pair.stores, "hostile-owner"));
      expect((await c.patch(id, 0, session.text)).status).toBe(200);
    });
    afterAll(() => pair.close());

    async function share(body: Record<string, unknown>) {
      const r = await c.post(`/v1/sessions/${id}/shares`, body);
      expect(r.status, await r.clone().text()).toBe(201);
      return new URL(((await r.json()) as { url: string }).url).pathname;
    }

    async function text(url: string): Promise<string> {
      const r = await app.request(url);
      expect(r.status, url).toBe(200);
      return r.text();
    }

    /** Every page of the path (latest first, then earlier ones), as one text. */
    async function allPages(path: string) {
      const pages = [await text(path)];
      for (let before = pathLength - 150; before > 0; before -= 150) pages.push(await text(`${path}?before=${before}`));
      return pages.join("\n");
    }

    /** The raw download: masked lines that parse to the original entries, ids and types. */
    async function checkRaw(path: string, expected: string[]) {
      const raw = await text(`${path}/raw`);
      expect(leaked(raw)).toEqual([]);
      const lines = raw.split("\n").filter(Boolean);
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const original = expected.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed.map((e) => [e.type, e.id, e.parentId])).toEqual(original.map((e) => [e.type, e.id, e.parentId]));
      expect(raw).toContain("[masked: ");
    }

    it("a whole share shows no credential on any page, in the branch list, /raw or /context", async () => {
      const path = await share({});
      const html = await allPages(path);
      expect(html).toContain('id="e-e0"');
      expect(html).toContain(`id="e-${lastShown}"`);
      expect(html).toContain("[masked: ");
      expect(html).toContain("credentials masked in what this link shows");
      expect(leaked(html)).toEqual([]);
      // Each branch's own page (its preview crossed the cut).
      for (let i = 0; i < shapes.length; i += 7) expect(leaked(await text(`${path}?leaf=b${i}`))).toEqual([]);
      await checkRaw(path, session.lines);
      const context = await text(`${path}/context`);
      expect(leaked(context)).toEqual([]);
      expect((JSON.parse(context) as { masked: number }).masked).toBeGreaterThan(0);
      const branch = await text(`${path}/context?leaf=b3`);
      expect(leaked(branch)).toEqual([]);
      // The check itself sees every credential where nothing is masked.
      const open = await share({ maskSecrets: false });
      expect(leaked(await text(`${open}/raw`)).map((l) => l.rule)).toEqual(shapes.map((s) => s.rule));
    }, 90_000);

    it("a pinned share shows no credential on its page, /raw or /context", async () => {
      const path = await share({ leafId: tip });
      expect(leaked(await allPages(path))).toEqual([]);
      // Pinned: the header and the path's entries (not the branches).
      const onPath = session.lines.filter((l) => {
        const entry = JSON.parse(l) as { type: string; id: string };
        return entry.type === "session" || !entry.id.startsWith("b");
      });
      await checkRaw(path, onPath);
      expect(leaked(await text(`${path}/context`))).toEqual([]);
    }, 90_000);

    it("a title taken from a first message is masked before it is cut", async () => {
      for (const shape of shapes.filter((_, i) => i % 5 === 0)) {
        const titled = `titled-${name}-${shapes.indexOf(shape)}`;
        const body =
          `${JSON.stringify({ type: "session", version: 3, id: titled, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n` +
          `${JSON.stringify({ type: "message", id: "t1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `${"context ".repeat(13)}${shape.text}`, timestamp: 1 } })}\n`;
        expect((await c.patch(titled, 0, body)).status).toBe(200);
        const created = await c.post(`/v1/sessions/${titled}/shares`, {});
        const html = await text(new URL(((await created.json()) as { url: string }).url).pathname);
        const title = html.match(/<title>([^<]*)<\/title>/)?.[1] ?? "";
        expect(title.startsWith("context context"), title).toBe(true);
        expect(leaks(html, shape.secret), shape.rule).toEqual([]);
      }
    });

    it("a pinned share of a branch masks its title and preview text", async () => {
      const path = await share({ leafId: "b0" });
      const html = await text(path);
      expect(html).toContain('id="e-b0"');
      expect(leaked(html)).toEqual([]);
      expect(leaked(await text(`${path}/raw`))).toEqual([]);
    });
  });
}

for (const name of ["embedded", "aws"] as const) {
  describe(`every string field of a session holds a credential, shared (${name})`, () => {
    let pair: Pair;
    let app: ReturnType<typeof createApp>;
    const cards: unknown[] = [];
    const id = `every-field-${name}`;
    const session = everyFieldSession(id, shapes);
    const pathLength = session.lines.length - 1;

    beforeAll(async () => {
      pair = await openPair(name);
      const keys = newShareKeys();
      app = createApp({
        stores: pair.stores,
        shareKeys: async () => keys,
        log: () => {},
        preview: async (card) => {
          cards.push(card);
          return new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
        },
      });
      const c = client(app, await userToken(pair.stores, "every-field-owner"));
      expect((await c.patch(id, 0, session.text)).status).toBe(200);
    });
    afterAll(() => pair.close());

    async function text(url: string, headers: Record<string, string> = {}): Promise<string> {
      const r = await app.request(url, { headers });
      expect(r.status, url).toBe(200);
      return r.text();
    }

    it("no surface of a share shows one: pages, windows, tree, find, state, /raw, /context, /md, the card", async () => {
      const c = client(app, await userToken(pair.stores, "every-field-owner"));
      const created = await c.post(`/v1/sessions/${id}/shares`, {});
      const path = new URL(((await created.json()) as { url: string }).url).pathname;
      const surfaces: Record<string, string> = {};
      const pages = [await text(path, { Accept: "text/html" })];
      for (let before = pathLength - 150; before > 0; before -= 150) pages.push(await text(`${path}?before=${before}`));
      surfaces.pages = pages.join("\n");
      surfaces.entries = await text(`${path}/entries?from=0`);
      surfaces.tree = await text(`${path}/tree`);
      surfaces.find = await text(`${path}/find?q=masked`);
      surfaces.state = await text(`${path}/state`);
      surfaces.raw = await text(`${path}/raw`);
      surfaces.context = await text(`${path}/context`);
      surfaces.md = await text(`${path}/md`);
      surfaces.markdownByAccept = await text(path, { Accept: "text/markdown" });
      expect((await app.request(`${path}/preview.png`)).status).toBe(200);
      surfaces.card = JSON.stringify(cards.at(-1));
      for (const [surface, shown] of Object.entries(surfaces)) {
        expect(
          leaked(shown).map((l) => l.rule),
          surface,
        ).toEqual([]);
      }
      // The context's settings and the page head's thinking level were credentials: masked.
      const context = JSON.parse(surfaces.context) as { thinkingLevel: string; model: { provider: string } };
      expect(context.thinkingLevel).toContain("[masked: ");
      expect(context.model.provider).toContain("[masked: ");
      expect(surfaces.pages).toMatch(/<span>thinking [^<]*\[masked: /);
      // The check itself sees them where nothing is masked.
      const open = await c.post(`/v1/sessions/${id}/shares`, { maskSecrets: false });
      const openPath = new URL(((await open.json()) as { url: string }).url).pathname;
      const openContext = await text(`${openPath}/context`);
      expect(leaked(openContext.slice(openContext.lastIndexOf("]"))).length).toBeGreaterThan(0);
    }, 120_000);
  });
}

describe("a large session shared (embedded)", () => {
  let pair: Pair;
  let app: ReturnType<typeof createApp>;
  let c: ReturnType<typeof client>;
  /** Index pages read from the store: each read is one build of the index. */
  let pageReads = 0;
  const lines = 60_000; // more than the reader indexes without letting the event loop turn
  let link: string;

  beforeAll(async () => {
    pair = await openPair("embedded");
    const meta: MetaStore = Object.create(pair.stores.meta);
    meta.getPages = (...args) => {
      pageReads++;
      return pair.stores.meta.getPages(...args);
    };
    const keys = newShareKeys();
    app = createApp({ stores: { ...pair.stores, meta }, shareKeys: async () => keys, log: () => {} });
    c = client(app, await userToken(pair.stores, "large-owner"));
    const text = [
      JSON.stringify({ type: "session", version: 3, id: "large", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
    ];
    for (let i = 0; i < lines; i++) {
      text.push(
        JSON.stringify({
          type: "message",
          id: `m${i}`,
          parentId: i ? `m${i - 1}` : null,
          message: { role: "user", content: `line ${i}` },
        }),
      );
    }
    let offset = 0;
    for (let i = 0; i < text.length; i += 20_000) {
      const body = `${text.slice(i, i + 20_000).join("\n")}\n`;
      expect((await c.patch("large", offset, body)).status).toBe(200);
      offset += Buffer.byteLength(body);
    }
    const r = await c.post("/v1/sessions/large/shares", {});
    link = new URL(((await r.json()) as { url: string }).url).pathname;
  }, 120_000);
  afterAll(() => pair.close());

  it("builds the index once per version for pages, downloads and the owner's reads at once", async () => {
    expect((await app.request(link)).status).toBe(200); // builds the index of this version
    const before = pageReads;
    const answers = await Promise.all([
      app.request(link),
      app.request(`${link}/context`),
      app.request(`${link}?leaf=m10`),
      c.get("/v1/sessions/large/context"),
      c.get("/v1/sessions/large/tree"),
    ]);
    for (const r of answers) expect(r.status).toBe(200);
    const context = (await answers[1].json()) as { messages: unknown[]; leafId: string };
    expect(context.messages).toHaveLength(lines);
    expect(context.leafId).toBe(`m${lines - 1}`);
    expect(pageReads).toBe(before); // none: the index built for the first page serves them all
    // The session grows: one build of the new version, shared by requests at once.
    const next = `${JSON.stringify({ type: "message", id: "n", parentId: `m${lines - 1}`, message: { role: "user", content: "next" } })}\n`;
    const head = await c.head("large");
    expect((await c.patch("large", Number(head.headers.get("Upload-Offset")), next)).status).toBe(200);
    const grown = await Promise.all([
      app.request(link),
      app.request(`${link}/context`),
      c.get("/v1/sessions/large/context"),
    ]);
    for (const r of grown) expect(r.status).toBe(200);
    expect(((await grown[2].json()) as { leafId: string }).leafId).toBe("n");
    expect(pageReads).toBe(before + 1);
  });
});
