/**
 * What a share's owner is told of its reads, on both stores: one view per page load (a GET of
 * the page answered 200; not a HEAD, not an error, not the page's windows, tree or state), and
 * apart from views the downloads of its file (`/raw`) and context (`/context`). Both show in the
 * API's share list and on the library's shares page, to the owner only; nobody else can see
 * or change them.
 */
import { newShareKeys } from "@pisync/core";
import { line, openPair, type Pair, STORE_NAMES, sessionHeader, userLine } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, userToken } from "./harness.js";

describe.each(STORE_NAMES)("share views and downloads (%s)", (storeName) => {
  let pair: Pair;
  let app: ReturnType<typeof createApp>;
  let alice: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;

  beforeAll(async () => {
    pair = await openPair(storeName);
    const keys = newShareKeys();
    app = createApp({ stores: pair.stores, log: () => {}, shareKeys: async () => keys });
    alice = client(app, await userToken(pair.stores, "alice"));
    bob = client(app, await userToken(pair.stores, "bob"));
    const body = line(sessionHeader("counted")) + userLine("u1", null, 1, "hello");
    expect((await alice.patch("counted", 0, body)).status).toBe(200);
  });
  afterAll(async () => {
    await pair.close();
  });

  /** Alice's share of "counted" as her list shows it. */
  const listed = async (who = alice) => {
    const { shares } = (await (await who.get("/v1/shares")).json()) as {
      shares: Array<{ id: string; sessionId: string; views: number; downloads: number }>;
    };
    return shares.find((s) => s.sessionId === "counted");
  };

  it("counts a view per page GET answered 200 and a download per /raw or /context; nothing else counts", async () => {
    const made = await alice.post("/v1/sessions/counted/shares", {});
    expect(made.status).toBe(201);
    const path = new URL(((await made.json()) as { url: string }).url).pathname;
    const [id, kid, signature] = path.slice(3).split(".");

    for (let i = 0; i < 2; i++) expect((await app.request(path)).status).toBe(200);
    // Not views: HEADs, answers that fail, the page's own requests, a forged token.
    for (let i = 0; i < 3; i++) expect((await app.request(path, { method: "HEAD" })).status).toBe(200);
    expect((await app.request(`${path}?before=not-a-number`)).status).toBe(400);
    for (const sub of ["tree", "state", "entries"]) expect((await app.request(`${path}/${sub}`)).status).toBe(200);
    const forged = `/s/${id}.${kid}.${signature.replace(/^./, (c) => (c === "A" ? "B" : "A"))}`;
    expect((await app.request(forged)).status).toBe(404);
    expect((await app.request(`${forged}/raw`)).status).toBe(404);

    expect((await app.request(`${path}/raw`)).status).toBe(200);
    expect((await app.request(`${path}/raw`)).status).toBe(200);
    expect((await app.request(`${path}/context`)).status).toBe(200);
    expect((await app.request(`${path}/raw`, { method: "HEAD" })).status).toBe(200);

    expect(await listed()).toMatchObject({ views: 2, downloads: 3 });
    const page = await (await alice.get("/shares", { Accept: "text/html" })).text();
    expect(page).toContain('data-views="2"');
    expect(page).toContain('data-downloads="3"');
    expect(page).toContain("3 downloads");
  });

  it("another user neither sees the counts nor changes them", async () => {
    const before = await listed();
    expect(before).toBeDefined();
    expect(await listed(bob)).toBeUndefined();
    const bobs = await (await bob.get("/shares", { Accept: "text/html" })).text();
    expect(bobs).not.toContain(before?.id);
    expect((await app.request(`/v1/shares/${before?.id}`, { method: "DELETE", headers: bob.auth })).status).toBe(404);
    expect(await listed()).toMatchObject({ id: before?.id, views: before?.views, downloads: before?.downloads });
  });
});
