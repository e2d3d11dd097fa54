/**
 * A rename (oh-my-pi's title slot overwritten in place) on both store pairs: the bytes become
 * the new ones exactly, in the same generation, the title follows, retries store nothing,
 * appends race it and both land, merges of segments and the deep check hold across it.
 */
import { randomUUID } from "node:crypto";
import type { Stores } from "@pisync/store";
import { describeOnEveryStore, line, sessionHeader, userLine } from "@pisync/testing";
import { expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { SlotMismatch } from "../src/errors.js";
import { MAX_SEGMENTS, readRange } from "../src/segments.js";
import { verifyStores } from "../src/verify.js";

const enc = (text: string) => new TextEncoder().encode(text);

/** A title slot as oh-my-pi writes it: one JSON line padded to `width` bytes with its newline. */
function slot(title: string, updatedAt = "2026-12-01T10:00:00.000Z", width = 256): string {
  const bare = JSON.stringify({ type: "title", v: 1, title, source: "user", updatedAt, pad: "" });
  return `${JSON.stringify({ type: "title", v: 1, title, source: "user", updatedAt, pad: " ".repeat(width - 1 - Buffer.byteLength(bare)) })}\n`;
}

async function committed(stores: Stores, userId: string, sessionId: string): Promise<string> {
  const head = await stores.meta.getHead(userId, sessionId);
  if (!head) return "";
  return new TextDecoder().decode(await readRange(stores.blobs, head.current.segments, 0, head.current.length));
}

describeOnEveryStore("rename: the title slot replaced in place", (pair) => {
  it("keeps the generation and every other byte; the title follows; a retry stores nothing; appends go on", async () => {
    const { stores } = pair();
    const appender = new Appender(stores);
    const [userId, sessionId] = [`u-${randomUUID()}`, randomUUID()];
    let text = slot("") + line(sessionHeader(sessionId)) + userLine("a1", null, 1, "first question");
    await appender.append({ userId, sessionId, offset: 0, body: enc(text) });
    expect((await stores.meta.getHead(userId, sessionId))?.summary.name).toBeUndefined();

    const renamed = slot("Fix the CI", "2026-12-01T10:05:00.000Z");
    const answer = await appender.rename({ userId, sessionId, body: enc(renamed), generation: 1 });
    expect(answer).toEqual({ offset: text.length, generation: 1, retry: false, title: "Fix the CI" });
    text = renamed + text.slice(256);
    expect(await committed(stores, userId, sessionId)).toBe(text);
    const head = await stores.meta.getHead(userId, sessionId);
    expect(head?.generations).toBe(1);
    expect(head?.current.renames).toBe(1);
    expect(head?.summary.name).toBe("Fix the CI");
    // The library's card follows (it is written with the head).
    expect((await stores.meta.listCardPage(userId, { limit: 10 })).cards.map((c) => c.name)).toEqual(["Fix the CI"]);

    // The same rename again: a retry.
    expect((await appender.rename({ userId, sessionId, body: enc(renamed), generation: 1 })).retry).toBe(true);
    expect((await stores.meta.getHead(userId, sessionId))?.revision).toBe(head?.revision);

    // Appends continue at the same offset; a second rename replaces the slot's own object.
    const next = line({
      type: "title_change",
      id: "t1",
      parentId: "a1",
      timestamp: "2026-12-01T10:05:00.000Z",
      title: "Fix the CI",
      source: "user",
    });
    await appender.append({ userId, sessionId, offset: text.length, body: enc(next) });
    text += next;
    const again = slot("Fix the CI, really", "2026-12-01T10:06:00.000Z");
    await appender.rename({ userId, sessionId, body: enc(again) });
    text = again + text.slice(256);
    expect(await committed(stores, userId, sessionId)).toBe(text);
    expect((await stores.meta.getHead(userId, sessionId))?.summary.name).toBe("Fix the CI, really");

    // Many appends: segments merge across the slot's object, and the deep check finds nothing wrong.
    for (let n = 2; n <= MAX_SEGMENTS + 4; n++) {
      const body = userLine(`a${n}`, n === 2 ? "t1" : `a${n - 1}`, n, `question ${n}`);
      await appender.append({ userId, sessionId, offset: text.length, body: enc(body) });
      text += body;
    }
    expect(await committed(stores, userId, sessionId)).toBe(text);
    const report = await verifyStores(stores, { userId, deep: true });
    expect(report.findings.filter((f) => f.problem && f.kind !== "orphan")).toEqual([]);
  });

  it("a rename racing appends: both land; the last of two renames wins", async () => {
    const { stores } = pair();
    const appender = new Appender(stores);
    const [userId, sessionId] = [`u-${randomUUID()}`, randomUUID()];
    let text = slot("old") + line(sessionHeader(sessionId));
    await appender.append({ userId, sessionId, offset: 0, body: enc(text) });
    const lines = Array.from({ length: 6 }, (_, i) => userLine(`r${i}`, i === 0 ? null : `r${i - 1}`, i, `line ${i}`));
    const appends = (async () => {
      for (const body of lines) {
        await appender.append({ userId, sessionId, offset: text.length, body: enc(body) });
        text += body;
      }
    })();
    const renames = (async () => {
      for (let i = 0; i < 4; i++) await appender.rename({ userId, sessionId, body: enc(slot(`title ${i}`)) });
    })();
    await Promise.all([appends, renames]);
    const bytes = await committed(stores, userId, sessionId);
    expect(bytes).toBe(slot("title 3") + text.slice(256));
    const head = await stores.meta.getHead(userId, sessionId);
    expect(head?.generations).toBe(1);
    expect(head?.summary.entries).toBe(lines.length);
  });

  it("refuses what is not a rename: no slot stored, another length, a body that is no slot", async () => {
    const { stores } = pair();
    const appender = new Appender(stores);
    const [userId, sessionId, plain] = [`u-${randomUUID()}`, randomUUID(), randomUUID()];
    await appender.append({ userId, sessionId, offset: 0, body: enc(slot("x") + line(sessionHeader(sessionId))) });
    await appender.append({ userId, sessionId: plain, offset: 0, body: enc(line(sessionHeader(plain))) });
    await expect(appender.rename({ userId, sessionId: plain, body: enc(slot("y")) })).rejects.toBeInstanceOf(
      SlotMismatch,
    );
    await expect(appender.rename({ userId, sessionId, body: enc(slot("y", undefined, 300)) })).rejects.toBeInstanceOf(
      SlotMismatch,
    );
    await expect(
      appender.rename({ userId, sessionId, body: enc(line(sessionHeader(sessionId))) }),
    ).rejects.toMatchObject({
      code: "not_a_title_slot",
    });
    await expect(appender.rename({ userId, sessionId, body: enc(slot("y")), generation: 2 })).rejects.toMatchObject({
      code: "generation_mismatch",
    });
    // Another user's session is not there.
    await expect(
      appender.rename({ userId: `u-${randomUUID()}`, sessionId, body: enc(slot("y")) }),
    ).rejects.toMatchObject({
      code: "not_found",
    });
  });
});
