import type { SessionHead } from "@pisync/store";
import { describe, expect, it } from "vitest";
import { Appender, Library, matches, Reader, ShareReading, searchText } from "../src/index.js";
import { memoryStores } from "./memory-stores.js";

function head(id: string, lastEntryAt: string, cwd: string, models: string[]): SessionHead {
  return {
    userId: "u",
    sessionId: id,
    revision: 1,
    current: { generation: 1, length: 10, lines: 1, values: 1, segments: [], createdAt: "2026-06-01T00:00:00.000Z" },
    generations: 1,
    summary: {
      hasHeader: true,
      entries: 1,
      tokens: 0,
      cost: 0,
      leafId: null,
      problemCount: 0,
      problems: [],
      cwd,
      models,
      lastEntryAt,
    },
    createdAt: "2026-06-01T00:00:00.000Z",
    updatedAt: "2026-06-01T00:00:00.000Z",
  };
}

describe("the library's list", () => {
  it("pages through every match newest first with a cursor, nothing twice, nothing missed", async () => {
    const stores = memoryStores();
    const reader = new Reader(stores);
    const library = new Library(stores.meta, reader, new ShareReading(reader, {} as never));
    // 120 sessions, many sharing a time (the id breaks ties).
    for (let i = 0; i < 120; i++) {
      const day = `2025-0${1 + (i % 9)}-15T00:00:00.000Z`;
      await stores.meta.commit({
        head: head(`s${String(i).padStart(3, "0")}`, day, i % 2 ? "/w/a" : "/w/b", i % 3 ? ["p/m1"] : ["p/m2"]),
        expectedRevision: null,
      });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await library.list("u", { cwd: "/w/a" }, { limit: 7, cursor });
      seen.push(...page.sessions.map((s) => `${s.lastAt} ${s.sessionId}`));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect(seen).toEqual([...seen].sort().reverse());
    // Unfiltered, the first page comes from the same read as the filters' choices: its cursor still resumes.
    const everything: string[] = [];
    for (let at: string | undefined, n = 0; n === 0 || at; n++) {
      const page = await library.list("u", {}, { limit: 7, cursor: at });
      everything.push(...page.sessions.map((s) => `${s.lastAt} ${s.sessionId}`));
      at = page.cursor;
    }
    expect(everything).toHaveLength(120);
    expect(everything).toEqual([...new Set(everything)].sort().reverse());
    const first = await library.list("u", {}, { limit: 5 });
    expect(first.folders).toEqual(["/w/a", "/w/b"]);
    expect(first.models).toEqual(["p/m1", "p/m2"]);
    await expect(library.list("u", { from: "2025-13-01" }, { limit: 5 })).rejects.toThrow("from must be a day");
    expect((await library.list("other", {}, { limit: 5 })).sessions).toEqual([]);
    // A cursor names its user's list: another user's is refused, never read.
    const mine = (await library.list("u", {}, { limit: 5 })).cursor;
    await expect(library.list("other", {}, { limit: 5, cursor: mine })).rejects.toThrow("cursor");
    await expect(library.list("u", {}, { limit: 5, cursor: "garbage" })).rejects.toThrow("cursor");
  });

  it("matches folders and the folders inside them, models by full or short name, days inclusive", () => {
    const card = {
      sessionId: "s",
      models: ["anthropic/claude"],
      lastAt: "2025-05-05T23:59:00.000Z",
      cwd: "/w/app/src",
    } as never;
    expect(matches(card, { cwd: "/w/app" })).toBe(true);
    expect(matches(card, { cwd: "/w/app/" })).toBe(true);
    expect(matches(card, { cwd: "/w/ap" })).toBe(false);
    expect(matches(card, { model: "claude" })).toBe(true);
    expect(matches(card, { model: "anthropic/claude" })).toBe(true);
    expect(matches(card, { model: "laude" })).toBe(false);
    expect(matches(card, { from: "2025-05-05", to: "2025-05-05" })).toBe(true);
    expect(matches(card, { to: "2025-05-04" })).toBe(false);
  });

  it("turns the page's filters into the query language, quoted", () => {
    expect(searchText(" retry ", { cwd: '/w/"x"', model: "gpt-5", from: "2025-01-01", to: "2025-01-31" })).toBe(
      'retry cwd:"/w/x" model:"gpt-5" since:2025-01-01 before:2025-02-01',
    );
  });
});

describe("the summary a commit keeps for the library", () => {
  it("names every model of the session (changes and replies, first first) and its latest entry time", async () => {
    const stores = memoryStores();
    const appender = new Appender(stores);
    const line = (value: unknown) => `${JSON.stringify(value)}\n`;
    const reply = (id: string, parentId: string, timestamp: string, provider: string, model: string) =>
      line({ type: "message", id, parentId, timestamp, message: { role: "assistant", content: [], provider, model } });
    const body =
      line({ type: "session", version: 3, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" }) +
      line({
        type: "model_change",
        id: "m1",
        parentId: null,
        timestamp: "2025-01-01T00:00:01.000Z",
        provider: "openai",
        modelId: "gpt-5",
      }) +
      reply("a1", "m1", "2025-01-03T00:00:00.000Z", "openai", "gpt-5") +
      reply("a2", "a1", "2025-01-02T00:00:00.000Z", "anthropic", "claude") +
      line({ type: "message", id: "u1", parentId: "a2", message: { role: "user", content: "no time" } });
    await appender.append({ userId: "u", sessionId: "s", offset: 0, body: new TextEncoder().encode(body) });
    const head = await stores.meta.getHead("u", "s");
    expect(head?.summary.models).toEqual(["openai/gpt-5", "anthropic/claude"]);
    expect(head?.summary.lastEntryAt).toBe("2025-01-03T00:00:00.000Z");
  });
});
