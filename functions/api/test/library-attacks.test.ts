/**
 * The library and sign-in under attack, on both stores: login CSRF (a sign-in link forced on a
 * victim's browser from another site), bots and scanners that open links, `next` values a
 * redirect cannot carry, text injected through the address, hostile timestamps that would
 * break the list's pages, oversized forms, and the live search read from another origin.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newShareKeys, SearchIndexer, storedLines } from "@pisync/core";
import { LoginLink } from "@pisync/protocol";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { describeOnEveryStore, entry, line, userMessage } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

const ORIGIN = "http://pisync.test";
const HTML = { Accept: "text/html" };

describeOnEveryStore("the library under attack", (pair) => {
  let dir: string;
  let index: SqliteSearchIndex;
  let indexer: SearchIndexer;
  let app: ReturnType<typeof createApp>;
  let aliceToken: string;
  let alice: ReturnType<typeof client>;
  const user = `alice-${Date.now()}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-attacks-"));
    const { stores } = pair();
    index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(stores));
    const keys = newShareKeys();
    indexer = new SearchIndexer(stores, index);
    app = createApp({
      stores,
      log: () => {},
      shareKeys: async () => keys,
      search: { index, indexer },
    });
    aliceToken = await userToken(stores, user);
    alice = client(app, aliceToken);
  });
  afterAll(async () => {
    await indexer.flush(); // the writes' indexing, before its file closes
    index.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}${path}`, init);

  async function loginLink(next?: string): Promise<string> {
    const res = await request("/v1/login-links", {
      method: "POST",
      headers: { Authorization: `Bearer ${aliceToken}`, "Content-Type": "application/json" },
      body: JSON.stringify(next === undefined ? {} : { next }),
    });
    expect(res.status).toBe(201);
    return LoginLink.parse(await res.json()).url;
  }

  const cookieOf = (res: Response) =>
    /^pisync_session=(pss_[A-Za-z0-9_-]+);/.exec(res.headers.get("Set-Cookie") ?? "")?.[1];

  it("a sign-in link opened from another site's page signs nothing in until the person confirms on this site", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const url = await loginLink("/shares");
      const opened = await app.request(url, { headers: { ...HTML, "Sec-Fetch-Site": site } });
      expect(opened.status, site).toBe(200);
      expect(opened.headers.get("Set-Cookie"), site).toBeNull();
      const page = await opened.text();
      expect(page).toContain(`<form method="post" action="${new URL(url).pathname}"`);
      expect(page).toContain("pisync open");
      expect(opened.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
      // The attacker's page cannot press the button for the victim: a post from elsewhere is refused.
      for (const origin of ["http://evil.example", "null"]) {
        const forced = await app.request(url, { method: "POST", headers: { Origin: origin } });
        expect(forced.status).toBe(403);
        expect((await forced.json()).code).toBe("csrf_rejected");
        expect(forced.headers.get("Set-Cookie")).toBeNull();
      }
      // The person presses it on this site's page: signed in, on to next, once.
      const confirmed = await app.request(url, { method: "POST", headers: { Origin: ORIGIN } });
      expect(confirmed.status).toBe(303);
      expect(confirmed.headers.get("Location")).toBe("/shares");
      expect(cookieOf(confirmed)).toBeTruthy();
      expect((await app.request(url, { method: "POST", headers: { Origin: ORIGIN } })).status).toBe(404);
    }
  });

  it("a next with characters a header cannot carry is sent on percent-encoded, not answered 500", async () => {
    const url = await loginLink("/?q=日本語 テスト#e-1");
    const res = await app.request(url, { headers: { "Sec-Fetch-Site": "none" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/?q=%E6%97%A5%E6%9C%AC%E8%AA%9E%20%E3%83%86%E3%82%B9%E3%83%88#e-1");
    expect(cookieOf(res)).toBeTruthy();
  });

  it("the shares page says nothing the address dictates", async () => {
    const spoof = "Your account is locked. Call +1 555 0100 to unlock it";
    const text = await (await alice.get(`/shares?revoked=${encodeURIComponent(spoof)}`, HTML)).text();
    expect(text).not.toContain("Call +1 555");
    expect(await (await alice.get("/shares?revoked=3", HTML)).text()).toContain("3 links revoked.");
  });

  it("a session id a header cannot carry answers 404, not 500", async () => {
    for (const id of ["a%0D%0ASet-Cookie:%20x=1", "%22%3B%20x", "日本"]) {
      const res = await alice.get(`/sessions/${id}/raw`);
      expect(res.status, id).toBe(404);
      expect(res.headers.get("Set-Cookie")).toBeNull();
    }
  });

  it("refuses a form larger than a library form, however it is sent", async () => {
    const big = `session=x&expires=7&mask=${"A".repeat(2 * 1024 * 1024)}`;
    const sized = await request("/shares", {
      method: "POST",
      headers: { ...alice.auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: big,
    });
    expect(sized.status).toBe(413);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++)
          controller.enqueue(new TextEncoder().encode(big.slice(i * 600_000, (i + 1) * 600_000)));
        controller.close();
      },
    });
    const streamed = await request("/shares", {
      method: "POST",
      headers: { ...alice.auth, "Content-Type": "application/x-www-form-urlencoded" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await streamed.json()).code).toBe("too_large");
  });

  it("a session with hostile timestamps cannot break the list's pages", async () => {
    const junk = `2026-01-01T00:00:00.000Z${"9".repeat(3000)}`;
    for (let i = 0; i < 52; i++) {
      const id = `ts${String(i).padStart(2, "0")}`;
      const header = { type: "session", version: 3, id, timestamp: junk, cwd: "/w/ts" };
      const body =
        line(header) +
        line({ ...entry(`${id}-u`, null, 1, userMessage(`hello ${id}`)), timestamp: i % 2 ? junk : "soon" });
      expect((await alice.patch(id, 0, body)).status).toBe(200);
    }
    const first = await (await alice.get("/?cwd=/w/ts", HTML)).text();
    const next = /<a rel="next" href="([^"]+)"/.exec(first)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toBeTruthy();
    const second = await alice.get(next as string, HTML);
    expect(second.status).toBe(200);
    expect(await second.text()).toContain('class="title"');
  });

  it("answers malformed input with a precise 4xx and a code, never a 500", async () => {
    expect(
      (
        await alice.patch(
          "probe",
          0,
          line({ type: "session", version: 3, id: "probe", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
        )
      ).status,
    ).toBe(200);
    const gets = [
      "/?cursor=garbage",
      "/?q=x&cursor=garbage",
      "/?from=2026-13-45",
      "/?to=yesterday",
      "/library/search?q=%22unclosed",
      "/library/search?q=x&cursor=garbage",
      `/library/search?q=${"a".repeat(1001)}`,
      "/sessions/probe/raw?generation=99999999",
      "/sessions/probe/raw?generation=-1",
      "/sessions/probe?leafId=%00",
    ];
    for (const path of gets) {
      const res = await alice.get(path);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      if (!path.startsWith("/?"))
        expect(Object.keys(await res.json()), path).toEqual(expect.arrayContaining(["error", "code"]));
    }
    const forms: Record<string, string>[] = [
      { session: "probe", expires: "0" },
      { session: "probe", expires: "999" },
      { session: "probe", expires: "7", leaf: "<script>" },
      { session: "../probe", expires: "7" },
      { expires: "7" },
    ];
    for (const form of forms) {
      const res = await request("/shares", {
        method: "POST",
        headers: { ...alice.auth, "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
      expect(res.status, JSON.stringify(form)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(form)).toBeLessThan(500);
      expect(Object.keys(await res.json())).toEqual(expect.arrayContaining(["error", "code"]));
    }
  });

  it("a session whose name and folder are very long is still stored and listed", async () => {
    const long = "n".repeat(150_000);
    const header = {
      type: "session",
      version: 3,
      id: "long",
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd: `/w/${long}`,
    };
    const body =
      line(header) +
      line({ ...entry("long-u", null, 1, userMessage("hi")), timestamp: "2026-01-01T00:00:01.000Z" }) +
      line({
        type: "session_info",
        id: "long-n",
        parentId: "long-u",
        timestamp: "2026-01-01T00:00:02.000Z",
        name: long,
      });
    expect((await alice.patch("long", 0, body)).status).toBe(200);
    const list = await alice.get("/?cwd=", HTML);
    expect(list.status).toBe(200);
    expect((await alice.get("/v1/sessions/long")).status).toBe(200);
  });

  it("echoes what the address says only escaped: the search box, filters, form values, errors", async () => {
    const x = '"><script>window.__xss=1</script><img src=x onerror=alert(1)>';
    const e = encodeURIComponent(x);
    const paths = [
      `/?q=${e}`,
      `/?q=${encodeURIComponent(`cwd:${x} "`)}`,
      `/?cwd=${e}&model=${e}`,
      `/?cwd=${e}&cursor=${e}`,
      `/shares?session=${e}&leaf=${e}&created=${e}`,
    ];
    for (const path of paths) {
      const text = await (await alice.get(path, HTML)).text();
      expect(text, path).not.toMatch(/<script>window|<img src=x/);
    }
  });

  it("the live search answers no other origin: no CORS headers, preflight included", async () => {
    const res = await alice.get("/library/search?q=hello", { Origin: "http://evil.example" });
    expect(res.status).toBe(200);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(res.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    const preflight = await request("/library/search?q=hello", {
      method: "OPTIONS",
      headers: { Origin: "http://evil.example", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });
});
