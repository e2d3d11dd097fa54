/**
 * A hostile session shared: every credential shape of the corpus in every placement (message
 * text, thinking, tool arguments and results, bash output after a newline or tab, after a
 * disable comment, doubly escaped, crossing the preview cut, custom messages, compaction
 * summaries, session names, labels, the header's folder). On the page (every page of it and
 * the branch list), `/raw` and `/context` of a whole and a pinned share, no 12 consecutive
 * characters of any credential show, and the masked `/raw` holds the same entries.
 */
import { newShareKeys } from "@pisync/core";
import { openPair, type Pair } from "@pisync/testing";
import { credentialShapes, hostileSession, leaks } from "@pisync/testing/hostile";
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
    });

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
    });

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
