/**
 * The check and the sweep on both store pairs: a clean store is clean; orphans, abandoned
 * uploads and stale temporary files are found and (old enough) removed; a head that went back
 * one commit is rolled forward from its stored bytes; a head naming a missing object is reported
 * and stays wrong; an object sized other than its range, a miscounted head, an index page that is
 * not the bytes' lines and a head ending inside a line are reported.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type Stores, segmentKey, uploadKey } from "@pisync/store";
import { embeddedStores, FileBlobStore } from "@pisync/store/embedded";
import { describeOnEveryStore, line, sessionHeader, userLine } from "@pisync/testing";
import { expect, it } from "vitest";
import { Appender } from "../src/append.js";
import { MAX_SEGMENTS, readRange } from "../src/segments.js";
import { type VerifyOptions, verifyStores } from "../src/verify.js";

const enc = (text: string) => new TextEncoder().encode(text);

/** A session of a header and `lines` user lines, one append each; its bytes. */
async function writeSession(stores: Stores, userId: string, sessionId: string, lines: number): Promise<string> {
  const appender = new Appender(stores);
  let text = line(sessionHeader(sessionId));
  await appender.append({ userId, sessionId, offset: 0, body: enc(text) });
  for (let n = 1; n <= lines; n++) {
    const next = userLine(`e${n}`, n === 1 ? null : `e${n - 1}`, n % 60, `line ${n}`);
    await appender.append({ userId, sessionId, offset: text.length, body: enc(next) });
    text += next;
  }
  return text;
}

/** The committed bytes of a session's current generation. */
async function committed(stores: Stores, userId: string, sessionId: string): Promise<string> {
  const head = await stores.meta.getHead(userId, sessionId);
  if (!head) return "";
  return new TextDecoder().decode(await readRange(stores.blobs, head.current.segments, 0, head.current.length));
}

const kinds = (report: { findings: { kind: string }[] }) => report.findings.map((f) => f.kind).sort();

describeOnEveryStore("verify", (pair, name) => {
  const verify = (userId: string, options: VerifyOptions = {}) =>
    verifyStores(pair().stores, { userId, deep: true, ...options });

  if (name === "aws") {
    it("finds sessions missing from the library's list (heads from before it was kept); repair lists them", async () => {
      const { stores } = pair();
      const user = `u-${randomUUID()}`;
      await writeSession(stores, user, "old", 1);
      await writeSession(stores, user, "new", 1);
      // As a head written before the list was kept: its list entry is not there.
      const raw = stores.meta as unknown as { client: DynamoDBDocumentClient; table: string };
      await raw.client.send(new DeleteCommand({ TableName: raw.table, Key: { pk: `U#${user}`, sk: "C#old" } }));
      const listed = async () => (await stores.meta.listCardPage(user, { limit: 10 })).cards.map((c) => c.sessionId);
      expect(await listed()).toEqual(["new"]);
      const checked = await verify(user);
      expect(checked.findings).toEqual([expect.objectContaining({ kind: "unlisted", problem: true, repaired: false })]);
      expect(checked.wrong).toBe(1);
      expect(await listed()).toEqual(["new"]);
      const repaired = await verify(user, { repair: true });
      expect(repaired.findings).toEqual([expect.objectContaining({ kind: "unlisted", repaired: true })]);
      expect((await listed()).sort()).toEqual(["new", "old"]);
      expect((await verify(user)).findings).toEqual([]);
    });

    it("finds sessions missing from the folder and model filters' index, or left in a stale one; repair mends both", async () => {
      const { stores } = pair();
      const user = `u-${randomUUID()}`;
      await writeSession(stores, user, "old", 1);
      await writeSession(stores, user, "new", 1);
      const [card] = await stores.meta.getCards(user, ["old"]);
      expect(card.cwd).toBeTruthy();
      // As a session written before the filter entries were kept: none are there.
      const raw = stores.meta as unknown as { client: DynamoDBDocumentClient; table: string };
      const entries = await raw.client.send(
        new QueryCommand({
          TableName: raw.table,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :k)",
          ExpressionAttributeValues: { ":pk": `U#${user}`, ":k": "K#" },
        }),
      );
      const olds = (entries.Items ?? []).filter((item) => String(item.sk).startsWith("K#old#"));
      expect(olds.length).toBeGreaterThan(0);
      for (const item of olds) {
        await raw.client.send(new DeleteCommand({ TableName: raw.table, Key: { pk: item.pk, sk: item.sk } }));
      }
      // And one of "new" under a folder it left: its key the card no longer has.
      const kept = (entries.Items ?? []).find((item) => String(item.sk).startsWith("K#new#"));
      await raw.client.send(
        new PutCommand({ TableName: raw.table, Item: { ...kept, sk: "K#new#stale", gsi1pk: `UK#${user}#stale` } }),
      );
      const filtered = async () =>
        (await stores.meta.listCardPage(user, { limit: 10, filter: { cwd: card.cwd } })).cards.map((c) => c.sessionId);
      expect(await filtered()).toEqual(["new"]);
      const checked = await verify(user);
      expect(checked.findings).toEqual([expect.objectContaining({ kind: "unlisted", problem: true, repaired: false })]);
      expect(checked.findings[0].message).toMatch(/^2 sessions/);
      const repaired = await verify(user, { repair: true });
      expect(repaired.findings).toEqual([expect.objectContaining({ kind: "unlisted", repaired: true })]);
      expect((await filtered()).sort()).toEqual(["new", "old"]);
      expect((await verify(user)).findings).toEqual([]);
    });
  }

  it("finds nothing wrong in a store written through the append rules (merges and a new generation included), once the sweep has passed", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    const long = await writeSession(stores, user, "long", MAX_SEGMENTS + 3);
    const text = await writeSession(stores, user, "replaced", 2);
    await new Appender(stores).append({
      userId: user,
      sessionId: "replaced",
      offset: 0,
      body: enc(text),
      replace: true,
    });
    // Merges leave the segments they replaced to the sweep (a reader or a retry may still hold
    // the old list): young, they are not wrong.
    const young = await verify(user);
    expect(young.findings).toEqual([]);
    expect(young.wrong).toBe(0);
    expect(young.sessions).toBe(2);
    // Swept as soon as they count as old: only merged-away segments go, and the store is clean.
    const swept = await verify(user, { minAgeMs: 0, repair: true });
    expect(swept.findings.length).toBeGreaterThan(0);
    expect(swept.findings.every((f) => f.kind === "orphan" && f.repaired)).toBe(true);
    const after = await verify(user, { minAgeMs: 0 });
    expect(after.findings).toEqual([]);
    expect(after.wrong).toBe(0);
    expect(await committed(stores, user, "long")).toBe(long);
  });

  it("finds an orphan segment and an abandoned upload; removes them with repair once old enough", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    await writeSession(stores, user, "s", 1);
    const orphan = segmentKey(user, "s", 1, 0, 4, "0rphan");
    const upload = uploadKey(user, randomUUID().replaceAll("-", ""));
    await stores.blobs.put(orphan, enc("abc\n"));
    await stores.blobs.put(upload, enc("big line\n"));
    // Younger than the minimum age: they may belong to a request still running.
    const young = await verify(user, { repair: true });
    expect(young.findings).toEqual([]);
    expect(young.young).toBe(2);
    expect((await stores.blobs.list(`uploads/${user}/`)).length).toBe(1);

    const found = await verify(user, { minAgeMs: 0 });
    expect(kinds(found)).toEqual(["abandoned-upload", "orphan"]);
    expect(found.wrong).toBe(2);
    expect(found.findings.map((f) => f.key).sort()).toEqual([orphan, upload].sort());

    const repaired = await verify(user, { minAgeMs: 0, repair: true });
    expect(repaired.findings.every((f) => f.repaired)).toBe(true);
    expect(repaired.wrong).toBe(0);
    expect(await stores.blobs.list(`uploads/${user}/`)).toEqual([]);
    expect((await stores.blobs.list(`sessions/${user}/`)).includes(orphan)).toBe(false);
    expect(await committed(stores, user, "s")).toContain("line 1");
    expect((await verify(user, { minAgeMs: 0 })).findings).toEqual([]);
  });

  it("the scheduled sweep (no deep read, default age) keeps an orphan younger than an hour and removes it once older", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    const text = await writeSession(stores, user, "s", 1);
    const orphan = segmentKey(user, "s", 1, 0, 4, "0rphan");
    await stores.blobs.put(orphan, enc("abc\n"));
    // This user's objects only: the test servers' bucket is shared by every test file, and a
    // sweep two hours ahead would remove other files' objects still being written.
    const sweep = (now?: () => Date) => verifyStores(stores, { userId: user, repair: true, ...(now ? { now } : {}) });
    const young = await sweep();
    const stored = async () => (await stores.blobs.list(`sessions/${user}/`)).includes(orphan);
    expect(young.young).toBe(1);
    expect(await stored()).toBe(true);
    const later = await sweep(() => new Date(Date.now() + 2 * 3600_000));
    expect(later.findings).toMatchObject([{ kind: "orphan", key: orphan, repaired: true }]);
    expect(await stored()).toBe(false);
    expect(await committed(stores, user, "s")).toBe(text);
  });

  it("rolls a head that went back one commit forward from its stored segment, bytes exact", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    await writeSession(stores, user, "s", 2);
    const before = await stores.meta.getHead(user, "s");
    const last = userLine("e3", "e2", 3, "the acknowledged line");
    const whole = (await committed(stores, user, "s")) + last;
    await new Appender(stores).append({
      userId: user,
      sessionId: "s",
      offset: before?.current.length as number,
      body: enc(last),
    });
    // The store loses the last commit's record: the old head is written back, its segment stays.
    const after = await stores.meta.getHead(user, "s");
    if (!before || !after) throw new Error("no head");
    await stores.meta.commit({ head: { ...before, revision: after.revision + 1 }, expectedRevision: after.revision });
    expect(await committed(stores, user, "s")).not.toContain("the acknowledged line");

    const found = await verify(user, { minAgeMs: 0 });
    expect(kinds(found)).toContain("head-behind");
    expect(found.wrong).toBeGreaterThan(0);
    expect(await committed(stores, user, "s")).not.toContain("the acknowledged line");

    const repaired = await verify(user, { minAgeMs: 0, repair: true });
    expect(repaired.findings.find((f) => f.kind === "head-behind")?.repaired).toBe(true);
    expect(repaired.wrong).toBe(0);
    expect(await committed(stores, user, "s")).toBe(whole);
    expect((await stores.meta.getHead(user, "s"))?.current.lines).toBe(4);
    expect((await verify(user, { minAgeMs: 0 })).findings).toEqual([]);
  });

  it("does not roll forward from two different segments at the head's end", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    const text = await writeSession(stores, user, "s", 1);
    await stores.blobs.put(segmentKey(user, "s", 1, text.length, text.length + 4, "a"), enc("aaa\n"));
    await stores.blobs.put(segmentKey(user, "s", 1, text.length, text.length + 6, "b"), enc("bbbbb\n"));
    const report = await verify(user, { minAgeMs: 0, repair: true });
    expect(kinds(report)).toEqual(["head-behind", "orphan", "orphan"]);
    expect(report.findings.find((f) => f.kind === "head-behind")?.repaired).toBe(false);
    expect(await committed(stores, user, "s")).toBe(text);
  });

  it("reports a segment whose object holds more bytes than its range, and stays wrong after repair", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    const text = await writeSession(stores, user, "s", 1);
    const head = await stores.meta.getHead(user, "s");
    const last = head?.current.segments.at(-1);
    if (!last) throw new Error("no segment");
    // The object under the segment's key was overwritten with a longer body.
    await stores.blobs.put(last.key, enc(`${text.slice(last.start, last.end)}more\n`));
    const report = await verify(user, { minAgeMs: 0, repair: true });
    expect(report.findings).toMatchObject([{ kind: "size-mismatch", key: last.key, problem: true, repaired: false }]);
    expect(report.wrong).toBe(1);
  });

  it("reports lines the head miscounts, an index page that is not the bytes' lines, and a head ending inside a line", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    const text = await writeSession(stores, user, "s", 2);
    const head = await stores.meta.getHead(user, "s");
    if (!head) throw new Error("no head");
    const pages = await stores.meta.getPages(user, "s", 1);
    const record = pages[0]?.records[0];
    if (!record) throw new Error("no index record");
    // Three bytes of a line with no end, named by the head; a line count one too many; a page
    // inside another that puts a line one byte from where it is.
    const at = record.offset + 1;
    const tail = segmentKey(user, "s", 1, text.length, text.length + 3, "tail");
    await stores.blobs.put(tail, enc('{"a'));
    const { length, lines, segments } = head.current;
    await stores.meta.commit({
      head: {
        ...head,
        revision: head.revision + 1,
        current: {
          ...head.current,
          length: length + 3,
          lines: lines + 1,
          segments: [...segments, { key: tail, start: length, end: length + 3 }],
        },
      },
      expectedRevision: head.revision,
      pages: [
        { generation: 1, start: at, end: at + 1, records: [{ ...record, offset: at }], problems: [], previews: {} },
      ],
    });
    const report = await verify(user, { minAgeMs: 0, repair: true });
    expect(kinds(report)).toEqual(["bad-page", "bad-page", "line-count", "partial-line"]);
    expect(report.findings.every((f) => f.problem && !f.repaired)).toBe(true);
    expect(report.wrong).toBe(4);
  });

  it("reports a head naming a missing object, and stays wrong after repair", async () => {
    const { stores } = pair();
    const user = `u-${randomUUID()}`;
    await writeSession(stores, user, "s", 1);
    const head = await stores.meta.getHead(user, "s");
    const lost = head?.current.segments[0]?.key as string;
    await stores.blobs.delete([lost]);
    const report = await verify(user, { minAgeMs: 0, repair: true });
    expect(report.findings).toMatchObject([{ kind: "missing-object", key: lost, problem: true, repaired: false }]);
    expect(report.wrong).toBe(1);
  });
});

it("removes the embedded store's stale temporary files, and only those", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pisync-verify-"));
  const stores = embeddedStores(dir);
  try {
    const user = `u-${randomUUID()}`;
    await writeSession(stores, user, "s", 1);
    const head = await stores.meta.getHead(user, "s");
    const temp = join(dir, "blobs", `${head?.current.segments[0]?.key}.0123456789ab.tmp`);
    writeFileSync(temp, "half a write");
    const hourAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(temp, hourAgo, hourAgo);
    const temporary = new FileBlobStore(join(dir, "blobs"));
    const found = await verifyStores(stores, { deep: true, temporary });
    expect(found.findings).toMatchObject([{ kind: "temp-file", repaired: false }]);
    expect(found.wrong).toBe(1);
    const repaired = await verifyStores(stores, { deep: true, temporary, repair: true });
    expect(repaired.wrong).toBe(0);
    expect(await temporary.listTemporary()).toEqual([]);
    expect(await committed(stores, user, "s")).toContain("line 1");
    expect((await verifyStores(stores, { deep: true, temporary })).findings).toEqual([]);
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
