/**
 * The owner's context is streamed a batch of entries at a time, and its bytes are exactly
 * those of the context rebuilt in memory and sent whole (`JSON.stringify`), for every fixture
 * session and for its default leaf and every leaf of its tree.
 */
import { readFileSync } from "node:fs";
import { buildSessionContext, completeLength, parseSession } from "@pisync/format";
import { openPair, type Pair } from "@pisync/testing";
import { inRepoCorpus, loadCorpus } from "@pisync/testing/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, makeApp, userToken } from "./harness.js";

const fixtures = loadCorpus(inRepoCorpus);

describe("the owner's streamed context", () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await openPair("embedded");
  });
  afterAll(() => pair.close());

  it.each(fixtures.map((f, i) => [f.name, f, i] as const))("%s: same bytes as the whole answer", async (_, f, i) => {
    const bytes = new Uint8Array(readFileSync(f.jsonl));
    const session = parseSession(bytes);
    const id = session.header?.id;
    if (!id) return; // no header: nothing can name the session
    const app = makeApp(pair.stores);
    const c = client(app, await userToken(pair.stores, `context-${i}`));
    expect((await c.patch(id, 0, bytes.subarray(0, completeLength(bytes)))).status).toBe(200);
    const leaves = [undefined, ...session.index.leafIds()];
    for (const leaf of leaves) {
      const r = await c.get(`/v1/sessions/${id}/context${leaf ? `?leaf=${encodeURIComponent(leaf)}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.headers.get("Content-Type")).toBe("application/json");
      const whole = { ...buildSessionContext(session, leaf), leafId: leaf ?? session.index.defaultLeafId };
      expect(await r.text(), `leaf ${leaf}`).toBe(JSON.stringify(whole));
    }
  });

  it("answers 404 before streaming for a missing entry or session, and another user's session", async () => {
    const app = makeApp(pair.stores);
    const owner = client(app, await userToken(pair.stores, "context-owner"));
    const other = client(app, await userToken(pair.stores, "context-other"));
    const header = JSON.stringify({ type: "session", version: 3, id: "ctx", timestamp: "2026-01-01T00:00:00.000Z" });
    expect((await owner.patch("ctx", 0, `${header}\n`)).status).toBe(200);
    expect((await owner.get("/v1/sessions/ctx/context?leaf=nope")).status).toBe(404);
    expect((await owner.get("/v1/sessions/missing/context")).status).toBe(404);
    const theirs = await other.get("/v1/sessions/ctx/context");
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toEqual(await (await owner.get("/v1/sessions/missing/context")).json());
    expect(await (await owner.get("/v1/sessions/ctx/context")).text()).toBe(
      JSON.stringify({ messages: [], thinkingLevel: "off", model: null, leafId: null }),
    );
  });
});
