/**
 * The library's pages over HTTP on both stores with search on: the sessions list (order
 * by the conversation's time, filters, pages), search (server-rendered and live JSON), one
 * session (the viewer unmasked, downloads, delete behind a typed confirmation), shares (create,
 * view counts, revoke, revoke all), tenancy, and hostile text through every page.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newShareKeys, SearchIndexer, storedLines, Tokens } from "@pisync/core";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { assistantMessage, entry, line, openPair, type Pair, STORE_NAMES, userMessage } from "@pisync/testing";
import { TOOL_XSS } from "@pisync/testing/hostile";
import { escapeHtml } from "@pisync/viewer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, eventually, userToken } from "./harness.js";

const at = (day: string, s = 0) => `${day}T10:00:${String(s).padStart(2, "0")}.000Z`;

/** A small session: header, a user message, an assistant reply by `model`, on `day`. */
function session(id: string, o: { cwd: string; day: string; model?: string; text?: string; name?: string }): string {
  const header = { type: "session", version: 3, id, timestamp: at(o.day), cwd: o.cwd };
  const lines = [
    line(header),
    line({ ...entry(`${id}-u`, null, 1, userMessage(o.text ?? `hello from ${id}`)), timestamp: at(o.day, 1) }),
    line({
      ...entry(`${id}-a`, `${id}-u`, 2, assistantMessage(`reply in ${id}`, { model: o.model ?? "claude-sonnet-4-5" })),
      timestamp: at(o.day, 2),
    }),
  ];
  if (o.name)
    lines.push(
      line({ type: "session_info", id: `${id}-n`, parentId: `${id}-a`, timestamp: at(o.day, 3), name: o.name }),
    );
  return lines.join("");
}

describe.each(STORE_NAMES)("the library's pages (%s)", (storeName) => {
  let pair: Pair;
  let dir: string;
  let index: SqliteSearchIndex;
  let app: ReturnType<typeof createApp>;
  let alice: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;
  const html = { Accept: "text/html" };

  beforeAll(async () => {
    pair = await openPair(storeName);
    dir = mkdtempSync(join(tmpdir(), "pisync-library-"));
    index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(pair.stores));
    const keys = newShareKeys();
    app = createApp({
      stores: pair.stores,
      log: () => {},
      shareKeys: async () => keys,
      search: { index, indexer: new SearchIndexer(pair.stores, index) },
    });
    alice = client(app, await userToken(pair.stores, "alice"));
    bob = client(app, await userToken(pair.stores, "bob"));
    // Uploaded in an order unlike their conversations' order: the list follows the conversations.
    const sessions: Array<[string, Parameters<typeof session>[1]]> = [
      ["old", { cwd: "/w/api", day: "2025-03-01", model: "gpt-5", text: "the S3 retry bug" }],
      ["new", { cwd: "/w/api/sub", day: "2026-02-10", name: "Newest work" }],
      ["mid", { cwd: "/w/web", day: "2025-11-20", text: "css grid pelicans" }],
    ];
    for (const [id, o] of sessions) expect((await alice.patch(id, 0, session(id, o))).status).toBe(200);
    expect((await bob.patch("bobs", 0, session("bobs", { cwd: "/w/api", day: "2026-03-01" }))).status).toBe(200);
  });
  afterAll(() => {
    index.close();
    pair.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const page = async (c: ReturnType<typeof client>, path: string, status = 200) => {
    const r = await c.get(path, html);
    expect(r.status, path).toBe(status);
    return r.text();
  };
  const order = (text: string) => [...text.matchAll(/<a class="title" href="\/sessions\/([^"]+)"/g)].map((m) => m[1]);
  const post = (c: ReturnType<typeof client>, path: string, form: Record<string, string>) =>
    app.request(path, {
      method: "POST",
      headers: { ...c.auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
      redirect: "manual",
    });

  it("lists my sessions by their conversation's time, newest first, under the library's CSP", async () => {
    const r = await alice.get("/", html);
    expect(r.status).toBe(200);
    expect(r.headers.get("Content-Security-Policy")).toContain("form-action 'self'");
    expect(r.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const text = await r.text();
    expect(order(text)).toEqual(["new", "mid", "old"]);
    expect(text).toContain("Newest work");
    expect(text).toContain("anthropic/claude-sonnet-4-5");
    expect(text).toContain('<option value="/w/api">');
    expect(text).toContain('<option value="anthropic/gpt-5">');
    expect(text).not.toContain("bobs");
  });

  it("filters by folder (and the folders inside it), model and dates; pages with a cursor", async () => {
    expect(order(await page(alice, "/?cwd=%2Fw%2Fapi"))).toEqual(["new", "old"]);
    expect(order(await page(alice, "/?model=gpt-5"))).toEqual(["old"]);
    expect(order(await page(alice, "/?model=anthropic%2Fgpt-5"))).toEqual(["old"]);
    expect(order(await page(alice, "/?from=2025-06-01"))).toEqual(["new", "mid"]);
    expect(order(await page(alice, "/?from=2025-03-01&to=2025-11-20"))).toEqual(["mid", "old"]);
    expect(order(await page(alice, "/?cwd=%2Fw%2Fweb&model=gpt-5"))).toEqual([]);
    await page(alice, "/?from=yesterday", 400);
    await page(alice, "/?cursor=forged", 400);
  });

  it("pages a long list by its 'Older sessions' link, nothing twice, and refuses another user's cursor", async () => {
    const carol = client(app, await userToken(pair.stores, "carol"));
    const ids = Array.from({ length: 56 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    for (const [i, id] of ids.entries()) {
      const day = `2025-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}`;
      const cwd = i % 4 === 0 ? "/w/rare" : "/w/common";
      expect((await carol.patch(id, 0, session(id, { cwd, day }))).status).toBe(200);
    }
    const next = (text: string) =>
      /<a rel="next" href="([^"]+)">Older sessions<\/a>/.exec(text)?.[1]?.replaceAll("&amp;", "&");
    const follow = async (path: string) => {
      const seen: string[] = [];
      for (let at: string | undefined = path, pages = 0; at && pages < 10; pages++) {
        const text = await page(carol, at);
        seen.push(...order(text));
        at = next(text);
      }
      return seen;
    };
    const all = await follow("/");
    expect(all).toHaveLength(56);
    expect(new Set(all).size).toBe(56);
    const first = await page(carol, "/");
    expect(order(first)).toHaveLength(50);
    // The list is the conversations' order: each page's last is older than the next page's first.
    const v1 = (await (await carol.get("/v1/sessions?limit=100")).json()) as { sessions: { id: string }[] };
    expect(v1.sessions).toHaveLength(56);
    const rare = await follow("/?cwd=%2Fw%2Frare");
    expect(rare.sort()).toEqual(ids.filter((_, i) => i % 4 === 0).sort());
    // Carol's cursor names her list: Alice's request with it is refused, nothing of Carol's shown.
    const cursor = new URL(`http://x${next(first)}`).searchParams.get("cursor") as string;
    const refused = await alice.get(`/?cursor=${encodeURIComponent(cursor)}`, html);
    expect(refused.status).toBe(400);
    expect(await refused.text()).not.toContain("c00");
  });

  it("GET /v1/sessions pages with a cursor, nothing twice, and another user's cursor shows only my own", async () => {
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const r = await alice.get(`/v1/sessions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(r.status).toBe(200);
      const body = (await r.json()) as { sessions: { id: string }[]; cursor?: string };
      expect(body.sessions.length).toBeLessThanOrEqual(2);
      listed.push(...body.sessions.map((s) => s.id));
      cursor = body.cursor;
    } while (cursor);
    expect(new Set(listed).size).toBe(listed.length);
    for (const id of ["old", "new", "mid"]) expect(listed).toContain(id);
    expect(listed).not.toContain("bobs");
    const bobs = (await (await bob.get("/v1/sessions?limit=1")).json()) as { cursor?: string };
    if (bobs.cursor) {
      const r = await alice.get(`/v1/sessions?limit=10&cursor=${encodeURIComponent(bobs.cursor)}`);
      const body = (await r.json()) as { sessions: { id: string }[] };
      expect(body.sessions.map((s) => s.id)).not.toContain("bobs");
    }
  });

  it("searches: hits grouped by session, snippets marked, each linking to the session at its entry", async () => {
    const text = await eventually(
      () => page(alice, `/?q=${encodeURIComponent('"retry bug"')}`),
      (t) => t.includes("<mark>"),
    );
    expect(text).toContain('href="/sessions/old?targetId=old-u#e-old-u"');
    expect(text).toContain("the S3 <mark>retry bug</mark>");
    expect(text).not.toContain("pelicans");
    const live = await alice.get(`/library/search?q=pelicans&cwd=${encodeURIComponent("/w/web")}`);
    expect(live.status).toBe(200);
    const json = await live.json();
    expect(json.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(["mid"]);
    const elsewhere = await (await alice.get(`/library/search?q=pelicans&cwd=${encodeURIComponent("/w/api")}`)).json();
    expect(elsewhere.sessions).toEqual([]);
    const bad = await alice.get(`/library/search?q=${encodeURIComponent('"unclosed')}`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe("bad_query");
    expect(await page(alice, `/?q=${encodeURIComponent("role:nobody")}`, 400)).toContain('role="alert"');
    // Another user's sessions are never found.
    expect((await (await bob.get("/library/search?q=pelicans")).json()).sessions).toEqual([]);
  });

  it("shows one of my sessions in the viewer, unmasked, with its tree, windows, downloads and actions", async () => {
    const secret = `sk-ant-api03-${"A".repeat(80)}`;
    const body = session("keys", { cwd: "/w/k", day: "2026-01-05", text: `my key is ${secret}` });
    expect((await alice.patch("keys", 0, body)).status).toBe(200);
    const text = await page(alice, "/sessions/keys");
    expect(text).toContain('data-base="/sessions/keys"');
    expect(text).toContain(secret);
    expect(text).toContain("pisync pull keys");
    expect(text).toContain('href="/sessions/keys/raw?generation=1"');
    expect(text).toContain('href="/sessions/keys/delete"');
    expect(text).toContain('<script type="module" src="/assets/library.js">');
    expect((await alice.get("/sessions/keys/tree")).status).toBe(200);
    expect((await (await alice.get("/sessions/keys/tree")).json()).ids).toEqual(["keys-u", "keys-a"]);
    expect(await (await alice.get("/sessions/keys/entries?from=0")).text()).toContain('id="e-keys-a"');
    expect((await (await alice.get("/sessions/keys/state")).json()).generation).toBe(1);
    expect((await (await alice.get("/sessions/keys/context")).json()).messages).toHaveLength(2);
    // The tree's search reads the whole text, unmasked for its owner.
    const find = async (q: string) => (await alice.get(`/sessions/keys/find?q=${encodeURIComponent(q)}`)).json();
    expect(await find(secret.slice(0, 40))).toEqual({ matches: [0], total: 2 });
    expect(await find("reply in")).toEqual({ matches: [1], total: 2 });
    expect(await find("masked:")).toEqual({ matches: [], total: 2 });
    // A new generation: the old one stays downloadable, byte for byte.
    const second = session("keys", { cwd: "/w/k", day: "2026-01-06", text: "rewritten" });
    expect((await alice.put("keys", second)).status).toBe(200);
    const first = await alice.get("/sessions/keys/raw?generation=1");
    expect(first.headers.get("Content-Disposition")).toContain('filename="keys-generation-1.jsonl"');
    expect(await first.text()).toBe(body);
    expect(await (await alice.get("/sessions/keys/raw")).text()).toBe(second);
    expect(await page(alice, "/sessions/keys")).toContain("1 earlier generation");
    const missing = await alice.get("/sessions/keys/raw?generation=9", html);
    expect(missing.status).toBe(404);
    // A browser gets the missing page as a page, not as a download.
    expect(missing.headers.get("Content-Disposition")).toBeNull();
  });

  it("lists the files the session touched, each linking to the entry that first touched it, escaped", async () => {
    const id = "touched";
    const call = (path: string) => ({ type: "toolCall" as const, id: "t", name: "read", arguments: { path } });
    const lines = [
      line({ type: "session", version: 3, id, timestamp: at("2026-01-07"), cwd: "/w/t" }),
      line(entry("touched-u", null, 1, userMessage("mentions src/not-a-call.ts"))),
      line(entry("touched-a", "touched-u", 2, assistantMessage([call("src/cart.ts")]))),
      line(entry("touched-b", "touched-a", 3, assistantMessage([call("src/cart.ts"), call(TOOL_XSS[0])]))),
      line(
        entry(
          "touched-c",
          "touched-b",
          4,
          assistantMessage([{ type: "toolCall", id: "t", name: "bash", arguments: { command: "cd web && ls" } }]),
        ),
      ),
    ];
    expect((await alice.patch(id, 0, lines.join(""))).status).toBe(200);
    const text = await eventually(
      () => page(alice, `/sessions/${id}`),
      (t) => t.includes("3 files touched"),
    );
    const listed = [...text.matchAll(/<li><a href="([^"]+)"><code>([^<]*)<\/code><\/a><\/li>/g)].map((m) => [
      m[2],
      m[1],
    ]);
    expect(listed).toEqual([
      ["src/cart.ts", "/sessions/touched?targetId=touched-a#e-touched-a"],
      [escapeHtml(TOOL_XSS[0]), "/sessions/touched?targetId=touched-b#e-touched-b"],
      ["web", "/sessions/touched?targetId=touched-c#e-touched-c"],
    ]);
    expect(text).not.toContain("not-a-call.ts</code>");
    expect(await page(bob, `/sessions/${id}`, 404)).not.toContain("src/cart.ts");
  });

  it("deletes a session only after its id is typed, by POST", async () => {
    expect((await alice.patch("doomed", 0, session("doomed", { cwd: "/w", day: "2026-01-02" }))).status).toBe(200);
    expect(await page(alice, "/sessions/doomed/delete")).toContain('name="confirm"');
    const wrong = await post(alice, "/sessions/doomed/delete", { confirm: "other" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("nothing was deleted");
    expect((await alice.get("/sessions/doomed", html)).status).toBe(200);
    const right = await post(alice, "/sessions/doomed/delete", { confirm: "doomed" });
    expect(right.status).toBe(303);
    expect(right.headers.get("Location")).toBe("/");
    expect((await alice.get("/sessions/doomed", html)).status).toBe(404);
    expect((await alice.get("/v1/sessions/doomed")).status).toBe(404);
  });

  it("makes a share link, shows its address once, counts its views, revokes it and all the others", async () => {
    const made = await post(alice, "/shares", { session: "mid", expires: "7", mask: "1" });
    expect(made.status).toBe(303);
    const location = made.headers.get("Location") ?? "";
    expect(location).toMatch(/^\/shares\?created=/);
    const created = await page(alice, location);
    const url = /value="([^"]+)" aria-label="Share link"/.exec(created)?.[1] ?? "";
    expect(url).toMatch(/\/s\/[A-Za-z0-9_-]+\.k1\./);
    expect(await page(alice, "/shares")).not.toContain(url);
    const path = new URL(url).pathname;
    for (let i = 0; i < 3; i++) expect((await app.request(path, { headers: html })).status).toBe(200);
    // Windows, trees and downloads are not page views.
    await app.request(`${path}/tree`);
    const listed = await (await alice.get("/v1/shares")).json();
    const share = listed.shares.find((s: { sessionId: string }) => s.sessionId === "mid");
    expect(share).toMatchObject({ views: 3, status: "active" });
    expect(Date.parse(share.lastViewedAt)).not.toBeNaN();
    const shares = await page(alice, "/shares");
    expect(shares).toContain('data-views="3"');
    expect(shares).toContain("css grid pelicans");
    // A pinned one, and one for another session; then revoke one, then all.
    expect((await post(alice, "/shares", { session: "old", expires: "1", leaf: "old-u" })).status).toBe(303);
    expect((await post(alice, "/shares", { session: "new", expires: "30" })).status).toBe(303);
    expect((await post(alice, "/shares", { session: "new", expires: "30", leaf: "nope" })).status).toBe(404);
    expect((await post(alice, "/shares", { session: "new", expires: "9999" })).status).toBe(400);
    const revoked = await post(alice, `/shares/${share.id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect((await app.request(path, { headers: html })).status).toBe(410);
    const after = await (await alice.get("/v1/shares")).json();
    expect(after.shares.find((s: { id: string }) => s.id === share.id)).toMatchObject({ status: "revoked", views: 3 });
    const all = await post(alice, "/shares/revoke-all", {});
    expect(all.status).toBe(303);
    expect(all.headers.get("Location")).toBe("/shares?revoked=2");
    const end = await (await alice.get("/v1/shares")).json();
    expect(end.shares.every((s: { status: string }) => s.status === "revoked")).toBe(true);
    expect(await page(alice, "/shares?revoked=2")).toContain("2 links revoked.");
  });

  it("pages the shares page by its 'Older links' link, titles from each page's own sessions, nobody else's", async () => {
    const dave = client(app, await userToken(pair.stores, "dave"));
    expect(
      (await dave.patch("dave-s", 0, session("dave-s", { cwd: "/w/d", day: "2026-01-01", name: "Daves work" }))).status,
    ).toBe(200);
    for (let i = 0; i < 53; i++) {
      await pair.stores.meta.putShare({
        id: `dave${String(i).padStart(3, "0")}aaaaaaaaaaaaaaa`,
        userId: "dave",
        sessionId: "dave-s",
        createdAt: `2026-01-01T00:00:${String(i).padStart(2, "0")}.000Z`,
        expiresAt: "2099-01-01T00:00:00.000Z",
        maskSecrets: true,
      });
    }
    const rows = (text: string) => [...text.matchAll(/<tr data-share="dave\d{3}/g)].length;
    const first = await page(dave, "/shares");
    expect(rows(first)).toBe(50);
    expect(first).toContain(">Daves work</a>");
    const more = /<a rel="next" href="([^"]+)">Older links<\/a>/.exec(first)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(more).toMatch(/^\/shares\?cursor=/);
    const second = await page(dave, more);
    expect(rows(second)).toBe(3);
    expect(second).not.toContain("Older links");
    // Dave's cursor is Dave's: Alice's request with it is refused.
    expect((await alice.get(more, html)).status).toBe(400);
  });

  it("pages the devices page by its 'More devices' link, nothing twice, nobody else's; another's cursor is 400", async () => {
    const frank = client(app, await userToken(pair.stores, "frank"));
    const tokens = new Tokens(pair.stores.meta);
    for (let i = 0; i < 52; i++) await tokens.create("frank", `machine-${i}`);
    await tokens.create("grace", "graces-laptop");
    const rows = (text: string) =>
      [...text.matchAll(/<tr data-kind="token" data-id="([a-f0-9]{12})"/g)].map((m) => m[1]);
    const first = await page(frank, "/devices");
    expect(rows(first)).toHaveLength(50);
    const more = /<a rel="next" href="([^"]+)">More devices<\/a>/.exec(first)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(more).toMatch(/^\/devices\?cursor=/);
    const second = await page(frank, more);
    expect(rows(second)).toHaveLength(3);
    expect(second).not.toContain("More devices");
    const all = [...rows(first), ...rows(second)];
    expect(new Set(all).size).toBe(53);
    expect(all).toEqual([...all].sort());
    expect(`${first}${second}`).not.toContain("graces-laptop");
    // Frank's cursor is Frank's: Alice's request with it is refused, as is one no page gave.
    expect((await alice.get(more, html)).status).toBe(400);
    expect((await frank.get("/devices?cursor=x.nope", html)).status).toBe(400);
  });

  it("another user's session or share answers 404 exactly like a missing one", async () => {
    const theirs = await post(bob, "/shares", { session: "bobs", expires: "7" });
    expect(theirs.status).toBe(303);
    const bobShare = (await (await bob.get("/v1/shares")).json()).shares[0].id as string;
    for (const id of ["bobs", "missing"]) {
      for (const path of [
        "",
        "/tree",
        "/entries",
        "/state",
        "/context",
        "/find?q=a",
        "/raw",
        "/raw?generation=1",
        "/delete",
      ]) {
        const r = await alice.get(`/sessions/${id}${path}`);
        expect(r.status, `${id}${path}`).toBe(404);
        expect((await r.json()).code).toBe("not_found");
      }
      expect((await post(alice, `/sessions/${id}/delete`, { confirm: id })).status).toBe(404);
      expect((await post(alice, "/shares", { session: id, expires: "7" })).status).toBe(404);
    }
    for (const id of [bobShare, "AAAAAAAAAAAAAAAAAAAAAA"]) {
      const r = await post(alice, `/shares/${id}/revoke`, {});
      expect(r.status).toBe(404);
      expect((await r.json()).code).toBe("not_found");
    }
    expect((await post(alice, "/shares/revoke-all", {})).status).toBe(303);
    expect((await (await bob.get("/v1/shares")).json()).shares[0].status).toBe("active");
    expect(await page(alice, "/shares")).not.toContain("bobs");
    expect((await bob.get("/sessions/bobs", html)).status).toBe(200);
  });

  it("asks for sign-in on every page and post; the root shows a browser the sign-in hint, an API client JSON", async () => {
    for (const path of ["/shares", "/sessions/mid", "/library/search?q=x"]) {
      expect((await app.request(path, { headers: html })).status).toBe(401);
    }
    expect((await app.request("/shares/revoke-all", { method: "POST" })).status).toBe(401);
    expect((await app.request("/", { headers: { ...html, Authorization: "Bearer pst_nope" } })).status).toBe(401);
    const hint = await app.request("/", { headers: html });
    expect(hint.status).toBe(401);
    expect(hint.headers.get("Content-Type")).toContain("text/html");
    expect(hint.headers.get("Content-Security-Policy")).toContain("form-action 'self'");
    expect(await hint.text()).toContain("<code>pisync open</code>");
    const api = await app.request("/", { headers: { Accept: "application/json" } });
    expect(api.status).toBe(401);
    expect(api.headers.get("Content-Type")).toContain("application/json");
    expect(await api.json()).toMatchObject({ code: "unauthorized" });
    expect((await app.request("/assets/library.js")).headers.get("Content-Type")).toContain("text/javascript");
    expect((await app.request("/assets/library.css")).headers.get("Content-Type")).toContain("text/css");
  });

  it("hostile names, folders, messages and snippets are escaped on every page", async () => {
    for (const [i, x] of TOOL_XSS.entries()) {
      const id = `xss${i}`;
      const body = session(id, { cwd: `/w/${x}`, day: "2026-01-03", name: x, text: `needle${i} ${x}`, model: x });
      expect((await alice.patch(id, 0, body)).status).toBe(200);
    }
    const pages = [await page(alice, "/"), await page(alice, "/shares"), await page(alice, "/sessions/xss0")];
    for (let i = 0; i < TOOL_XSS.length; i++) pages.push(await page(alice, `/sessions/xss${i}`));
    const searched = await eventually(
      () => page(alice, `/?q=needle1`),
      (t) => t.includes("<mark>"),
    );
    pages.push(searched, await page(alice, `/?cwd=${encodeURIComponent(`/w/${TOOL_XSS[2]}`)}`));
    for (const text of pages) {
      expect(text).not.toMatch(/<script>window|<img src=x|<svg onload|<iframe|<style>body|href="javascript:/i);
    }
    expect(searched).toContain("needle1");
  });
});
