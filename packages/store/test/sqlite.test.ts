/**
 * `openSqlite` behaves as better-sqlite3 does, whichever binding this Node uses: the embedded
 * store and search rely on these rules. `npm test` runs it on the default binding of the
 * Node running it, and `builtin-sqlite.test.ts` again on node:sqlite under Node 22.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite, type SqliteDatabase, sqliteEngine } from "@pisync/store/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { classifyLocalError } from "../src/embedded/classify.js";
import { StorageUnavailableError } from "../src/errors.js";

/** What `work` throws (undefined when it does not). */
function thrown(work: () => unknown): { code?: string } | undefined {
  try {
    work();
  } catch (error) {
    return error as { code?: string };
  }
  return undefined;
}

describe(`openSqlite (${sqliteEngine()})`, () => {
  let dir: string;
  let db: SqliteDatabase;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "pisync-sqlite-"));
    db = openSqlite(join(dir, "t.sqlite"));
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("binds positional and named parameters; an unnamed key is ignored and undefined is NULL", () => {
    const put = db.prepare("INSERT INTO t (k, v) VALUES (@k, @v)");
    expect(put.run({ k: "a", v: 1, unused: "x" })).toEqual({ changes: 1, lastInsertRowid: 1 });
    put.run({ k: "b", v: undefined });
    expect(db.prepare("SELECT k, v FROM t ORDER BY k").all()).toEqual([
      { k: "a", v: 1 },
      { k: "b", v: null },
    ]);
    expect(db.prepare("SELECT v FROM t WHERE k = ?").get("a")).toEqual({ v: 1 });
    expect(db.prepare("SELECT v FROM t WHERE k = ?").get("zz")).toBeUndefined();
  });

  it("plucks the first column; a pragma answers rows, or one value when simple", () => {
    db.prepare("INSERT INTO t VALUES ('a', 7), ('b', 8)").run();
    expect(db.prepare("SELECT v, k FROM t ORDER BY k").pluck().all()).toEqual([7, 8]);
    expect(db.prepare("SELECT v FROM t WHERE k = 'b'").pluck().get()).toBe(8);
    expect(db.pragma("journal_mode")).toEqual([{ journal_mode: "wal" }]);
    expect(db.pragma("user_version", { simple: true })).toBe(0);
  });

  it("commits a transaction, rolls back one that throws, and nests as a savepoint", () => {
    const put = db.prepare("INSERT INTO t VALUES (?, ?)");
    const inner = db.transaction((k: string) => {
      put.run(k, 1);
      throw new Error("inner fails");
    });
    const outer = db.transaction(() => {
      put.run("kept", 1);
      expect(() => inner("undone")).toThrow("inner fails");
      return "done";
    });
    expect(outer()).toBe("done");
    expect(db.transaction(() => put.run("immediate", 2)).immediate().changes).toBe(1);
    expect(() =>
      db.transaction(() => {
        put.run("gone", 3);
        throw new Error("outer fails");
      })(),
    ).toThrow("outer fails");
    expect(db.prepare("SELECT k FROM t ORDER BY k").pluck().all()).toEqual(["immediate", "kept"]);
    // A transaction begun by hand is joined as a savepoint, as better-sqlite3 does.
    db.exec("BEGIN");
    db.transaction(() => put.run("by hand", 4))();
    db.exec("ROLLBACK");
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(2);
  });

  it("a SQL function's throw fails its statement with that very error", () => {
    const mine = new Error("past the deadline");
    db.function("stop_here", (_x: never) => {
      throw mine;
    });
    expect(thrown(() => db.prepare("SELECT stop_here(1)").get())).toBe(mine);
  });

  it("names SQLite's errors as better-sqlite3 does: a busy database is the storage's outage", () => {
    db.prepare("INSERT INTO t VALUES ('a', 1)").run();
    const duplicate = thrown(() => db.prepare("INSERT INTO t VALUES ('a', 2)").run());
    expect(duplicate?.code).toMatch(/^SQLITE_CONSTRAINT/);
    // Another connection holds the write lock; this one does not wait.
    const other = openSqlite(join(dir, "t.sqlite"));
    try {
      other.pragma("busy_timeout = 0");
      db.exec("BEGIN IMMEDIATE");
      const busy = thrown(() => other.prepare("INSERT INTO t VALUES ('b', 1)").run());
      db.exec("ROLLBACK");
      expect(busy?.code).toBe("SQLITE_BUSY");
      expect(classifyLocalError(busy)).toBeInstanceOf(StorageUnavailableError);
      // A transaction that read, then writes after another connection committed: busy too.
      other.exec("BEGIN");
      other.prepare("SELECT count(*) FROM t").get();
      db.prepare("INSERT INTO t VALUES ('c', 1)").run();
      const stale = thrown(() => other.prepare("INSERT INTO t VALUES ('d', 1)").run());
      other.exec("ROLLBACK");
      expect(stale?.code).toBe("SQLITE_BUSY_SNAPSHOT");
      expect(classifyLocalError(stale)).toBeInstanceOf(StorageUnavailableError);
    } finally {
      other.close();
    }
  });
});
