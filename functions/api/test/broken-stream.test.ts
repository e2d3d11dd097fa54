/**
 * A streamed answer that fails after its first bytes (the store fails mid-read) must reach a real
 * HTTP client as a failed transfer, never as a complete 200 whose JSON or JSONL is cut short:
 * the API's and the library's `/context`, a share's `/context` and `/raw`, over a socket.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { newShareKeys } from "@pisync/core";
import { entry, line, openPair, type Pair, sessionHeader, userMessage } from "@pisync/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, failing, userToken } from "./harness.js";

describe("a stream that fails mid-way, over HTTP", () => {
  let pair: Pair;
  let server: ReturnType<typeof serve>;
  let base: string;
  let token: string;
  let share: string;
  let broken = false;
  const id = "breaks";

  beforeAll(async () => {
    pair = await openPair("embedded");
    const keys = newShareKeys();
    const blobs = failing(pair.stores.blobs, "get", () => broken);
    const app = createApp({ stores: { ...pair.stores, blobs }, shareKeys: async () => keys, log: () => {} });
    token = await userToken(pair.stores, "breaker");
    const c = client(app, token);
    const text = line(sessionHeader(id)) + line(entry("a1", null, 1, userMessage("hello")));
    expect((await c.patch(id, 0, text)).status).toBe(200);
    const made = await c.post(`/v1/sessions/${id}/shares`, { maskSecrets: false });
    share = new URL(((await made.json()) as { url: string }).url).pathname;
    // The session's index is built (and kept) before the store starts failing.
    expect((await c.get(`/v1/sessions/${id}/tree`)).status).toBe(200);
    server = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    pair.close();
  });

  it("ends the connection with an error: the client never gets a whole body", async () => {
    const paths = [`/v1/sessions/${id}/context`, `/sessions/${id}/context`, `${share}/context`, `${share}/raw`];
    const get = (path: string) => fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    // Each answer whole once (what it reads before its first byte is then kept), then broken.
    for (const path of paths) expect((await (await get(path)).text()).length, path).toBeGreaterThan(20);
    broken = true;
    for (const path of paths) {
      const r = await get(path);
      // A failure before the first bytes left is an error status; after, a cut connection.
      if (r.status === 200) await expect(r.text(), path).rejects.toThrow(/terminated/);
      else expect(r.status, path).toBe(500);
    }
    broken = false;
    expect(JSON.parse(await (await get(paths[0])).text()).messages).toHaveLength(1);
  });
});
