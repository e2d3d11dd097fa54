/**
 * Every fixture session, appended over HTTP in random line-boundary chunks (some gzip, some
 * retried as they were, some retried with other chunking), comes back byte for byte, and
 * the context of every leaf pi answered for is pi's answer — from the owner's route and from
 * a share link's (streamed a batch of entries at a time). On both store pairs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { newShareKeys } from "@pisync/core";
import { completeLength, parseSession, pathTo, pathTotals, splitLines } from "@pisync/format";
import { describeOnEveryStore, openPair, type Pair, type PairName, STORE_NAMES } from "@pisync/testing";
import { baseName, comparableContexts, inRepoCorpus, loadCorpus, PI_HAS_NO_ANSWER } from "@pisync/testing/fixtures";
import { type OracleContexts, piContexts } from "@pisync/testing/pi1";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, makeApp, userToken } from "./harness.js";

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 4294967296;
  };
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value));
const fixtures = loadCorpus(inRepoCorpus);

describeOnEveryStore("fixtures over HTTP", (pair) => {
  it.each(fixtures.map((f, i) => [f.name, f, i] as const))("%s", async (_name, fixture, i) => {
    const bytes = new Uint8Array(readFileSync(fixture.jsonl));
    const session = parseSession(bytes);
    const id = session.header?.id;
    if (!id) return; // no header: nothing can name the session (tested in protocol.test.ts)
    // A user per fixture: several fixtures share a session id.
    const keys = newShareKeys();
    const app = createApp({ stores: pair().stores, shareKeys: async () => keys, log: () => {} });
    const c = client(app, await userToken(pair().stores, `fixture-${i}`));
    const headerEnd = (session.index.headerLine ?? 1) - 1;
    const random = seeded(1000 + i);
    const complete = completeLength(bytes);
    const boundaries = [0, ...splitLines(bytes).map((s) => s.offset + s.length + 1)];
    let offset = 0;
    while (offset < complete) {
      // A chunk of 1 to 6 lines; the first one holds at least the header (offset 0 must).
      const at = boundaries.indexOf(offset);
      const lines = Math.max(1 + Math.floor(random() * 6), offset === 0 ? headerEnd + 1 : 0);
      const end = boundaries[Math.min(at + lines, boundaries.length - 1)];
      const chunk = bytes.subarray(offset, end);
      const gzip = random() < 0.3;
      const r = gzip ? await c.patchGzip(id, offset, chunk) : await c.patch(id, offset, chunk);
      expect(r.status, `${offset}-${end} gzip=${gzip}: ${await r.clone().text()}`).toBe(200);
      expect(r.headers.get("Upload-Offset")).toBe(String(end));
      if (random() < 0.2) {
        const again = await c.patch(id, offset, chunk);
        expect(await again.json()).toMatchObject({ retry: true, offset: end });
      }
      if (random() < 0.2 && at + 1 < boundaries.indexOf(end)) {
        // Retried with other chunking: just the first line of that chunk.
        const first = bytes.subarray(offset, boundaries[at + 1]);
        const again = await c.patch(id, offset, first);
        expect(again.status).toBe(200);
        expect(await again.json()).toMatchObject({ retry: true, offset: boundaries[at + 1] });
      }
      offset = end;
    }
    const raw = await c.get(`/v1/sessions/${id}/raw`);
    expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(bytes.subarray(0, complete)))).toBe(true);

    if (PI_HAS_NO_ANSWER.has(baseName(fixture))) {
      const r = await c.get(`/v1/sessions/${id}/context`);
      expect(r.status).toBe(200);
      return;
    }
    const followsRetainedTail = (leafId: string) => {
      const leaf = session.index.byId(leafId);
      return !!leaf && pathTo(session.index, leaf).records.some((r) => r.facts?.hasRetainedTail);
    };
    const cases = comparableContexts(fixture, session.version < 2, followsRetainedTail);
    expect(cases.length).toBeGreaterThan(0);
    const shared = await c.post(`/v1/sessions/${id}/shares`, { maskSecrets: false });
    const link = new URL(((await shared.json()) as { url: string }).url).pathname;
    for (const [leafId, want, compare] of cases) {
      const query = leafId ? `?leaf=${encodeURIComponent(leafId)}` : "";
      const r = await c.get(`/v1/sessions/${id}/context${query}`);
      if (leafId === null) continue; // the API has no "before the first entry" leaf
      expect(r.status, await r.clone().text()).toBe(200);
      const { leafId: _leaf, ...context } = (await r.json()) as Record<string, unknown>;
      if (compare === "messages") expect(json(context.messages), `leaf ${leafId}`).toEqual(want);
      else expect(json(context), `leaf ${leafId}`).toEqual(want);
      const viaLink = await app.request(`${link}/context${query}`);
      expect(viaLink.status).toBe(200);
      const { masked: _masked, ...linkContext } = (await viaLink.json()) as Record<string, unknown>;
      expect(linkContext, `leaf ${leafId} through the link`).toEqual({ ...context, leafId: _leaf });
    }
  });
});

// pi 1.6.0's corpus (system prompts, usage entries, context edits), appended whole: every leaf's
// context through the service is pi 1.6.0's own answer (asked live), and the totals count usage entries.
const pi1Corpus = join(inRepoCorpus, "pi-1.6.0");
const pi1Files = readdirSync(pi1Corpus)
  .filter((f) => f.endsWith(".jsonl"))
  .sort()
  .map((name) => ({ name, bytes: new Uint8Array(readFileSync(join(pi1Corpus, name))) }));

describe("pi 1.6.0's corpus over HTTP", () => {
  let answers: OracleContexts[];
  const pairs: Partial<Record<PairName, Pair>> = {};
  beforeAll(async () => {
    answers = piContexts(pi1Files.map((f) => ({ text: new TextDecoder().decode(f.bytes) })));
    for (const name of STORE_NAMES) pairs[name] = await openPair(name);
  });
  afterAll(async () => {
    for (const pair of Object.values(pairs)) await pair?.close();
  });

  for (const name of STORE_NAMES) {
    it.each(pi1Files.map((f, i) => [f.name, i] as const))(`%s (${name})`, async (fileName, i) => {
      const { bytes } = pi1Files[i];
      const session = parseSession(bytes);
      const id = session.header?.id as string;
      const c = client(
        makeApp((pairs[name] as Pair).stores),
        await userToken((pairs[name] as Pair).stores, `pi1-${i}`),
      );
      expect((await c.patch(id, 0, bytes)).status).toBe(200);
      for (const [leaf, theirs] of answers[i]) {
        const r = await c.get(`/v1/sessions/${id}/context${leaf ? `?leaf=${encodeURIComponent(leaf)}` : ""}`);
        expect(r.status, await r.clone().text()).toBe(200);
        const { leafId: _leaf, ...context } = (await r.json()) as Record<string, unknown>;
        expect(json(context), `${fileName} leaf ${leaf}`).toEqual(theirs);
      }
      const meta = (await (await c.get(`/v1/sessions/${id}`)).json()) as { tokens: number };
      const all = session.entries as Record<string, unknown>[];
      const usageTokens = all
        .filter((e) => e.type === "usage")
        .reduce((n, e) => n + (e.usage as { totalTokens: number }).totalTokens, 0);
      if (fileName === "system-prompts.jsonl") expect(usageTokens).toBeGreaterThan(0);
      const messageTokens = all.reduce(
        (n, e) => n + ((e.message as { usage?: { totalTokens: number } } | undefined)?.usage?.totalTokens ?? 0),
        0,
      );
      expect(meta.tokens).toBe(messageTokens + usageTokens);
      if (session.index.leafIds().length === 1) expect(pathTotals(session.index).totalTokens).toBe(meta.tokens);
    });
  }
});
