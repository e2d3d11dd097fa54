/**
 * A line nested 10,000 deep (about 20 KB: `JSON.parse` reads it, pi keeps it) on every route
 * that shows a session, on both stores, with pages rendered by the worker pool as `npm start`
 * renders them: the share page, its `/entries`, `/raw` and `/context`, the library's session page,
 * `/entries` and `/context`, and the API's `/context` and `/raw`. Pages show the entry as its
 * escaped text; every `/context` is pi 0.73.1's own answer, as whole JSON; `/raw` is the bytes.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { newShareKeys, stringifyJson } from "@pisync/core";
import { assistantMessage, describeOnEveryStore, entry, line, sessionHeader, userMessage } from "@pisync/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { type WorkerPool, workerPool } from "../src/worker-pool.js";
import { client, userToken } from "./harness.js";

const DEPTH = 10_000;
const DEEP = `${"[".repeat(DEPTH)}"<b>deep</b>"${"]".repeat(DEPTH)}`;
/** A line whose JSON holds `DEEP` where `value` holds the placeholder. */
const deepLine = (value: object) => line(value).replace('"@deep@"', DEEP);

/** A session with the deep value in a user message's content and in a tool call's arguments. */
function deepSession(id: string): string {
  return (
    line(sessionHeader(id)) +
    line(entry("a1", null, 1, userMessage("hello"))) +
    deepLine(entry("d1", "a1", 2, userMessage([{ type: "text", text: "look" }, "@deep@"], 2))) +
    deepLine(
      entry(
        "d2",
        "d1",
        3,
        assistantMessage([{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "@deep@" } }]),
      ),
    ) +
    line(entry("a2", "d2", 4, assistantMessage("done")))
  );
}

/** pi 0.73.1's context of a session file, as JSON text (written past the stack). */
function piContext(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pisync-pi-"));
  try {
    const file = join(dir, "session.jsonl");
    writeFileSync(file, text);
    const context = SessionManager.open(file, dir).buildSessionContext();
    return stringifyJson(context.messages) as string;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describeOnEveryStore("a line nested 10,000 deep on every route", (pair) => {
  let app: ReturnType<typeof createApp>;
  let owner: ReturnType<typeof client>;
  let work: WorkerPool;
  let share: string;
  const id = "deep-line";
  const text = deepSession(id);
  const errors: string[] = [];

  beforeAll(async () => {
    const keys = newShareKeys();
    work = workerPool({ maxThreads: 1 });
    app = createApp({ stores: pair().stores, shareKeys: async () => keys, work, log: (l) => errors.push(l) });
    owner = client(app, await userToken(pair().stores, "deep-owner"));
    expect((await owner.patch(id, 0, text)).status).toBe(200);
    const made = await owner.post(`/v1/sessions/${id}/shares`, { maskSecrets: true });
    share = new URL(((await made.json()) as { url: string }).url).pathname;
  });
  afterAll(() => work.close());

  async function ok(path: string): Promise<string> {
    const r = await owner.get(path, { Accept: "text/html" });
    expect(r.status, path).toBe(200);
    return r.text();
  }

  it("pages show the deep entries as their escaped text, the others as entries", async () => {
    for (const path of [share, `${share}/entries?from=0`, `/sessions/${id}`, `/sessions/${id}/entries?from=0`]) {
      const html = await ok(path);
      for (const e of ["a1", "d1", "d2", "a2"]) expect(html, `${path} ${e}`).toContain(`id="e-${e}"`);
      expect(html.match(/as-text/g)?.length, path).toBe(2);
      expect(html, path).toContain("nested more than 64 deep");
      expect(html, path).toContain("[[[[[[[[");
      expect(html, path).toContain("&lt;b&gt;deep&lt;/b&gt;");
      expect(html, path).not.toContain("<b>deep</b>");
    }
    expect(errors).toEqual([]);
  });

  it("every /context is pi's answer, whole", async () => {
    const theirs = piContext(text);
    expect(theirs.length).toBeGreaterThan(4 * DEPTH);
    for (const path of [`/v1/sessions/${id}/context`, `${share}/context`, `/sessions/${id}/context`]) {
      const body = await ok(path);
      const parsed = JSON.parse(body) as { messages: unknown[]; leafId: string };
      expect(stringifyJson(parsed.messages), path).toBe(theirs);
      expect(parsed.leafId, path).toBe("a2");
    }
  });

  it("a line past 8 MiB shows as the start of its text, the page staying small; /raw keeps it whole", async () => {
    const long = "long-line";
    const huge = line(entry("h1", "a1", 2, userMessage(`<i>${"x".repeat(9 * 1024 * 1024)}</i>`)));
    const bytes = line(sessionHeader(long)) + line(entry("a1", null, 1, userMessage("hello"))) + huge;
    expect((await owner.patchGzip(long, 0, new TextEncoder().encode(bytes))).status).toBe(200);
    const made = await owner.post(`/v1/sessions/${long}/shares`, { maskSecrets: false });
    const link = new URL(((await made.json()) as { url: string }).url).pathname;
    for (const path of [link, `/sessions/${long}`]) {
      const html = await ok(path);
      expect(html, path).toContain(`a line of ${(huge.length - 1).toLocaleString("en-US")} bytes`);
      expect(html, path).toContain("&lt;i&gt;xxxx");
      expect(html.length, path).toBeLessThan(512 * 1024);
    }
    expect((await ok(`/v1/sessions/${long}/raw`)).length).toBe(bytes.length);
  });

  it("the Markdown shows the deep entries as their text, fenced; the link card answers", {
    timeout: 90_000,
  }, async () => {
    for (const path of [`/v1/sessions/${id}/md`, `${share}/md`]) {
      const r = await owner.get(path, { Accept: "text/markdown" });
      const body = await r.text();
      expect(r.status, path).toBe(200);
      for (const said of ["hello", "done", '"text":"look"', '"name":"bash"', "[[[[[[[["])
        expect(body, path).toContain(said);
      expect(body.match(/nested more than 64 deep/g)?.length, path).toBe(2);
      // Inside a fence: the deep entries' text is never read as Markdown or HTML.
      const fences = body.split("\n").filter((l) => l.startsWith("```"));
      expect(fences.length % 2, path).toBe(0);
    }
    const card = await owner.get(`${share}/preview.png`, {});
    expect(card.status).toBe(200);
    expect(errors).toEqual([]);
  });

  it("/raw answers the stored bytes, every line whole", async () => {
    for (const path of [`/v1/sessions/${id}/raw`, `/sessions/${id}/raw`, `${share}/raw`]) {
      expect(await ok(path), path).toBe(text);
    }
  });
});
