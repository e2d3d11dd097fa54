/**
 * A session's delete removes the blobs (oh-my-pi's images) it named that no other session of the
 * user names, and only those: shared ones stay, as do those an unlisted head (cut list, archived
 * generation) names in its bytes, and another user's blob of the same hash.
 */
import { createHash } from "node:crypto";
import { describeOnEveryStore, entry, line, sessionHeader, userMessage } from "@pisync/testing";
import { expect, it } from "vitest";
import { client, makeApp, userToken } from "./harness.js";

const blob = (n: number) => {
  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, n]);
  return { bytes, hash: createHash("sha256").update(bytes).digest("hex") };
};
const naming = (id: string, hashes: string[]) =>
  line(sessionHeader(id)) +
  hashes
    .map((hash, i) =>
      line(entry(`e${i}`, i ? `e${i - 1}` : null, 1, userMessage([{ type: "image", data: `blob:sha256:${hash}` }]))),
    )
    .join("");

describeOnEveryStore("a session's delete and its blobs", (pair) => {
  it("removes only the blobs no other session of the user names, and counts them", async () => {
    const app = makeApp(pair().stores);
    const alice = client(app, await userToken(pair().stores, "alice"));
    const bob = client(app, await userToken(pair().stores, "bob"));
    const [only, shared, archived, unlisted] = [blob(1), blob(2), blob(3), blob(4)];
    for (const b of [only, shared, archived, unlisted]) {
      const put = await app.request(`/v1/blobs/${b.hash}`, { method: "PUT", headers: alice.auth, body: b.bytes });
      expect(put.status).toBe(204);
    }
    const bobs = await app.request(`/v1/blobs/${only.hash}`, { method: "PUT", headers: bob.auth, body: only.bytes });
    expect(bobs.status).toBe(204);
    expect((await bob.patch("bob-s", 0, naming("bob-s", [only.hash]))).status).toBeLessThan(300);

    const hashes = [only, shared, archived, unlisted].map((b) => b.hash);
    expect((await alice.patch("gone", 0, naming("gone", hashes))).status).toBeLessThan(300);
    expect((await alice.patch("other", 0, naming("other", [shared.hash]))).status).toBeLessThan(300);
    // An archived generation names a blob its current one does not: its bytes are read.
    expect((await alice.patch("rewritten", 0, naming("rewritten", [archived.hash]))).status).toBeLessThan(300);
    expect((await alice.put("rewritten", naming("rewritten", []))).status).toBeLessThan(300);
    // A list cut short (more names than a head keeps) does not prove a blob unused either.
    const many = Array.from({ length: 520 }, (_, i) => createHash("sha256").update(`x${i}`).digest("hex"));
    expect((await alice.patch("cut", 0, naming("cut", [...many, unlisted.hash]))).status).toBeLessThan(300);

    const deleted = await app.request("/v1/sessions/gone", {
      method: "DELETE",
      headers: { ...alice.auth, Prefer: "return=representation" },
    });
    expect(deleted.status).toBe(200);
    expect((await deleted.json()).blobs).toBe(1);
    const status = async (who: typeof alice, hash: string) =>
      (await app.request(`/v1/blobs/${hash}`, { method: "HEAD", headers: who.auth })).status;
    expect(await status(alice, only.hash)).toBe(404);
    expect(await status(alice, shared.hash)).toBe(200);
    expect(await status(alice, archived.hash)).toBe(200);
    expect(await status(alice, unlisted.hash)).toBe(200);
    expect(await status(bob, only.hash)).toBe(200);

    // The last session naming the shared blob goes: the blob goes with it.
    const second = await app.request("/v1/sessions/other", {
      method: "DELETE",
      headers: { ...alice.auth, Prefer: "return=representation" },
    });
    expect((await second.json()).blobs).toBe(1);
    expect(await status(alice, shared.hash)).toBe(404);
  });

  it("keeps a blob an append names while the delete runs, and an append after it is told the blob is missing", async () => {
    const stores = pair().stores;
    const token = await userToken(stores, "carol");
    const img = blob(7);
    let racing: (() => Promise<unknown>) | undefined;
    // The append lands after the delete chose the blob and just before it removes it.
    const blobs = {
      ...stores.blobs,
      put: stores.blobs.put.bind(stores.blobs),
      get: stores.blobs.get.bind(stores.blobs),
      list: stores.blobs.list.bind(stores.blobs),
      listObjects: stores.blobs.listObjects.bind(stores.blobs),
      uploadUrl: stores.blobs.uploadUrl.bind(stores.blobs),
      delete: async (keys: readonly string[]) => {
        const race = racing;
        if (race && keys.some((key) => key.endsWith(img.hash))) {
          racing = undefined;
          await race();
        }
        return stores.blobs.delete(keys);
      },
    };
    const app = makeApp({ ...stores, blobs });
    const carol = client(app, token);
    await app.request(`/v1/blobs/${img.hash}`, { method: "PUT", headers: carol.auth, body: img.bytes });
    expect((await carol.patch("first", 0, naming("first", [img.hash]))).status).toBeLessThan(300);
    racing = async () => {
      const answer = await carol.patch("racer", 0, naming("racer", [img.hash]));
      expect(answer.status).toBeLessThan(300);
      expect((await answer.json()).missingBlobs).toBeUndefined(); // it was still there
    };
    const deleted = await app.request("/v1/sessions/first", {
      method: "DELETE",
      headers: { ...carol.auth, Prefer: "return=representation" },
    });
    expect(racing).toBeUndefined();
    expect((await deleted.json()).blobs).toBe(0);
    expect((await app.request(`/v1/blobs/${img.hash}`, { method: "HEAD", headers: carol.auth })).status).toBe(200);

    // The last session naming it goes; an append naming it afterwards is told to send it again.
    await app.request("/v1/sessions/racer", { method: "DELETE", headers: carol.auth });
    expect((await app.request(`/v1/blobs/${img.hash}`, { method: "HEAD", headers: carol.auth })).status).toBe(404);
    const late = await carol.patch("late", 0, naming("late", [img.hash]));
    expect((await late.json()).missingBlobs).toEqual([img.hash]);
  });
});
