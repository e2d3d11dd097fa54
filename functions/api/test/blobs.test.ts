/** Content-addressed blobs (oh-my-pi's images): checked by hash, one namespace per user. */
import { createHash } from "node:crypto";
import { describeOnEveryStore } from "@pisync/testing";
import { expect, it } from "vitest";
import { client, makeApp, userToken } from "./harness.js";

describeOnEveryStore("blobs", (pair) => {
  it("stores a blob under its hash, refuses a body with another hash, and keeps users apart", async () => {
    const app = makeApp(pair().stores);
    const auth = { Authorization: `Bearer ${await userToken(pair().stores, "alice")}` };
    const data = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 255]);
    const hash = createHash("sha256").update(data).digest("hex");
    const at = `/v1/blobs/${hash}`;
    expect((await app.request(at, { method: "HEAD", headers: auth })).status).toBe(404);
    const wrong = await app.request(`/v1/blobs/${"0".repeat(64)}`, { method: "PUT", headers: auth, body: data });
    expect(wrong.status).toBe(400);
    expect((await app.request("/v1/blobs/not-a-hash", { headers: auth })).status).toBe(400);
    expect((await app.request(at, { method: "PUT", headers: auth, body: data })).status).toBe(204);
    expect((await app.request(at, { method: "HEAD", headers: auth })).status).toBe(200);
    expect([...new Uint8Array(await (await app.request(at, { headers: auth })).arrayBuffer())]).toEqual([...data]);
    const bob = client(app, await userToken(pair().stores, "bob"));
    expect((await bob.get(at)).status).toBe(404);
  });
});
