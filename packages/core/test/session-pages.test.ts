/**
 * A session's text a page at a time (what MCP's `read_session` and `get_context` answer): pages
 * never over their bytes, never half a character, joined they are the whole document; a cursor
 * keeps its branch, refuses a rewritten session, and another user's session is not found.
 */
import { maskLines, maskText, maskTexts } from "@pisync/viewer";
import { describe, expect, it } from "vitest";
import { Appender, fitUtf8, Reader, SessionPages, ShareReading } from "../src/index.js";
import { memoryStores } from "./memory-stores.js";

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
const GITHUB = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;

/** Turns whose texts are full of characters of 2, 3 and 4 bytes. */
function session(turns: number) {
  let text = line({ type: "session", version: 3, id: "s1", timestamp: at(0), cwd: "/w" });
  let parent: string | null = null;
  for (let i = 0; i < turns; i++) {
    const content = `T${i}: ${"é漢😀".repeat(300)} ${i === 3 ? GITHUB : ""}`;
    text += line({
      type: "message",
      id: `u${i}`,
      parentId: parent,
      timestamp: at(i),
      message: { role: "user", content },
    });
    parent = `u${i}`;
  }
  return text;
}

async function setUp(pageBytes: number) {
  const stores = memoryStores();
  const reader = new Reader(stores);
  const masker = { maskLines, maskTexts, maskText: (text: string) => maskText(text).text };
  const reading = new ShareReading(reader, masker);
  const appender = new Appender(stores);
  await appender.append({ userId: "u", sessionId: "s1", offset: 0, body: new TextEncoder().encode(session(12)) });
  return { pages: new SessionPages(reader, reading, pageBytes), appender, reading };
}

async function allPages(pages: SessionPages, view: "md" | "context", pageBytes: number) {
  const texts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await pages.page("u", "s1", view, undefined, cursor);
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(pageBytes);
    // No half of a surrogate pair at either end.
    expect(page.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    texts.push(page.text);
    cursor = page.nextCursor;
  } while (cursor && texts.length < 1000);
  return texts;
}

describe("fitUtf8", () => {
  it("fits whole characters of 1 to 4 bytes, never half a surrogate pair", () => {
    expect(fitUtf8("abc", 2)).toBe(2);
    expect(fitUtf8("é漢", 4)).toBe(1);
    expect(fitUtf8("é漢", 5)).toBe(2);
    expect(fitUtf8("😀x", 3)).toBe(0);
    expect(fitUtf8("😀x", 4)).toBe(2);
    expect(fitUtf8("a😀", 4)).toBe(1);
    expect(fitUtf8("whole", 100)).toBe(5);
  });
});

describe("session pages", () => {
  it("pages the masked Markdown: each page within its bytes, joined the whole branch in order", async () => {
    const { pages } = await setUp(3000);
    const texts = await allPages(pages, "md", 3000);
    expect(texts.length).toBeGreaterThan(5);
    // After the head, whose title is the first message.
    const whole = texts.join("").slice(texts[0].indexOf("## "));
    expect([...whole.matchAll(/T(\d+): /g)].map((m) => Number(m[1]))).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(whole).not.toContain(GITHUB);
    expect(whole.split("é漢😀").length - 1).toBeGreaterThanOrEqual(12 * 300);
  });

  it("pages the context: joined, the JSON of the context, masked", async () => {
    const { pages } = await setUp(2000);
    const texts = await allPages(pages, "context", 2000);
    const context = JSON.parse(texts.join(""));
    expect(context.messages).toHaveLength(12);
    expect(context.leafId).toBe("u11");
    expect(context.masked).toBe(1);
    expect(JSON.stringify(context)).not.toContain(GITHUB);
  });

  it("keeps the first page's branch; refuses a rewritten session's cursor and a forged one", async () => {
    const { pages, appender } = await setUp(3000);
    const first = await pages.page("u", "s1", "md", "u2");
    expect(first.leafId).toBe("u2");
    const second = await pages.page("u", "s1", "md", undefined, first.nextCursor);
    expect(second.leafId).toBe("u2");
    expect(second.text).not.toContain("T5:");
    await expect(pages.page("u", "s1", "md", "u4", first.nextCursor)).rejects.toThrow(/another leaf/);
    await expect(pages.page("u", "s1", "context", undefined, first.nextCursor)).rejects.toThrow(/cursor/);
    await expect(pages.page("u", "s1", "md", undefined, "not-a-cursor")).rejects.toThrow(/cursor/);
    await appender.append({
      userId: "u",
      sessionId: "s1",
      offset: 0,
      replace: true,
      body: new TextEncoder().encode(session(2)),
    });
    await expect(pages.page("u", "s1", "md", undefined, first.nextCursor)).rejects.toThrow(/rewritten/);
  });

  it("another user's session is not found", async () => {
    const { pages } = await setUp(3000);
    await expect(pages.page("someone-else", "s1", "md")).rejects.toMatchObject({ code: "not_found" });
    await expect(pages.page("someone-else", "s1", "context")).rejects.toMatchObject({ code: "not_found" });
  });
});
