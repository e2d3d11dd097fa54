/**
 * Who wrote what, over HTTP on both store pairs: each commit records the device (token) that
 * appended its bytes, in the same head write; `GET /v1/sessions/:id` names them by the owner's
 * own tokens (a revoked one is "removed device"), and another user's device names never appear.
 */
import { Tokens } from "@pisync/core";
import type { SessionMeta } from "@pisync/protocol";
import { describeOnEveryStore, entry, line, sessionHeader, userMessage } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { enc, client as httpClient, makeApp } from "./harness.js";

const message = (id: string, parentId: string | null, at: number) => line(entry(id, parentId, at, userMessage(id)));

describeOnEveryStore("writers", (pair) => {
  let app: ReturnType<typeof makeApp>;
  let tokens: Tokens;
  let laptop: ReturnType<typeof httpClient>;
  let desktop: ReturnType<typeof httpClient>;
  let bob: ReturnType<typeof httpClient>;
  let bobTokenId: string;
  let desktopId: string;

  beforeAll(async () => {
    app = makeApp(pair().stores);
    tokens = new Tokens(pair().stores.meta);
    laptop = httpClient(app, (await tokens.create("alice", "Laptop <b>")).token);
    const desktopToken = await tokens.create("alice", "Desktop");
    desktop = httpClient(app, desktopToken.token);
    desktopId = desktopToken.record.id;
    const bobToken = await tokens.create("bob", "Bob's secret box");
    bob = httpClient(app, bobToken.token);
    bobTokenId = bobToken.record.id;
  });

  const meta = async (c: ReturnType<typeof httpClient>, id: string) => {
    const res = await c.get(`/v1/sessions/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as SessionMeta;
  };

  it("records a run per device's stretch of bytes, joins a device's adjacent appends, ignores retries", async () => {
    const first = line(sessionHeader("w1")) + message("a1", null, 1);
    const fromDesktop = message("d1", "a1", 2) + message("d2", "d1", 3);
    const again = message("a2", "a1", 4);
    const more = message("a3", "a2", 5);
    expect((await laptop.put("w1", first)).status).toBe(200);
    expect((await desktop.patch("w1", enc(first).length, fromDesktop)).status).toBe(200);
    // A retry of the desktop's append (its answer lost): nothing new.
    expect((await desktop.patch("w1", enc(first).length, fromDesktop)).status).toBe(200);
    const at = enc(first + fromDesktop).length;
    expect((await laptop.patch("w1", at, again)).status).toBe(200);
    expect((await laptop.patch("w1", at + enc(again).length, more)).status).toBe(200);
    expect((await meta(laptop, "w1")).writers).toEqual([
      { offset: 0, device: "Laptop <b>" },
      { offset: enc(first).length, device: "Desktop" },
      { offset: at, device: "Laptop <b>" },
    ]);
  });

  it("a new generation starts its own runs", async () => {
    const text = line(sessionHeader("w2")) + message("a1", null, 1);
    expect((await laptop.put("w2", text)).status).toBe(200);
    expect((await desktop.patch("w2", enc(text).length, message("d1", "a1", 2))).status).toBe(200);
    expect((await meta(laptop, "w2")).writers).toHaveLength(2);
    expect((await desktop.put("w2", text)).status).toBe(200);
    expect((await meta(laptop, "w2")).writers).toEqual([{ offset: 0, device: "Desktop" }]);
  });

  it("a revoked token's runs say removed device", async () => {
    const other = await tokens.create("alice", "Old phone");
    const phone = httpClient(app, other.token);
    const text = line(sessionHeader("w3")) + message("a1", null, 1);
    expect((await phone.put("w3", text)).status).toBe(200);
    expect((await laptop.patch("w3", enc(text).length, message("a2", "a1", 2))).status).toBe(200);
    expect(await tokens.revoke("alice", other.record.id)).toBe(true);
    expect((await meta(laptop, "w3")).writers?.map((w) => w.device)).toEqual(["removed device", "Laptop <b>"]);
  });

  it("names devices by the owner's tokens only: another user's never appear", async () => {
    const text = line(sessionHeader("w4")) + message("b1", null, 1);
    expect((await bob.put("w4", text)).status).toBe(200);
    expect((await meta(bob, "w4")).writers).toEqual([{ offset: 0, device: "Bob's secret box" }]);
    // Alice has no session w4: bob's is missing to her, not shown.
    expect((await laptop.get("/v1/sessions/w4")).status).toBe(404);
    // A run naming bob's token in alice's session (as no request can write it): still not his name.
    const stores = pair().stores;
    const head = await stores.meta.getHead("alice", "w1");
    if (!head) throw new Error("no head");
    const writers = [...(head.current.writers ?? []), { offset: head.current.length - 1, device: bobTokenId }];
    await stores.meta.commit({
      head: { ...head, revision: head.revision + 1, current: { ...head.current, writers } },
      expectedRevision: head.revision,
    });
    const body = JSON.stringify(await meta(laptop, "w1"));
    expect(body).not.toContain("Bob's secret box");
    expect(body).toContain("removed device");
    expect(body).not.toContain(desktopId);
  });

  it("the library's tree labels tips with the owner's device names; another user gets 404", async () => {
    const text = line(sessionHeader("w6")) + message("a1", null, 1) + message("a2", "a1", 2);
    expect((await laptop.put("w6", text)).status).toBe(200);
    expect((await desktop.patch("w6", enc(text).length, message("d1", "a1", 3))).status).toBe(200);
    const res = await laptop.get("/sessions/w6/tree");
    expect(res.status).toBe(200);
    const tree = (await res.json()) as { ids: string[]; devices?: [number, string][] };
    const named = Object.fromEntries((tree.devices ?? []).map(([i, device]) => [tree.ids[i], device]));
    expect(named).toEqual({ a2: "Laptop <b>", d1: "Desktop" });
    expect((await bob.get("/sessions/w6/tree")).status).toBe(404);
    // One device wrote w4: no labels.
    const solo = (await (await bob.get("/sessions/w4/tree")).json()) as { devices?: unknown };
    expect(solo).not.toHaveProperty("devices");
  });

  it("a session with no runs kept (committed before them) answers without writers", async () => {
    const text = line(sessionHeader("w5")) + message("a1", null, 1);
    expect((await laptop.put("w5", text)).status).toBe(200);
    const stores = pair().stores;
    const head = await stores.meta.getHead("alice", "w5");
    if (!head) throw new Error("no head");
    const { writers: _, ...current } = head.current;
    await stores.meta.commit({
      head: { ...head, revision: head.revision + 1, current },
      expectedRevision: head.revision,
    });
    expect(await meta(laptop, "w5")).not.toHaveProperty("writers");
  });
});
