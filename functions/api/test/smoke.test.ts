import { describeOnEveryStore } from "@pisync/testing";
import { expect, it } from "vitest";
import { client, enc, makeApp, userToken } from "./harness.js";

describeOnEveryStore("smoke", (pair) => {
  it("appends, reads raw, tree and context", async () => {
    const app = makeApp(pair().stores);
    const c = client(app, await userToken(pair().stores, "alice"));
    const header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n';
    const user =
      '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n';
    let r = await c.patch("s1", 0, header + user);
    expect(r.status, await r.clone().text()).toBe(200);
    expect(r.headers.get("Upload-Offset")).toBe(String(enc(header + user).length));
    r = await c.head("s1");
    expect(r.headers.get("Upload-Offset")).toBe(String(enc(header + user).length));
    r = await c.get("/v1/sessions/s1/raw");
    expect(await r.text()).toBe(header + user);
    r = await c.get("/v1/sessions/s1/context");
    expect(await r.json()).toMatchObject({ messages: [{ role: "user", content: "hi" }], leafId: "a1" });
    r = await c.get("/v1/sessions/s1/tree");
    expect(await r.json()).toMatchObject({ leafId: "a1", entries: [{ id: "a1", preview: "hi" }] });
    r = await c.get("/v1/sessions");
    expect(await r.json()).toMatchObject({ sessions: [{ id: "s1", entries: 1, firstMessage: "hi", cwd: "/w" }] });
  });
});
