/**
 * The AWS search adapter: each user's index is one SQLite FTS5 file (the embedded adapter's
 * schema and statements, run by SQLite compiled to WebAssembly), kept as an immutable object
 * under `search/<user>/` in the bucket; a pointer item in the metadata table names the current
 * one. Nothing runs while nobody searches or writes: idle cost is the objects' storage.
 *
 * A change copies the current file, applies itself, uploads the copy under a new key, and
 * moves the pointer with a conditional write (the version it started from): two indexers of
 * one user never lose each other's work — the one that loses the race starts again from the
 * winner's file. A query reads the pointer (one GetItem) and the file (fetched once per key,
 * then kept on local disk).
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { type BlobStore, NotFoundError, PREFIXES, parseSearchIndexKey, searchIndexKey } from "@pisync/store";
import { type AwsConnection, awsErrorName, documentClient } from "@pisync/store/aws";
import { SqliteSearchIndex } from "../embedded.js";
import type { FileTouched, IndexBatch, IndexState, LineSource, SearchIndex, SearchPage } from "../port.js";
import type { SearchQuery } from "../query.js";
import { IndexFiles } from "./index-files.js";
import { GSI, POINTER_SK, USERS_PARTITION, userPk } from "./items.js";
import { loadWasmSqlite, WasmSqlite } from "./wasm-sqlite.js";

/** Attempts of one change when other indexers keep moving the pointer first. */
const MAX_ATTEMPTS = 8;
/** Attempts of one read when the object its pointer named was replaced meanwhile. */
const READ_ATTEMPTS = 4;
/** A file whose free pages are more than this share of it is vacuumed before it is uploaded. */
const VACUUM_FREE_SHARE = 0.25;
/**
 * Every this many versions, a publish also removes the user's objects a crash or a failed
 * pointer write left behind (an upload whose pointer never moved): one LIST now and then.
 */
const SWEEP_EVERY = 16;

export interface S3SearchIndexConfig {
  connection: AwsConnection;
  /** The metadata table (the pointer items live beside the store's items). */
  table: string;
  /** The bucket, through the store's port: index objects go under `search/`. */
  blobs: BlobStore;
  /** Reads stored lines back for snippets. */
  lines: LineSource;
  /** Where fetched index files are kept (default: a folder of this process in the temp dir). */
  cacheDir?: string;
  /** Bytes of index files kept at most (default 256 MiB). */
  cacheBytes?: number;
}

interface Pointer {
  version: number;
  key: string;
}

/** The search index of every user on S3 (files) and DynamoDB (pointers). */
export class S3SearchIndex implements SearchIndex {
  private readonly db: DynamoDBDocumentClient;
  private readonly indexFiles: IndexFiles;
  /** What a user without an index reads: an empty index in memory (made on first use). */
  private empty: SqliteSearchIndex | undefined;
  /** Per user, the end of this instance's last change (the next one starts after it). */
  private readonly changing = new Map<string, Promise<void>>();

  constructor(private readonly config: S3SearchIndexConfig) {
    this.db = documentClient(config.connection);
    const dir = config.cacheDir ?? join(tmpdir(), `pisync-search-${process.pid}-${randomBytes(4).toString("hex")}`);
    this.indexFiles = new IndexFiles(config.blobs, config.lines, dir, config.cacheBytes ?? 256 * 1024 * 1024);
  }

  /** Closes the cached files and removes them from disk. */
  close(): void {
    this.indexFiles.close();
    this.empty?.close();
    this.db.destroy();
  }

  state(userId: string, sessionId: string): Promise<IndexState | undefined> {
    return this.read(userId, (index) => index.state(userId, sessionId));
  }

  sessions(userId: string): Promise<Array<IndexState & { sessionId: string }>> {
    return this.read(userId, (index) => index.sessions(userId));
  }

  async users(): Promise<string[]> {
    const users: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.config.table,
          IndexName: GSI,
          KeyConditionExpression: "gsi1pk = :pk",
          ExpressionAttributeValues: { ":pk": USERS_PARTITION },
          ProjectionExpression: "gsi1sk",
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) users.push(item.gsi1sk as string);
      start = page.LastEvaluatedKey;
    } while (start);
    return users;
  }

  async apply(batch: IndexBatch): Promise<boolean> {
    return (await this.applyAll([batch]))[0] as boolean;
  }

  /** One new file per user the batches touch (in order within each user). */
  async applyAll(batches: readonly IndexBatch[]): Promise<boolean[]> {
    const results: boolean[] = new Array(batches.length);
    const byUser = new Map<string, number[]>();
    batches.forEach((batch, i) => {
      byUser.set(batch.userId, [...(byUser.get(batch.userId) ?? []), i]);
    });
    for (const [userId, positions] of byUser) {
      const applied = await this.change(userId, (index) => index.applyAll(positions.map((i) => batches[i])));
      positions.forEach((at, i) => {
        results[at] = applied[i] as boolean;
      });
    }
    return results;
  }

  async remove(userId: string, sessionId: string): Promise<void> {
    if ((await this.state(userId, sessionId)) === undefined) return;
    await this.change(userId, (index) => index.remove(userId, sessionId));
  }

  async clear(userId?: string): Promise<void> {
    for (const user of userId === undefined ? await this.users() : [userId]) {
      const pointer = await this.pointer(user);
      if (!pointer) continue;
      await this.db.send(
        new DeleteCommand({ TableName: this.config.table, Key: { pk: userPk(user), sk: POINTER_SK } }),
      );
      this.indexFiles.drop(pointer.key);
      await this.config.blobs.delete([pointer.key]);
    }
  }

  files(userId: string, sessionId: string, limit: number): Promise<FileTouched[]> {
    return this.read(userId, (index) => index.files(userId, sessionId, limit));
  }

  search(userId: string, query: SearchQuery, options: { limit: number; cursor?: string }): Promise<SearchPage> {
    return this.read(userId, (index) => index.search(userId, query, options));
  }

  private async pointer(userId: string): Promise<Pointer | undefined> {
    const answer = await this.db.send(
      new GetCommand({
        TableName: this.config.table,
        Key: { pk: userPk(userId), sk: POINTER_SK },
        ConsistentRead: true,
      }),
    );
    return answer.Item ? { version: answer.Item.version as number, key: answer.Item.key as string } : undefined;
  }

  /** Runs `fn` on the user's current file (an empty index when there is none). */
  private async read<T>(userId: string, fn: (index: SqliteSearchIndex) => Promise<T>): Promise<T> {
    await loadWasmSqlite();
    for (let attempt = 1; ; attempt++) {
      const pointer = await this.pointer(userId);
      if (!pointer) {
        this.empty ??= new SqliteSearchIndex(new WasmSqlite(":memory:"), this.config.lines);
        return fn(this.empty);
      }
      try {
        return await fn((await this.indexFiles.open(pointer.key)).index);
      } catch (error) {
        // Replaced between the pointer's read and the object's: read the new pointer.
        if (!(error instanceof NotFoundError) || attempt >= READ_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Applies `fn` to a copy of the user's current file and, when it changed anything, publishes
   * the copy: upload, then move the pointer if no other indexer moved it first (else again).
   * One instance changes one user's index one change at a time (its changes would only overtake
   * each other): only other instances race it.
   */
  private change<T>(userId: string, fn: (index: SqliteSearchIndex) => Promise<T>): Promise<T> {
    const result = (this.changing.get(userId) ?? Promise.resolve()).then(() => this.changeNow(userId, fn));
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.changing.set(userId, settled);
    void settled.then(() => {
      if (this.changing.get(userId) === settled) this.changing.delete(userId);
    });
    return result;
  }

  /** {@link change}, now: retried while other instances publish first. */
  private async changeNow<T>(userId: string, fn: (index: SqliteSearchIndex) => Promise<T>): Promise<T> {
    await loadWasmSqlite();
    for (let attempt = 1; ; attempt++) {
      const work = this.indexFiles.scratch();
      let outcome: { result: T } | "overtaken";
      try {
        outcome = await this.changeOnce(userId, fn, work);
      } finally {
        rmSync(work, { force: true }); // a published file was moved into the cache first
      }
      if (outcome !== "overtaken") return outcome.result;
      if (attempt >= MAX_ATTEMPTS) throw new Error(`the search index of ${userId} kept changing: gave up`);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * attempt));
    }
  }

  /** One attempt of {@link change}, building in `work`; "overtaken" when another indexer published first. */
  private async changeOnce<T>(
    userId: string,
    fn: (index: SqliteSearchIndex) => Promise<T>,
    work: string,
  ): Promise<{ result: T } | "overtaken"> {
    const pointer = await this.pointer(userId);
    if (pointer) {
      try {
        copyFileSync((await this.indexFiles.open(pointer.key)).path, work);
      } catch (error) {
        if (error instanceof NotFoundError) return "overtaken"; // replaced since the pointer was read
        throw error;
      }
    }
    const driver = new WasmSqlite(work);
    let result: T;
    let changed: boolean;
    try {
      const index = new SqliteSearchIndex(driver, this.config.lines);
      const before = driver.totalChanges(); // a new file's schema counts as changes
      result = await fn(index);
      changed = driver.totalChanges() > before;
      if (changed) compact(driver);
    } finally {
      driver.close();
    }
    if (!changed) return { result };
    const version = (pointer?.version ?? 0) + 1;
    const next: Pointer = { version, key: searchIndexKey(userId, version, randomBytes(6).toString("hex")) };
    const bytes = readFileSync(work);
    await this.config.blobs.put(next.key, bytes);
    if (!(await this.movePointer(userId, pointer, next))) {
      await this.config.blobs.delete([next.key]);
      return "overtaken";
    }
    const cached = this.indexFiles.scratch();
    renameSync(work, cached);
    this.indexFiles.adopt(next.key, cached, bytes.length);
    if (pointer) {
      // Readers holding the old pointer read it again when its object is gone.
      this.indexFiles.drop(pointer.key);
      await this.config.blobs.delete([pointer.key]);
    }
    if (version % SWEEP_EVERY === 0) await this.sweep(userId, next);
    return { result };
  }

  /**
   * Removes the user's objects of versions up to `current`'s other than it: the pointer only
   * moves forward from `current`, so none of them can ever be named again (a racing indexer's
   * upload of a later version is left alone).
   */
  private async sweep(userId: string, current: Pointer): Promise<void> {
    const keys = await this.config.blobs.list(`${PREFIXES.search}${userId}/`);
    const stale = keys.filter((key) => {
      const parsed = parseSearchIndexKey(key);
      return key !== current.key && parsed?.userId === userId && parsed.version <= current.version;
    });
    if (stale.length) await this.config.blobs.delete(stale);
  }

  /** The conditional write: false when another indexer moved the pointer since `from` was read. */
  private async movePointer(userId: string, from: Pointer | undefined, to: Pointer): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.config.table,
          Item: {
            pk: userPk(userId),
            sk: POINTER_SK,
            ...to,
            gsi1pk: USERS_PARTITION,
            gsi1sk: userId,
          },
          ConditionExpression: from ? "version = :version" : "attribute_not_exists(pk)",
          ExpressionAttributeValues: from ? { ":version": from.version } : undefined,
        }),
      );
      return true;
    } catch (error) {
      if (awsErrorName(error) === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }
}

/** Gives a file's free pages back when deletions left many (a rewritten session, a removed one). */
function compact(driver: WasmSqlite): void {
  const [free] = driver.pragma("freelist_count") as Array<{ freelist_count: number }>;
  const [pages] = driver.pragma("page_count") as Array<{ page_count: number }>;
  if (free && pages && free.freelist_count > pages.page_count * VACUUM_FREE_SHARE) driver.exec("VACUUM");
}
