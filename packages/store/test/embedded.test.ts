import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "@pisync/store/sqlite";
import { fullDisk } from "@pisync/testing";
import { afterAll, describe, expect, it } from "vitest";
import { embeddedStores, STALE_TEMP_MS } from "../src/embedded/index.js";
import { type CardFilter, NotFoundError, type SessionHead, StorageFullError, type UsageRow } from "../src/index.js";
import { describeStoreContract, head } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-embedded-"));
const stores = embeddedStores(dir);
afterAll(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describeStoreContract("embedded (files + SQLite)", async () => stores);

describe("embedded session cards", () => {
  it("a second process's writes show in the cards the first one lists; an older file gains its columns", async () => {
    const data = mkdtempSync(join(tmpdir(), "pisync-cards-"));
    const first = embeddedStores(data);
    const second = embeddedStores(data);
    try {
      await first.meta.commit({ head: head("u", "a", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      expect((await first.meta.listCards("u")).map((c) => c.sessionId)).toEqual(["a"]);
      await second.meta.commit({ head: head("u", "b", 1, "2026-01-02T00:00:00.000Z"), expectedRevision: null });
      expect((await first.meta.listCards("u")).map((c) => c.sessionId).sort()).toEqual(["a", "b"]);
      await second.meta.deleteSession("u", "a", "2026-01-03T00:00:00.000Z");
      expect((await first.meta.listCards("u")).map((c) => c.sessionId)).toEqual(["b"]);
      // Its own writes keep what it read in step.
      await first.meta.commit({ head: head("u", "b", 2, "2026-01-04T00:00:00.000Z"), expectedRevision: 1 });
      expect(await first.meta.listCards("u")).toMatchObject([
        { sessionId: "b", entries: 2, lastAt: "2026-01-04T00:00:00.000Z" },
      ]);
    } finally {
      first.close();
      second.close();
    }
    // Reopening a file (as after an upgrade) keeps everything and adds no column twice.
    const again = embeddedStores(data);
    expect((await again.meta.listCards("u")).map((c) => c.sessionId)).toEqual(["b"]);
    again.close();
    rmSync(data, { recursive: true, force: true });
  });
});

describe("embedded list index", () => {
  it("a file from before the list's column gains it when opened, and lists its sessions in order", async () => {
    const data = mkdtempSync(join(tmpdir(), "pisync-list-"));
    const old = embeddedStores(data);
    for (const [id, at] of [
      ["a", "2026-01-02T00:00:00.000Z"],
      ["b", "2026-01-03T00:00:00.000Z"],
      ["c", "2026-01-01T00:00:00.000Z"],
    ]) {
      await old.meta.commit({ head: head("u", id, 1, at), expectedRevision: null });
    }
    old.close();
    // As the file was before: no column, no index.
    const db = openSqlite(join(data, "meta.sqlite"));
    db.exec("DROP INDEX heads_by_last; ALTER TABLE heads DROP COLUMN last_at;");
    db.close();
    const again = embeddedStores(data);
    try {
      const page = await again.meta.listCardPage("u", { limit: 2 });
      expect(page.cards.map((c) => c.sessionId)).toEqual(["b", "a"]);
      const rest = await again.meta.listCardPage("u", { limit: 2, cursor: page.cursor });
      expect(rest).toMatchObject({ cards: [{ sessionId: "c" }] });
      expect(rest.cursor).toBeUndefined();
    } finally {
      again.close();
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe("embedded usage by day", () => {
  it("a file from before usage was kept by day gains it when opened: every head's days", async () => {
    const data = mkdtempSync(join(tmpdir(), "pisync-usage-"));
    const old = embeddedStores(data);
    const withUsage = (id: string, day: string): SessionHead => {
      const h = head("u", id, 1, "2026-01-01T00:00:00.000Z");
      const row: UsageRow = [day, "m/x", "dev", 1, 2, 0, 0, 0.5, 10, 1];
      return { ...h, summary: { ...h.summary, cwd: "/w", usage: { rows: [row], tools: [] } } };
    };
    await old.meta.commit({ head: withUsage("a", "2025-01-01"), expectedRevision: null });
    await old.meta.commit({ head: withUsage("b", "2025-02-01"), expectedRevision: null });
    old.close();
    // As the file was before: no table of days.
    const db = openSqlite(join(data, "meta.sqlite"));
    db.exec("DROP TABLE usage_days;");
    db.close();
    const again = embeddedStores(data);
    try {
      const usage = await again.meta.listUsage("u", { from: "2025-01-01", to: "2025-01-31" });
      expect(usage).toEqual({
        sessions: [
          { sessionId: "a", cwd: "/w", rows: [["2025-01-01", "m/x", "dev", 1, 2, 0, 0, 0.5, 10, 1]], tools: [] },
        ],
        uncounted: 0,
      });
    } finally {
      again.close();
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe("embedded filter index", () => {
  it("a file from before the filter index gains it when opened, and its folder and model pages find every session", async () => {
    const data = mkdtempSync(join(tmpdir(), "pisync-keys-"));
    const old = embeddedStores(data);
    for (const [id, at, cwd] of [
      ["a", "2026-01-02T00:00:00.000Z", "/w/x"],
      ["b", "2026-01-03T00:00:00.000Z", "/v"],
      ["c", "2026-01-01T00:00:00.000Z", "/w"],
    ]) {
      const h = head("u", id, 1, at);
      await old.meta.commit({
        head: { ...h, summary: { ...h.summary, cwd, models: ["p/m"] } },
        expectedRevision: null,
      });
    }
    old.close();
    // As the file was before: no filter table.
    const db = openSqlite(join(data, "meta.sqlite"));
    db.exec("DROP TABLE card_keys;");
    db.close();
    const again = embeddedStores(data);
    try {
      const ids = async (filter: CardFilter) =>
        (await again.meta.listCardPage("u", { limit: 10, filter })).cards.map((c) => c.sessionId);
      expect(await ids({ cwd: "/w" })).toEqual(["a", "c"]);
      expect(await ids({ model: "m" })).toEqual(["b", "a", "c"]);
    } finally {
      again.close();
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe("embedded store files", () => {
  it("are readable by their owner only: 0700 folders, 0600 files, whatever the umask", async () => {
    const data = join(mkdtempSync(join(tmpdir(), "pisync-modes-")), "data");
    const previous = process.umask(0o000); // the loosest umask: the modes must not depend on it
    try {
      const own = embeddedStores(data);
      await own.blobs.put("u/s/seg-1", new TextEncoder().encode("line\n"));
      await own.meta.putShare({
        id: "x",
        userId: "u",
        sessionId: "s",
        createdAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2099-01-01T00:00:00.000Z",
        maskSecrets: true,
      });
      const modes: [string, string, boolean][] = [];
      const walk = (path: string) => {
        const stat = statSync(path);
        modes.push([path, (stat.mode & 0o777).toString(8), stat.isDirectory()]);
        if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
      };
      walk(data);
      own.close();
      expect(modes.map(([path]) => path.slice(data.length))).toEqual(
        expect.arrayContaining(["", "/blobs", "/blobs/u/s", "/blobs/u/s/seg-1", "/meta.sqlite", "/meta.sqlite-wal"]),
      );
      for (const [path, mode, isDirectory] of modes) expect(mode, path).toBe(isDirectory ? "700" : "600");
    } finally {
      process.umask(previous);
      rmSync(join(data, ".."), { recursive: true, force: true });
    }
  });
});

describe("embedded store on a full disk, and the temp files a crash leaves", () => {
  it("a blob write with no room is StorageFullError; its temp file is gone and no object is left", async () => {
    const disk = await fullDisk(mkdtempSync(join(tmpdir(), "pisync-disk-")));
    const own = embeddedStores(disk.dir);
    try {
      await own.blobs.put("u/s/small", new TextEncoder().encode("fits\n"));
      await disk.fill();
      const error = await own.blobs.put("u/s/big", new Uint8Array(256 * 1024).fill(0x62)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageFullError);
      expect((error as Error).message).toMatch(/full/);
      const files = readdirSync(join(disk.dir, "blobs"), { recursive: true, encoding: "utf8" });
      expect(files.filter((name) => name.endsWith(".tmp"))).toEqual([]);
      await expect(own.blobs.get("u/s/big")).rejects.toBeInstanceOf(NotFoundError);
      expect(new TextDecoder().decode(await own.blobs.get("u/s/small"))).toBe("fits\n");
      await disk.free();
      await own.blobs.put("u/s/big", new Uint8Array(256 * 1024).fill(0x62));
      expect((await own.blobs.get("u/s/big")).length).toBe(256 * 1024);
    } finally {
      own.close();
      await disk.close();
    }
  }, 60_000);

  it("a commit with no room in the database is StorageFullError and changes nothing (a real disk only)", async (context) => {
    const disk = await fullDisk(mkdtempSync(join(tmpdir(), "pisync-disk-")));
    const own = embeddedStores(disk.dir);
    try {
      if (!disk.real) context.skip(); // SQLite writes natively: only a real full disk can refuse it
      await own.meta.commit({ head: head("u", "a", 1, "2026-01-01T00:00:00.000Z"), expectedRevision: null });
      await disk.fill();
      const big = {
        ...head("u", "a", 2, "2026-01-02T00:00:00.000Z"),
        summary: { ...head("u", "a", 2, "x").summary, name: "n".repeat(2_000_000) },
      };
      const error = await own.meta.commit({ head: big, expectedRevision: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageFullError);
      expect((await own.meta.getHead("u", "a"))?.revision).toBe(1);
    } finally {
      own.close();
      await disk.close();
    }
  }, 60_000);

  it("opening the store removes temp files older than a few minutes, and leaves younger ones (a write in progress)", () => {
    const data = mkdtempSync(join(tmpdir(), "pisync-temps-"));
    try {
      embeddedStores(data).close();
      const folder = join(data, "blobs", "u", "s");
      mkdirSync(folder, { recursive: true });
      const old = join(folder, "seg.0123456789ab.tmp");
      const young = join(folder, "seg.ba9876543210.tmp");
      const kept = join(folder, "seg");
      for (const path of [old, young, kept]) writeFileSync(path, "partial");
      const then = new Date(Date.now() - STALE_TEMP_MS - 60_000);
      utimesSync(old, then, then);
      utimesSync(kept, then, then);
      embeddedStores(data).close();
      expect(existsSync(old)).toBe(false);
      expect(existsSync(young)).toBe(true);
      expect(existsSync(kept)).toBe(true);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
