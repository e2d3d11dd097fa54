/**
 * A share's page and tree are made once per version of the session and kept with their gzip:
 * the same bytes again to every reader, gzipped to those who take it; a session that grew, a
 * link revoked, another link to the same session or another user's link never get a kept answer.
 */
import { gunzipSync } from "node:zlib";
import { newShareKeys, type ShareKeys } from "@pisync/core";
import { describeOnEveryStore, line, sessionHeader, userLine } from "@pisync/testing";
import type { CompactTree } from "@pisync/viewer";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const GITHUB_TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;

describeOnEveryStore("kept share pages and trees", (pair, name) => {
  let app: ReturnType<typeof createApp>;
  let c: ReturnType<typeof client>;
  let keys: ShareKeys;

  beforeAll(async () => {
    keys = newShareKeys();
    app = createApp({ stores: pair().stores, shareKeys: async () => keys, log: () => {} });
    c = client(app, await userToken(pair().stores, "kept-owner"));
  });

  const gzipped = { "Accept-Encoding": "gzip, deflate, br" };
  const body = async (r: Response) =>
    r.headers.get("Content-Encoding") === "gzip"
      ? gunzipSync(new Uint8Array(await r.arrayBuffer())).toString("utf8")
      : r.text();

  it("serves the same page and tree again, gzipped to clients that take it, plain to others", async () => {
    const id = `kept-${name}-same`;
    const first = line(sessionHeader(id)) + userLine("k1", null, 1, "first question");
    expect((await c.patch(id, 0, first)).status).toBe(200);
    const { url } = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { url: string };
    const path = new URL(url).pathname;
    const plain = await app.request(path);
    expect(plain.headers.get("Content-Encoding")).toBeNull();
    expect(plain.headers.get("Content-Type")).toContain("text/html");
    expect(plain.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const html = await plain.text();
    expect(html).toContain("first question");
    for (let i = 0; i < 2; i++) {
      const zipped = await app.request(path, { headers: gzipped });
      expect(zipped.headers.get("Content-Encoding")).toBe("gzip");
      expect(zipped.headers.get("Vary")).toContain("Accept-Encoding");
      expect(await body(zipped)).toBe(html);
    }
    // A client that refuses gzip gets the text.
    const refused = await app.request(path, { headers: { "Accept-Encoding": "gzip;q=0" } });
    expect(refused.headers.get("Content-Encoding")).toBeNull();
    expect(await refused.text()).toBe(html);
    const tree = JSON.parse(await body(await app.request(`${path}/tree`, { headers: gzipped }))) as CompactTree;
    expect(tree.ids).toEqual(["k1"]);
    // The page preloads the tree the script asks for.
    expect(html).toContain(`<link rel="preload" href="${path}/tree" as="fetch" crossorigin="anonymous">`);
  });

  it("a session that grew, another window, another link, a revoked link: none gets a kept answer", async () => {
    const id = `kept-${name}-grows`;
    const first = line(sessionHeader(id)) + userLine("g1", null, 1, `use ${GITHUB_TOKEN}`);
    expect((await c.patch(id, 0, first)).status).toBe(200);
    const masked = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { id: string; url: string };
    const open = (await (await c.post(`/v1/sessions/${id}/shares`, { maskSecrets: false })).json()) as { url: string };
    const path = new URL(masked.url).pathname;
    expect(await (await app.request(path)).text()).not.toContain(GITHUB_TOKEN);
    expect(await (await app.request(`${path}/tree`)).text()).not.toContain(GITHUB_TOKEN);
    // Another link to the same version shows what it may: unmasked.
    expect(await (await app.request(new URL(open.url).pathname)).text()).toContain(GITHUB_TOKEN);
    expect(await (await app.request(`${new URL(open.url).pathname}/tree`)).text()).toContain(GITHUB_TOKEN);
    // The session grows: the page and the tree show the new entry.
    const more = userLine("g2", "g1", 2, "a later question");
    expect((await c.patch(id, Buffer.byteLength(first), more)).status).toBe(200);
    const grown = await (await app.request(path)).text();
    expect(grown).toContain("a later question");
    expect(grown).not.toContain(GITHUB_TOKEN);
    expect(((await (await app.request(`${path}/tree`)).json()) as CompactTree).ids).toEqual(["g1", "g2"]);
    // Another branch of the same version is its own page.
    expect(await (await app.request(`${path}?leaf=g1`)).text()).not.toContain("a later question");
    // Revoked: refused, though its page was kept.
    expect((await c.delete(`/v1/shares/${masked.id}`)).status).toBe(204);
    expect((await app.request(path)).status).toBe(410);
    expect((await app.request(`${path}/tree`)).status).toBe(410);
  });

  it("another user's link never answers with my kept page", async () => {
    const id = `kept-${name}-mine`;
    expect((await c.patch(id, 0, line(sessionHeader(id)) + userLine("m1", null, 1, "mine only"))).status).toBe(200);
    const { url } = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { url: string };
    const path = new URL(url).pathname;
    expect(await (await app.request(path)).text()).toContain("mine only");
    const other = client(app, await userToken(pair().stores, "kept-other"));
    const theirs = `kept-${name}-theirs`;
    expect((await other.patch(theirs, 0, line(sessionHeader(theirs)) + userLine("o1", null, 1, "theirs"))).status).toBe(
      200,
    );
    const created = (await (await other.post(`/v1/sessions/${theirs}/shares`, {})).json()) as { url: string };
    const page = await (await app.request(new URL(created.url).pathname)).text();
    expect(page).toContain("theirs");
    expect(page).not.toContain("mine only");
    // My link cannot show their entries either (404, like a missing one).
    expect((await app.request(`${path}?leaf=o1`)).status).toBe(404);
    expect((await app.request(`${path}/tree?leaf=o1`)).status).toBe(404);
  });
});
