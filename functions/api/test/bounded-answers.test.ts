/**
 * Every answer is bounded, whatever a session holds: a session whose name, folder, model,
 * label, header time and first message are each 2 MB of text (sent gzipped, a few KB) is read
 * through every GET route of the OpenAPI document, on both stores. No answer carries more of any
 * of those texts than `FIELD_LIMITS` allows, and the JSON answers stay small, except the routes
 * whose answer is the session itself: `/raw` (the exact bytes) and `/context` (pi's context), and
 * the first message, which pages show as the entry it is.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newShareKeys, SearchIndexer, storedLines } from "@pisync/core";
import { FIELD_LIMITS } from "@pisync/protocol";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { assistantMessage, describeOnEveryStore, entry, line, userMessage } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { openApiDocument } from "../src/openapi.js";
import { client, userToken } from "./harness.js";

const HUGE = 2 * 1024 * 1024;
/** Each hostile text is one repeated letter: the longest run of it in an answer is what was shown. */
const texts = {
  name: "N",
  cwd: "C",
  model: "M",
  label: "L",
  timestamp: "T",
  firstMessage: "F",
} as const;
let size = HUGE;
const huge = (letter: string) => letter.repeat(size);
/** The most of each a bounded answer may show: its field's limit (a page may show a text twice). */
const allowed: Record<keyof typeof texts, number> = {
  name: FIELD_LIMITS.name,
  cwd: FIELD_LIMITS.cwd,
  model: FIELD_LIMITS.model,
  label: FIELD_LIMITS.label,
  timestamp: FIELD_LIMITS.timestamp,
  firstMessage: FIELD_LIMITS.preview,
};

function hostileSession(id: string): string {
  return [
    line({ type: "session", version: 3, id, timestamp: huge(texts.timestamp), cwd: `/${huge(texts.cwd)}` }),
    line(entry("u1", null, 1, userMessage(`hello ${huge(texts.firstMessage)}`))),
    line(entry("a1", "u1", 2, assistantMessage("hello back", { model: huge(texts.model) }))),
    line({
      type: "model_change",
      id: "m1",
      parentId: "a1",
      timestamp: "2026-01-01T00:00:03.000Z",
      provider: "p",
      modelId: huge(texts.model),
    }),
    line({
      type: "label",
      id: "l1",
      parentId: "m1",
      timestamp: "2026-01-01T00:00:04.000Z",
      targetId: "u1",
      label: huge(texts.label),
    }),
    line({
      type: "session_info",
      id: "n1",
      parentId: "l1",
      timestamp: "2026-01-01T00:00:05.000Z",
      name: huge(texts.name),
    }),
  ].join("");
}

/** The longest run of `letter` in `text`. */
function longestRun(text: string, letter: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = text[i] === letter ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

describeOnEveryStore("every answer bounded against oversized session text", (pair) => {
  let app: ReturnType<typeof createApp>;
  let owner: ReturnType<typeof client>;
  let dir: string;
  let index: SqliteSearchIndex;
  let indexer: SearchIndexer;
  const id = "oversized";
  const values: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pisync-bounds-"));
    index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(pair().stores));
    indexer = new SearchIndexer(pair().stores, index);
    const keys = newShareKeys();
    app = createApp({ stores: pair().stores, log: () => {}, shareKeys: async () => keys, search: { index, indexer } });
    owner = client(app, await userToken(pair().stores, "bounded"));
    const text = hostileSession(id);
    const r = await owner.patchGzip(id, 0, new TextEncoder().encode(text));
    expect(r.status, await r.clone().text()).toBe(200);
    await indexer.flush();
    const share = await owner.post(`/v1/sessions/${id}/shares`, { maskSecrets: false });
    values.token = new URL(((await share.json()) as { url: string }).url).pathname.slice(3);
    values.id = id;
    values.hash = "0".repeat(64);
    values.secret = "a".repeat(43);
  });
  afterAll(async () => {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Every GET route with megabytes of text: tens of seconds on a busy machine.
  it("no GET route shows more of a name, folder, model, label or time than its bound", {
    timeout: 120_000,
  }, async () => {
    const paths = Object.entries(openApiDocument.paths as Record<string, Record<string, unknown>>)
      .filter(([, methods]) => "get" in methods)
      .map(([path]) => path);
    expect(paths).toContain("/v1/sessions");
    let walked = 0;
    for (const template of paths) {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? name);
      const query = /search/.test(path) ? "?q=hello" : "";
      const r = await owner.get(`${path}${query}`, path.startsWith("/v1") ? {} : { Accept: "text/html" });
      expect(r.status, path).toBeLessThan(500);
      const body = await r.text();
      const whole = /\/(raw|context)$/.test(template);
      // Markdown is the conversation itself: its messages whole, the facts around them bounded.
      const conversation = !path.startsWith("/v1") || /\/md$/.test(template);
      for (const [field, letter] of Object.entries(texts) as [keyof typeof texts, string][]) {
        if (whole || (field === "firstMessage" && conversation && path !== "/")) continue;
        const bound = field === "firstMessage" && /search/.test(path) ? FIELD_LIMITS.snippet : allowed[field];
        expect(longestRun(body, letter), `${path}: ${field}`).toBeLessThanOrEqual(bound);
      }
      if (!whole && (r.headers.get("Content-Type") ?? "").includes("json") && path !== "/openapi.json") {
        expect(body.length, path).toBeLessThan(64 * 1024);
      }
      walked++;
    }
    expect(walked).toBeGreaterThan(25);
  });

  it("the list of many such sessions stays small (the API list cuts names too)", { timeout: 120_000 }, async () => {
    size = HUGE / 8;
    for (let i = 0; i < 5; i++) {
      const r = await owner.patchGzip(`${id}-${i}`, 0, new TextEncoder().encode(hostileSession(`${id}-${i}`)));
      expect(r.status).toBe(200);
    }
    const list = await owner.get("/v1/sessions?limit=50");
    const body = await list.text();
    expect(JSON.parse(body).sessions).toHaveLength(6);
    expect(body.length).toBeLessThan(6 * 4 * 1024);
  });
});
