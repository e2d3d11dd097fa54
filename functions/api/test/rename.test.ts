/** `PUT /v1/sessions/:id/title`: a rename over HTTP, on both store pairs; another user's token sees nothing. */
import { randomUUID } from "node:crypto";
import { describeOnEveryStore, line, sessionHeader, userLine } from "@pisync/testing";
import { expect, it } from "vitest";
import { client, makeApp, userToken } from "./harness.js";

/** A title slot as oh-my-pi writes it: 256 bytes with its newline. */
function slot(title: string, updatedAt = "2026-12-01T10:00:00.000Z"): string {
  const fields = { type: "title", v: 1, title, source: "user", updatedAt };
  const bare = JSON.stringify({ ...fields, pad: "" });
  return `${JSON.stringify({ ...fields, pad: " ".repeat(255 - Buffer.byteLength(bare)) })}\n`;
}

describeOnEveryStore("rename over HTTP", (pair) => {
  it("replaces the title slot in place; the bytes, the title and /raw's ETag follow; other users see nothing", async () => {
    const app = makeApp(pair().stores);
    const alice = client(app, await userToken(pair().stores, "alice"));
    const id = randomUUID();
    const rest = line(sessionHeader(id)) + userLine("a1", null, 1, "hello");
    expect((await alice.patch(id, 0, slot("") + rest)).status).toBe(200);
    const etag = (await alice.get(`/v1/sessions/${id}/raw`)).headers.get("ETag");
    const put = (who: typeof alice, body: string, headers: Record<string, string> = {}) =>
      app.request(`/v1/sessions/${id}/title`, { method: "PUT", headers: { ...who.auth, ...headers }, body });

    const bob = client(app, await userToken(pair().stores, "bob"));
    const intruder = await put(bob, slot("Bob was here"));
    expect(intruder.status).toBe(404);
    expect(await intruder.json()).toEqual({ error: "no such session", code: "not_found" });

    const renamed = await put(alice, slot("Hello there", "2026-12-01T10:01:00.000Z"), { "If-Match": '"1"' });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toEqual({
      offset: 256 + rest.length,
      generation: 1,
      retry: false,
      title: "Hello there",
    });
    const raw = await alice.get(`/v1/sessions/${id}/raw`);
    expect(await raw.text()).toBe(slot("Hello there", "2026-12-01T10:01:00.000Z") + rest);
    expect(raw.headers.get("ETag")).not.toBe(etag);
    const meta = (await (await alice.get(`/v1/sessions/${id}`)).json()) as { name?: string; generation: number };
    expect(meta).toMatchObject({ name: "Hello there", generation: 1 });

    const notSlot = await put(alice, line(sessionHeader(id)));
    expect(notSlot.status).toBe(400);
    expect(await notSlot.json()).toMatchObject({ code: "not_a_title_slot" });
    const stale = await put(alice, slot("x"), { "If-Match": '"2"' });
    expect(stale.status).toBe(412);
    // A session without a title slot has nothing to rename: a rewrite is a new generation.
    const plain = randomUUID();
    expect((await alice.patch(plain, 0, line(sessionHeader(plain)))).status).toBe(200);
    const mismatch = await app.request(`/v1/sessions/${plain}/title`, {
      method: "PUT",
      headers: alice.auth,
      body: slot("x"),
    });
    expect(mismatch.status).toBe(409);
    expect(await mismatch.json()).toMatchObject({ code: "title_slot_mismatch" });
  });
});
