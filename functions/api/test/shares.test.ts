/**
 * Share links: signed, expiring, revocable; a pinned share shows only its path; credentials
 * are masked; every answer carries the security headers; tokens that are tampered, signed by
 * another key, expired or revoked are all refused.
 */
import { newShareKeys, type ShareKeys } from "@pisync/core";
import {
  assistantMessage,
  describeOnEveryStore,
  entry,
  line,
  sessionHeader,
  ts,
  usage,
  userLine,
  userMessage,
} from "@pisync/testing";
import type { CompactTree } from "@pisync/viewer";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const GITHUB_TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;

function session(id: string) {
  // a1 → a2 → a3 (main), a1 → b2 (another branch)
  return (
    line(sessionHeader(id)) +
    userLine("a1", null, 1, "root question") +
    line(entry("a2", "a1", 2, assistantMessage(`my token is ${GITHUB_TOKEN}`, { timestamp: 2 }))) +
    userLine("b2", "a1", 3, "secret branch") +
    userLine("a3", "a2", 4, "main tip")
  );
}

describeOnEveryStore("share links", (pair, name) => {
  let keys: ShareKeys;
  let now = Date.parse("2026-06-01T00:00:00.000Z");
  let app: ReturnType<typeof createApp>;
  let c: ReturnType<typeof client>;
  let sid = 0;

  beforeAll(async () => {
    keys = newShareKeys();
    app = createApp({ stores: pair().stores, shareKeys: async () => keys, clock: () => new Date(now), log: () => {} });
    c = client(app, await userToken(pair().stores, "owner"));
  });

  async function shared(body: Record<string, unknown> = {}) {
    const id = `share-${name}-${++sid}`;
    expect((await c.patch(id, 0, session(id))).status).toBe(200);
    const r = await c.post(`/v1/sessions/${id}/shares`, body);
    expect(r.status, await r.clone().text()).toBe(201);
    const share = (await r.json()) as { id: string; url: string; expiresAt: string };
    return { id, share, path: new URL(share.url).pathname };
  }

  it("a whole share shows the default branch and lists the others; downloads are the whole session", async () => {
    const { path } = await shared();
    const page = await app.request(path);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("main tip");
    expect(html).toContain("root question");
    expect(html).not.toContain('id="e-b2"'); // not on the default path…
    expect(html).toContain("2 branches"); // …but listed in the switcher
    const other = await app.request(`${path}?leaf=b2`);
    expect(await other.text()).toContain('id="e-b2"');
    const raw = await (await app.request(`${path}/raw`)).text();
    expect(raw.split("\n").filter(Boolean)).toHaveLength(5);
  });

  it("a pinned share reveals nothing outside its path", async () => {
    const { path } = await shared({ leafId: "a2" });
    const html = await (await app.request(path)).text();
    expect(html).toContain("root question");
    expect(html).not.toContain("main tip");
    expect(html).not.toContain("secret branch");
    expect((await app.request(`${path}?leaf=b2`)).status).toBe(404);
    expect((await app.request(`${path}/context?leaf=a3`)).status).toBe(404);
    const raw = await (await app.request(`${path}/raw`)).text();
    const lines = raw
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual([expect.any(String), "a1", "a2"]);
    expect(lines[0].type).toBe("session");
    const context = (await (await app.request(`${path}/context`)).json()) as { messages: unknown[] };
    expect(context.messages).toHaveLength(2);
  });

  it("masks credentials by default in the page and both downloads; the backup is untouched", async () => {
    const { id, path } = await shared();
    const html = await (await app.request(path)).text();
    expect(html).not.toContain(GITHUB_TOKEN);
    expect(html).toContain("1 credential masked");
    expect(await (await app.request(`${path}/raw`)).text()).not.toContain(GITHUB_TOKEN);
    expect(await (await app.request(`${path}/context`)).text()).not.toContain(GITHUB_TOKEN);
    expect(await (await c.get(`/v1/sessions/${id}/raw`)).text()).toContain(GITHUB_TOKEN);
    const open = await c.post(`/v1/sessions/${id}/shares`, { maskSecrets: false });
    const openPath = new URL(((await open.json()) as { url: string }).url).pathname;
    expect(await (await app.request(openPath)).text()).toContain(GITHUB_TOKEN);
  });

  it("masks the title, the folder, branch previews and labels too", async () => {
    const id = `share-${name}-titled`;
    const npmToken = `npm_${"a1B2c3D4e5".repeat(3)}f6G7h8`;
    const body =
      line(sessionHeader(id, `/srv/${GITHUB_TOKEN}`)) +
      userLine("t1", null, 1, `use ${GITHUB_TOKEN} to push`) +
      userLine("t2", "t1", 2, `or ${npmToken} on this branch`) +
      userLine("t3", "t1", 3, "main tip") +
      line({ type: "label", id: "l1", parentId: "t3", timestamp: ts(4), targetId: "t1", label: `key ${npmToken}` });
    expect((await c.patch(id, 0, body)).status).toBe(200);
    const created = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { url: string };
    const html = await (await app.request(new URL(created.url).pathname)).text();
    expect(html).toContain("main tip");
    expect(html).toContain("[masked: github-token]");
    expect(html).toContain("key [masked: npm-token]");
    expect(html).not.toContain(GITHUB_TOKEN);
    expect(html).not.toContain(npmToken);
  });

  it("shows the latest entries of a long path first, and earlier ones on demand", async () => {
    const id = `share-${name}-long`;
    let body = line(sessionHeader(id, "/w"));
    for (let i = 0; i < 400; i++) {
      body += line(entry(`m${i}`, i ? `m${i - 1}` : null, 1, userMessage(`message number ${i}`, i)));
    }
    expect((await c.patch(id, 0, body)).status).toBe(200);
    const created = await c.post(`/v1/sessions/${id}/shares`, {});
    const path = new URL(((await created.json()) as { url: string }).url).pathname;
    const latest = await (await app.request(path)).text();
    expect(latest).toContain('id="e-m399"');
    expect(latest).not.toContain('id="e-m249"');
    expect(latest).toContain("Show 250 earlier entries");
    const earlier = await (await app.request(`${path}?before=250`)).text();
    expect(earlier).toContain('id="e-m249"');
    expect(earlier).toContain('id="e-m100"');
    expect(earlier).not.toContain('id="e-m250"');
    expect(earlier).toContain("Show 100 earlier entries");
  });

  it("sends the security headers on every answer", async () => {
    const { path } = await shared();
    for (const p of [path, `${path}/raw`, `${path}/context`, "/s/assets/app.js", "/s/nope.k1.x"]) {
      const r = await app.request(p);
      expect(r.headers.get("Content-Security-Policy"), p).toContain("script-src 'self'");
      expect(r.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
      expect(r.headers.get("Referrer-Policy")).toBe("no-referrer");
      expect(r.headers.get("X-Robots-Tag")).toContain("noindex");
      expect(r.headers.get("X-Content-Type-Options")).toBe("nosniff");
    }
  });

  it("refuses tampered tokens (404), and expired or revoked ones (410), revealing nothing", async () => {
    const { share, path } = await shared({ expiresIn: 3600 });
    const token = path.slice(3);
    const [id, kid, sig] = token.split(".");
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const other = await shared();
    const [otherId, , otherSig] = other.path.slice(3).split(".");
    const forged = [
      `${flip(id, 3)}.${kid}.${sig}`,
      `${id}.${kid}.${flip(sig, 10)}`,
      `${id}.${kid}.${otherSig}`, // swapped signatures
      `${otherId}.${kid}.${sig}`,
      `${id}.k9.${sig}`, // unknown key id
      `${id}.${kid}`,
      "garbage",
    ];
    for (const t of forged) {
      const r = await app.request(`/s/${t}`);
      expect(r.status, t).toBe(404);
      expect(await r.json()).toEqual({ error: "no such link", code: "not_found" });
    }
    // Signed with another server's key.
    const elsewhere = newShareKeys();
    const { createHmac } = await import("node:crypto");
    const foreign = `${id}.k1.${createHmac("sha256", elsewhere.keys.k1).update(`${id}.k1`).digest("base64url")}`;
    expect((await app.request(`/s/${foreign}`)).status).toBe(404);

    expect((await app.request(path)).status).toBe(200);
    now += 3601 * 1000;
    const expired = await app.request(path);
    expect(expired.status).toBe(410);
    now -= 3601 * 1000;

    const revoke = await c.delete(`/v1/shares/${share.id}`);
    expect(revoke.status).toBe(204);
    expect((await app.request(path)).status).toBe(410);
    expect((await app.request(`${path}/raw`)).status).toBe(410);
    const list = (await (await c.get("/v1/shares")).json()) as { shares: { id: string; status: string }[] };
    expect(list.shares.find((s) => s.id === share.id)?.status).toBe("revoked");
  });

  it("keys rotate: links signed by an older key keep working while it is kept", async () => {
    const { path } = await shared();
    const before = keys;
    keys = { current: "k2", keys: { ...before.keys, k2: newShareKeys().keys.k1 } };
    expect((await app.request(path)).status).toBe(200);
    const fresh = await shared();
    expect(fresh.path).toContain(".k2.");
    keys = before;
  });

  it("validates requests, and nobody else can share or revoke my sessions", async () => {
    const { id, share } = await shared();
    expect((await c.post(`/v1/sessions/${id}/shares`, { expiresIn: 0 })).status).toBe(400);
    expect((await c.post(`/v1/sessions/${id}/shares`, { expiresIn: 91 * 86400 })).status).toBe(400);
    expect((await c.post(`/v1/sessions/${id}/shares`, { leafId: "nope" })).status).toBe(404);
    const bob = client(app, await userToken(pair().stores, "bob"));
    expect((await bob.post(`/v1/sessions/${id}/shares`, {})).status).toBe(404);
    expect((await bob.delete(`/v1/shares/${share.id}`)).status).toBe(404);
    expect(((await (await bob.get("/v1/shares")).json()) as { shares: unknown[] }).shares).toEqual([]);
  });

  it("deleting a session kills its links for good: revoked in the same commit, and a re-upload revives none", async () => {
    const { id, share, path } = await shared();
    const pinned = await c.post(`/v1/sessions/${id}/shares`, { leafId: "a2" });
    const pinnedPath = new URL(((await pinned.json()) as { url: string }).url).pathname;
    expect((await app.request(path)).status).toBe(200);
    expect((await c.delete(`/v1/sessions/${id}`)).status).toBe(204);
    for (const p of [path, `${path}/raw`, `${path}/context`, `${path}/state`, pinnedPath]) {
      expect((await app.request(p)).status, p).toBe(410);
    }
    const listed = (await (await c.get("/v1/shares")).json()) as { shares: { id: string; status: string }[] };
    expect(listed.shares.find((s) => s.id === share.id)?.status).toBe("revoked");
    // The CLI answers a 404 by sending the whole file again, with lines written since.
    now += 60_000;
    expect((await c.patch(id, 0, `${session(id)}${userLine("z9", "a3", 9, "written after the delete")}`)).status).toBe(
      200,
    );
    for (const p of [path, `${path}/raw`, `${path}/context`, `${path}/state`, pinnedPath]) {
      const r = await app.request(p);
      expect(r.status, p).toBe(410);
      expect(await r.text()).not.toContain("written after the delete");
    }
    // Even a share record that lost its revocation stays bound to the session it was made of.
    const record = await pair().stores.meta.getShare(share.id);
    await pair().stores.meta.putShare({ ...(record as NonNullable<typeof record>), revokedAt: undefined });
    expect((await app.request(path)).status).toBe(410);
    // A share of the new session works.
    const fresh = await c.post(`/v1/sessions/${id}/shares`, {});
    const freshPath = new URL(((await fresh.json()) as { url: string }).url).pathname;
    expect(await (await app.request(freshPath)).text()).toContain("written after the delete");
    now -= 60_000;
  });

  it("a pinned share of branch A shows no name, label, text, total or time of branch B", async () => {
    const id = `share-${name}-pinned-facts`;
    const assistant = (entryId: string, parentId: string, text: string, tokens: number, cost: number, at: number) =>
      line(entry(entryId, parentId, at, assistantMessage(text, { timestamp: at, usage: usage(tokens, cost, 0) })));
    const body =
      line(sessionHeader(id, "/w")) +
      userLine("r1", null, 1, "shared root") +
      assistant("a1", "r1", "answer on branch A", 111, 0.5, 2) +
      line({ type: "session_info", id: "n1", parentId: "a1", timestamp: ts(3), name: "name of branch A" }) +
      assistant("b1", "r1", "bravo-only text", 99_999, 7.25, 40) +
      line({ type: "session_info", id: "n2", parentId: "b1", timestamp: ts(41), name: "bravo-only name" }) +
      line({ type: "label", id: "l2", parentId: "n2", timestamp: ts(42), targetId: "r1", label: "bravo-only label" });
    expect((await c.patch(id, 0, body)).status).toBe(200);
    const created = await c.post(`/v1/sessions/${id}/shares`, { leafId: "n1" });
    const path = new URL(((await created.json()) as { url: string }).url).pathname;
    const html = await (await app.request(path)).text();
    expect(html).toContain("name of branch A");
    expect(html).toContain("answer on branch A");
    expect(html).toContain("111 tokens");
    expect(html).toContain("$0.5000");
    // The time of the branch's own last entry (never the backup's), with its zone.
    expect(html).toContain('last entry <time datetime="2026-01-01T00:00:03.000Z">2026-01-01 00:00 UTC</time>');
    for (const foreign of ["bravo-only", "99,999", "100,110", "7.25", "7.75", "00:00:4"])
      expect(html).not.toContain(foreign);
    const state = (await (await app.request(`${path}/state`)).json()) as { leafId: string; bytes: number };
    expect(state.leafId).toBe("n1");
    const raw = await (await app.request(`${path}/raw`)).text();
    expect(raw).not.toContain("bravo-only");
    const entryBytes = raw.split("\n").slice(1).join("\n").length;
    expect(state.bytes).toBe(entryBytes);
    const whole = (await (await c.get(`/v1/sessions/${id}`)).json()) as { bytes: number };
    expect(state.bytes).toBeLessThan(whole.bytes);
    expect(await (await app.request(`${path}/context`)).text()).not.toContain("bravo-only");
    expect(await (await app.request(`${path}/entries`)).text()).not.toContain("bravo-only");
  });

  it("key ids that are Object.prototype names are unknown links (404), never a 500", async () => {
    const { path } = await shared();
    const [id, , sig] = path.slice(3).split(".");
    for (const kid of ["constructor", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf"]) {
      const r = await app.request(`/s/${id}.${kid}.${sig}`);
      expect(r.status, kid).toBe(404);
      expect(await r.json()).toEqual({ error: "no such link", code: "not_found" });
    }
  });

  it("logs never carry a share token, whatever fails", async () => {
    const lines: string[] = [];
    const { stores } = pair();
    const failingMeta = Object.create(stores.meta) as typeof stores.meta;
    failingMeta.getHead = () => Promise.reject(new Error("the table is down"));
    const broken = createApp({
      stores: { ...stores, meta: failingMeta },
      shareKeys: async () => keys,
      clock: () => new Date(now),
      log: (l) => lines.push(l),
    });
    const { path } = await shared();
    const token = path.slice(3);
    for (const p of [path, `${path}/raw`, `${path}/context`, `${path}/state`, `${path}/entries`]) {
      expect((await broken.request(p)).status, p).toBe(500);
    }
    expect(lines.length).toBe(5);
    for (const l of lines) {
      expect(l).toContain("the table is down");
      expect(l).not.toContain(token);
      expect(l).not.toContain(token.split(".")[2]);
    }
  });

  it("browsers get a small HTML page for missing and dead links and the sign-in hint at the server root; API clients keep JSON", async () => {
    const html = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    const { share, path } = await shared();
    const missing = await app.request("/s/garbage", { headers: html });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("Content-Type")).toContain("text/html");
    expect(missing.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(await missing.text()).toContain('<link rel="stylesheet" href="/s/assets/style.css">');
    expect((await c.delete(`/v1/shares/${share.id}`)).status).toBe(204);
    const revoked = await app.request(path, { headers: html });
    expect(revoked.status).toBe(410);
    expect(await revoked.text()).toContain("this link has been revoked");
    // The root is the library: signed out, a browser gets its sign-in hint.
    const root = await app.request("/", { headers: html });
    expect(root.status).toBe(401);
    expect(root.headers.get("Content-Type")).toContain("text/html");
    expect(root.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(await root.text()).toContain("<code>pisync open</code>");
    const nowhere = await app.request("/nowhere", { headers: html });
    expect(nowhere.status).toBe(404);
    expect(nowhere.headers.get("Content-Type")).toContain("text/html");
    // API clients: JSON, as before.
    expect(await (await app.request("/s/garbage")).json()).toEqual({ error: "no such link", code: "not_found" });
    expect(
      (await app.request(path, { headers: { Accept: "application/json" } })).headers.get("Content-Type"),
    ).toContain("application/json");
    expect((await app.request("/")).status).toBe(401);
    expect(await (await app.request("/")).json()).toMatchObject({ code: "unauthorized" });
  });

  it("the tree of a whole share: compact, masked, and only through a valid whole-share link", async () => {
    const { path } = await shared();
    const r = await app.request(`${path}/tree`);
    expect(r.status).toBe(200);
    expect(r.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const tree = (await r.json()) as CompactTree;
    expect(tree.ids).toEqual(["a1", "a2", "b2", "a3"]);
    expect(tree.parents).toEqual([-1, 0, 0, 1]);
    expect(tree.kinds).toBe("uauu");
    expect(tree.previews[2]).toBe("secret branch");
    expect(tree.previews[1]).toContain("[masked: github-token]");
    expect(JSON.stringify(tree)).not.toContain(GITHUB_TOKEN);
    expect(tree.times[0]).toBe(Date.parse(ts(1)) / 1000);
    expect(tree.ids[tree.leaf]).toBe("a3");
    // The leaf asked for is the one marked; an unknown one is a missing entry.
    expect(((await (await app.request(`${path}/tree?leaf=b2`)).json()) as { leaf: number }).leaf).toBe(2);
    expect((await app.request(`${path}/tree?leaf=nope`)).status).toBe(404);
    // A pinned share has no tree (it reveals nothing outside its path); a tampered link none either.
    const pinned = await shared({ leafId: "a2" });
    expect((await app.request(`${pinned.path}/tree`)).status).toBe(404);
    const [id, kid, sig] = path.slice(3).split(".");
    expect((await app.request(`/s/${id}.${kid}.${sig.slice(0, -2)}xx/tree`)).status).toBe(404);
  });

  it("another user's session is not reachable through a link to mine (tree, entries, page: 404)", async () => {
    const other = client(app, await userToken(pair().stores, "someone-else"));
    const theirs = `share-${name}-theirs`;
    expect((await other.patch(theirs, 0, session(theirs))).status).toBe(200);
    const { path } = await shared();
    // My link names my session only: asking it for entries of another session finds nothing of theirs.
    for (const p of [`${path}/tree?leaf=${theirs}`, `${path}?leaf=${theirs}`, `${path}/entries?leaf=${theirs}`]) {
      expect((await app.request(p)).status, p).toBe(404);
    }
  });

  it("pi's leafId and targetId; windows before and after; an empty branch says why", async () => {
    const id = `share-${name}-windows`;
    let body = line(sessionHeader(id, "/w"));
    for (let i = 0; i < 400; i++) body += userLine(`w${i}`, i ? `w${i - 1}` : null, 1, `window entry ${i}`);
    expect((await c.patch(id, 0, body)).status).toBe(200);
    const created = await c.post(`/v1/sessions/${id}/shares`, {});
    const path = new URL(((await created.json()) as { url: string }).url).pathname;
    const target = await (await app.request(`${path}?leafId=w399&targetId=w120`)).text();
    expect(target).toContain('id="e-w120"');
    expect(target).toContain('data-before="70"');
    expect(target).toContain("Show 70 earlier entries");
    expect(target).toContain("Show 180 later entries");
    const later = await (await app.request(`${path}?leaf=w399&from=220`)).text();
    expect(later).toContain('id="e-w220"');
    expect(later).toContain('id="e-w369"');
    expect(later).not.toContain('id="e-w370"');
    expect(later).toContain("Show 30 later entries");
    const fragment = await (await app.request(`${path}/entries?leaf=w399&before=70`)).text();
    expect(fragment).toContain('id="e-w0"');
    expect(fragment).toContain('id="e-w69"');
    expect(fragment).not.toContain('id="e-w70"');
    expect((await app.request(`${path}?targetId=nope`)).status).toBe(200);
    expect((await app.request(`${path}?before=x`)).status).toBe(400);

    // No entry with an id: no leaf, an empty branch (a trailing value without an id is no leaf:
    // docs/format.md; pi would take it and show nothing).
    const emptyId = `share-${name}-empty`;
    const empty = `${line(sessionHeader(emptyId, "/w"))}{}\n`;
    expect((await c.patch(emptyId, 0, empty)).status).toBe(200);
    const made = await c.post(`/v1/sessions/${emptyId}/shares`, {});
    const html = await (await app.request(new URL(((await made.json()) as { url: string }).url).pathname)).text();
    expect(html).toContain("nothing to show on it");
    const trailingId = `share-${name}-trailing`;
    const trailing = `${line(sessionHeader(trailingId, "/w"))}${userLine("e1", null, 1, "hello")}{}\n`;
    expect((await c.patch(trailingId, 0, trailing)).status).toBe(200);
    const shared = await c.post(`/v1/sessions/${trailingId}/shares`, {});
    const page = await (await app.request(new URL(((await shared.json()) as { url: string }).url).pathname)).text();
    expect(page).toContain('id="e-e1"');
    expect(page).not.toContain("nothing to show on it");
  });

  it("a pinned share counts pi 1.x usage entries in its totals and marks a context edit on its target", async () => {
    const id = `share-${name}-usage`;
    const body =
      line(sessionHeader(id, "/w")) +
      userLine("q1", null, 1, "first question") +
      line({
        type: "usage",
        id: "us1",
        parentId: "q1",
        timestamp: ts(2),
        kind: "cache_warm",
        provider: "p",
        model: "m",
        usage: usage(400, 0.25, 0),
      }) +
      line({ type: "context_edit", id: "ce1", parentId: "us1", timestamp: ts(3), targetId: "q1", replacement: null });
    expect((await c.patch(id, 0, body)).status).toBe(200);
    const created = await c.post(`/v1/sessions/${id}/shares`, { leafId: "ce1" });
    const html = await (await app.request(new URL(((await created.json()) as { url: string }).url).pathname)).text();
    expect(html).toContain("400 tokens · $0.2500");
    expect(html).toContain('<a class="edited" href="#e-ce1">edited later</a>');
    expect(html).toContain("removed from what the model sees");
  });

  it("a huge message is shown as escaped preformatted text, cut to what a page can hold", async () => {
    const id = `share-${name}-huge`;
    const hostile = `${"*a".repeat(120_000)}<script>x</script>`;
    const body =
      line(sessionHeader(id, "/w")) +
      userLine("h1", null, 1, hostile) +
      userLine("h2", "h1", 2, `${">".repeat(20_000)} deep`);
    expect((await c.patch(id, 0, body)).status).toBe(200);
    const created = await c.post(`/v1/sessions/${id}/shares`, {});
    const html = await (await app.request(new URL(((await created.json()) as { url: string }).url).pathname)).text();
    expect(html).toContain('<pre class="plain">*a*a*a');
    expect(html).not.toContain("<em>a");
    expect(html).not.toContain("<script>x");
    expect(html).toContain("deep");
  });
});
