/**
 * `GET /v1/whoami` on both store pairs: the account and device of the token in use, and the id
 * of the server's data, the same from every process over the same data and another over fresh
 * data; another user's token sees only its own account and device.
 */
import { Tokens } from "@pisync/core";
import type { Whoami } from "@pisync/protocol";
import { describeOnEveryStore, openPair } from "@pisync/testing";
import { expect, it } from "vitest";
import { client as httpClient, makeApp } from "./harness.js";

describeOnEveryStore("whoami", (pair, name) => {
  const whoami = async (app: ReturnType<typeof makeApp>, token: string) => {
    const res = await httpClient(app, token).get("/v1/whoami");
    expect(res.status).toBe(200);
    return (await res.json()) as Whoami;
  };

  it("names the account, the device and the server; each user sees only their own", async () => {
    const tokens = new Tokens(pair().stores.meta);
    const alice = await tokens.create("alice", "laptop");
    const bob = await tokens.create("bob", "desk");
    const app = makeApp(pair().stores);
    const a = await whoami(app, alice.token);
    expect(a).toEqual({ user: "alice", device: { id: alice.record.id, name: "laptop" }, server: { id: a.server.id } });
    expect(a.server.id).toMatch(/^srv_[A-Za-z0-9_-]{16}$/);
    const b = await whoami(app, bob.token);
    expect(b).toEqual({ user: "bob", device: { id: bob.record.id, name: "desk" }, server: a.server });
    expect((await app.request("/v1/whoami")).status).toBe(401);
  });

  it("keeps the server's id with its data: another process over the same data says the same, fresh data another", async () => {
    const tokens = new Tokens(pair().stores.meta);
    const { token } = await tokens.create("carol", "box");
    const first = await whoami(makeApp(pair().stores), token);
    expect((await whoami(makeApp(pair().stores), token)).server.id).toBe(first.server.id);
    const fresh = await openPair(name);
    try {
      const other = await new Tokens(fresh.stores.meta).create("carol", "box");
      expect((await whoami(makeApp(fresh.stores), other.token)).server.id).not.toBe(first.server.id);
    } finally {
      fresh.close();
    }
  });
});
