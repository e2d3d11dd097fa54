/**
 * Preview images under load: kept by session version and mask (every link to a session shares
 * one image), drawn a few at a time off the event loop, and past the queue answered with the
 * session's last image or 503 with Retry-After; anonymous clients on many links leave /healthz
 * answering.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newShareKeys } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { describeOnEveryStore, line } from "@pisync/testing";
import { describe, expect, it } from "vitest";
import { createApp, startNodeServer } from "../src/index.js";
import type { PreviewCard } from "../src/preview/card.js";
import { client, userToken } from "./harness.js";

const ts = (s: number) => new Date(Date.UTC(2026, 0, 1, 9, 0, s)).toISOString();
const header = (id: string) => line({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/w/app" });
const said = (id: string, parentId: string | null, s: number, text: string) =>
  line({ type: "message", id, parentId, timestamp: ts(s), message: { role: "user", content: text, timestamp: s } });
/** A one-pixel stand-in for a PNG: these tests count and hold drawings, the real renderer has its own. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);

describeOnEveryStore("preview images under load", (pair) => {
  it("every link to one version of a session shares one image; its mask or a new version draws another", async () => {
    const cards: PreviewCard[] = [];
    const keys = newShareKeys();
    const app = createApp({
      stores: pair().stores,
      shareKeys: async () => keys,
      log: () => {},
      preview: async (card) => {
        cards.push(card);
        return PNG;
      },
    });
    const c = client(app, await userToken(pair().stores, `img-${Math.random().toString(36).slice(2, 8)}`));
    const body = header("s1") + said("u1", null, 1, "draw me once");
    expect((await c.patch("s1", 0, body)).status).toBe(200);
    const link = async (json: Record<string, unknown> = {}) => {
      const r = await c.post("/v1/sessions/s1/shares", json);
      return `${new URL(((await r.json()) as { url: string }).url).pathname}/preview.png`;
    };
    const links = await Promise.all(Array.from({ length: 17 }, () => link()));
    for (const path of links) expect((await app.request(path)).status).toBe(200);
    expect(cards).toHaveLength(1);
    // Unmasked shows other text: another image; so does the session's next version.
    expect((await app.request(await link({ maskSecrets: false }))).status).toBe(200);
    expect(cards).toHaveLength(2);
    expect((await c.patch("s1", new TextEncoder().encode(body).length, said("u2", "u1", 2, "and again"))).status).toBe(
      200,
    );
    expect((await app.request(links[0])).status).toBe(200);
    expect(cards).toHaveLength(3);
  });

  it("draws two at a time and queues sixteen; past them, the session's last image or 503 with Retry-After", async () => {
    const holds: Array<() => void> = [];
    let drawing = 0;
    let most = 0;
    const keys = newShareKeys();
    const app = createApp({
      stores: pair().stores,
      shareKeys: async () => keys,
      log: () => {},
      preview: async () => {
        most = Math.max(most, ++drawing);
        await new Promise<void>((resolve) => holds.push(resolve));
        drawing--;
        return PNG;
      },
    });
    const c = client(app, await userToken(pair().stores, `busy-${Math.random().toString(36).slice(2, 8)}`));
    const paths: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = `q${i}`;
      expect((await c.patch(id, 0, header(id) + said("u1", null, 1, `session ${i}`))).status).toBe(200);
      const r = await c.post(`/v1/sessions/${id}/shares`, {});
      paths.push(`${new URL(((await r.json()) as { url: string }).url).pathname}/preview.png`);
    }
    // The first session's image is drawn once, then its session grows: a new version to draw.
    const first = app.request(paths[0]);
    await until(() => holds.length === 1);
    holds.shift()?.();
    expect((await first).status).toBe(200);
    const grown = header("q0") + said("u1", null, 1, "session 0");
    expect((await c.patch("q0", new TextEncoder().encode(grown).length, said("u2", "u1", 2, "more"))).status).toBe(200);
    // Nineteen other images asked at once: two drawn, sixteen wait, one is turned away at once.
    const asked = paths.slice(1).map((path) => app.request(path));
    await until(() => holds.length === 2);
    const turnedAway = await Promise.race([
      ...asked,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("none was turned away")), 10_000)),
    ]);
    expect(turnedAway.status).toBe(503);
    expect(turnedAway.headers.get("Retry-After")).toBe("5");
    expect(await turnedAway.json()).toMatchObject({ code: "busy" });
    // The grown session's new image cannot be drawn now: its last one is served at once.
    const previous = await app.request(paths[0]);
    expect(previous.status).toBe(200);
    expect(new Uint8Array(await previous.arrayBuffer())).toEqual(PNG);
    const all = Promise.all(asked).then(() => true);
    while ((await Promise.race([all, tick()])) !== true) holds.shift()?.();
    expect((await Promise.all(asked)).map((r) => r.status).sort()).toEqual([...Array(18).fill(200), 503]);
    expect(most).toBe(2);
  });
});

/** A turn of the event loop, resolving to nothing. */
const tick = () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5));

/** Waits until `ready()` holds (ticks of 5 ms, 10 s at most). */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !ready(); i++) await tick();
  expect(ready()).toBe(true);
}

describe("preview images on the one-machine server", () => {
  it("six anonymous clients on seventeen links: images drawn on the share pool, the event loop never held long", {
    timeout: 120_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pisync-preview-load-"));
    try {
      const stores = embeddedStores(dataDir);
      const token = await userToken(stores, "unfurled");
      stores.close();
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, log: () => {} });
      try {
        const auth = { Authorization: `Bearer ${token}` };
        const links: string[] = [];
        for (let i = 0; i < 17; i++) {
          const id = `p${i}`;
          const text = header(id) + said("u1", null, 1, `What does the parser do with case ${i}?`);
          const r = await fetch(`${server.url}/v1/sessions/${id}`, {
            method: "PATCH",
            headers: { ...auth, "Upload-Offset": "0" },
            body: text,
          });
          expect(r.status).toBe(200);
          const shared = await fetch(`${server.url}/v1/sessions/${id}/shares`, {
            method: "POST",
            headers: { ...auth, "Content-Type": "application/json" },
            body: "{}",
          });
          links.push(
            `${((await shared.json()) as { url: string }).url.replace(/^https?:\/\/[^/]+/, server.url)}/preview.png`,
          );
        }
        // The longest gap between ticks of a 10 ms timer on the server's own event loop.
        let last = performance.now();
        let held = 0;
        const ticks = setInterval(() => {
          held = Math.max(held, performance.now() - last);
          last = performance.now();
        }, 10);
        const statuses = new Set<number>();
        const clientLoop = async (n: number) => {
          for (let i = 0; i < 6; i++) {
            const r = await fetch(links[(n * 3 + i) % links.length]);
            statuses.add(r.status);
            await r.arrayBuffer();
          }
        };
        await Promise.all(Array.from({ length: 6 }, (_, n) => clientLoop(n)));
        clearInterval(ticks);
        expect([...statuses].every((s) => s === 200 || s === 503)).toBe(true);
        expect(statuses.has(200)).toBe(true);
        // Drawn on the event loop, one image holds it 0.2–1.7 s (more on a busy machine); off it, the
        // target is under 300 ms: asserted with room for a busy test machine's scheduling.
        expect(held).toBeLessThan(1000);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
