/**
 * One title rule everywhere: the title slot's when a file has one (oh-my-pi rewrites it on every
 * rename), else the latest in file order of the header's `title`, `title_change` and pi's
 * `session_info` name; without any, lists fall back to the first message.
 */
import { randomUUID } from "node:crypto";
import { batchOf } from "@pisync/search";
import { line, sessionHeader, userLine } from "@pisync/testing";
import { describe, expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { titleOf } from "../src/library.js";
import { memoryStores } from "./memory-stores.js";

const enc = (text: string) => new TextEncoder().encode(text);
const slot = (title: string) => {
  const bare = JSON.stringify({ type: "title", v: 1, title, updatedAt: "2026-12-01T10:00:00.000Z", pad: "" });
  return `${JSON.stringify({ type: "title", v: 1, title, updatedAt: "2026-12-01T10:00:00.000Z", pad: " ".repeat(255 - Buffer.byteLength(bare)) })}\n`;
};
const titleChange = (id: string, parentId: string, title: string) =>
  line({ type: "title_change", id, parentId, timestamp: "2026-12-01T10:00:00.000Z", title, source: "user" });
const sessionInfo = (id: string, parentId: string, name: string) =>
  line({ type: "session_info", id, parentId, timestamp: "2026-12-01T10:00:00.000Z", name });

async function nameOf(text: string, sessionId: string): Promise<string | undefined> {
  const stores = memoryStores();
  await new Appender(stores).append({ userId: "u", sessionId, offset: 0, body: enc(text) });
  return (await stores.meta.getHead("u", sessionId))?.summary.name;
}

describe("the title of a session", () => {
  it("follows the slot, else the latest of the header's title, title_change and session_info", async () => {
    const id = randomUUID();
    const header = line({ ...sessionHeader(id), title: "From the header" });
    const first = userLine("a1", null, 1, "the first question");
    expect(await nameOf(header + first, id)).toBe("From the header");
    expect(await nameOf(header + first + titleChange("t1", "a1", "Renamed"), id)).toBe("Renamed");
    expect(
      await nameOf(header + first + titleChange("t1", "a1", "Renamed") + sessionInfo("s1", "t1", "pi's name"), id),
    ).toBe("pi's name");
    expect(await nameOf(slot("The slot's") + header + first + sessionInfo("s1", "a1", "pi's name"), id)).toBe(
      "The slot's",
    );
    // An empty slot (omp before its first title) leaves the entries' rule.
    expect(await nameOf(slot("") + line(sessionHeader(id)) + first + titleChange("t1", "a1", "Later"), id)).toBe(
      "Later",
    );
    // None: the first message is what lists show.
    const stores = memoryStores();
    await new Appender(stores).append({
      userId: "u",
      sessionId: id,
      offset: 0,
      body: enc(line(sessionHeader(id)) + first),
    });
    const head = await stores.meta.getHead("u", id);
    expect(titleOf({ sessionId: id, ...head?.summary } as never)).toBe("the first question");
  });

  it("search takes the slot's or the header's title from a session's start", () => {
    const id = randomUUID();
    const at = { userId: "u", sessionId: id, generation: 1, from: 0 };
    const first = userLine("a1", null, 1, "q");
    expect(batchOf(enc(slot("Slot title") + line(sessionHeader(id)) + first), at).name).toBe("Slot title");
    expect(batchOf(enc(line({ ...sessionHeader(id), title: "Header title" }) + first), at).name).toBe("Header title");
    expect(batchOf(enc(line(sessionHeader(id)) + first), at).name).toBeUndefined();
  });
});
