/**
 * Share links: signed, expiring, revocable; a pinned share shows only its path; credentials
 * are masked; every answer carries the security headers; tokens that are tampered, signed by
 * another key, expired or revoked are all refused.
 */
import { newShareKeys, type ShareKeys } from "@pisync/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, openPair, type Pair, userToken } from "./harness.js";

const line = (entry: Record<string, unknown>) => `${JSON.stringify(entry)}\n`;
const ts = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const GITHUB_TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;

function session(id: string) {
  // a1 → a2 → a3 (main), a1 → b2 (another branch)
  return (
    line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/home/dev/app" }) +
    line({
      type: "message",
      id: "a1",
      parentId: null,
      timestamp: ts(1),
      message: { role: "user", content: "root question", timestamp: 1 },
    }) +
    line({
      type: "message",
      id: "a2",
      parentId: "a1",
      timestamp: ts(2),
      message: {
        role: "assistant",
        content: [{ type: "text", text: `my token is ${GITHUB_TOKEN}` }],
        api: "x",
        provider: "anthropic",
        model: "claude",
        usage: {
          input: 1,
          output: 1,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 2,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: 2,
      },
    }) +
    line({
      type: "message",
      id: "b2",
      parentId: "a1",
      timestamp: ts(3),
      message: { role: "user", content: "secret branch", timestamp: 3 },
    }) +
    line({
      type: "message",
      id: "a3",
      parentId: "a2",
      timestamp: ts(4),
      message: { role: "user", content: "main tip", timestamp: 4 },
    })
  );
}

for (const name of ["embedded", "aws"] as const) {
  describe(`share links (${name})`, () => {
    let pair: Pair;
    let keys: ShareKeys;
    let now = Date.parse("2026-06-01T00:00:00.000Z");
    let app: ReturnType<typeof createApp>;
    let c: ReturnType<typeof client>;
    let sid = 0;

    beforeAll(async () => {
      pair = await openPair(name);
      keys = newShareKeys();
      app = createApp({ stores: pair.stores, shareKeys: async () => keys, clock: () => new Date(now), log: () => {} });
      c = client(app, await userToken(pair.stores, "owner"));
    });
    afterAll(() => pair.close());

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
        line({ type: "session", version: 3, id, timestamp: ts(0), cwd: `/srv/${GITHUB_TOKEN}` }) +
        line({
          type: "message",
          id: "t1",
          parentId: null,
          timestamp: ts(1),
          message: { role: "user", content: `use ${GITHUB_TOKEN} to push`, timestamp: 1 },
        }) +
        line({
          type: "message",
          id: "t2",
          parentId: "t1",
          timestamp: ts(2),
          message: { role: "user", content: `or ${npmToken} on this branch`, timestamp: 2 },
        }) +
        line({
          type: "message",
          id: "t3",
          parentId: "t1",
          timestamp: ts(3),
          message: { role: "user", content: "main tip", timestamp: 3 },
        }) +
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
      let body = line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/w" });
      for (let i = 0; i < 400; i++) {
        body += line({
          type: "message",
          id: `m${i}`,
          parentId: i ? `m${i - 1}` : null,
          timestamp: ts(1),
          message: { role: "user", content: `message number ${i}`, timestamp: i },
        });
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
        expect(await r.json()).toEqual({ error: "no such link" });
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
      const bob = client(app, await userToken(pair.stores, "bob"));
      expect((await bob.post(`/v1/sessions/${id}/shares`, {})).status).toBe(404);
      expect((await bob.delete(`/v1/shares/${share.id}`)).status).toBe(404);
      expect(((await (await bob.get("/v1/shares")).json()) as { shares: unknown[] }).shares).toEqual([]);
    });
  });
}
