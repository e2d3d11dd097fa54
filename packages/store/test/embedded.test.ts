import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { embeddedStores } from "../src/embedded/index.js";
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
