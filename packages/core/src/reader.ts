/**
 * Reading sessions back: metadata, the list, raw bytes, the tree, and the context pi would
 * send, rebuilt from the stored index pages and only the bytes of the entries it needs.
 */
import {
  type AgentMessage,
  applyEdit,
  buildSessionContext,
  contextSettings,
  decodeUtf8,
  type LineRecord,
  labelsOf,
  messagesOfEntry,
  migrateEntry,
  type Problem,
  recordsForContext,
  type SessionContext,
  SessionIndex,
} from "@pisync/format";
import { bounded, FIELD_LIMITS } from "@pisync/protocol";
import type { GenerationState, SessionHead, Stores, TokenRecord } from "@pisync/store";
import { namedBlobs, releaseBlobs } from "./blob-release.js";
import { boundedNode } from "./bounds.js";
import { BadRequest, NotFound } from "./errors.js";
import { type BuiltIndex, IndexCache } from "./index-cache.js";
import { previewOf } from "./ingest.js";
import { checkSessionId } from "./keys.js";
import { Lru } from "./lru.js";
import {
  type Found,
  mergePages,
  ownerOf,
  PERSIST_MIN_LINES,
  PersistedIndexes,
  worthPersisting,
} from "./persisted-index.js";
import { rangesToRead } from "./read-plan.js";
import { readRange, withFreshHead } from "./segments.js";
import { type SessionView, type TreeNode, viewOf } from "./views.js";
import { writersView } from "./writers.js";

/** Lets the event loop turn: other requests run between the long steps of a large read. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Indexes of more records than this let the event loop turn before they are walked. */
const YIELD_AFTER_RECORDS = 50_000;

/** What a batched read holds at once. */
const BATCH_BYTES = 4 * 1024 * 1024;

/** Ranged GETs one read may cost at most. */
const MAX_READS = 10;

/**
 * Ranged GETs a read of a few scattered lines (a share's branch tips) may cost: one each, rather
 * than ranges merged across the megabytes between them.
 */
const MAX_SCATTERED_READS = 64;

/** The pages of a generation read so far, up to `length` bytes. */
interface KnownPages {
  length: number;
  records: LineRecord[];
  problems: Problem[];
  previews: Record<number, string>;
}

/** What a reader keeps in memory between requests. */
export interface ReaderCacheLimits {
  /** Generations whose index pages are kept (so a session read again costs only what was appended)... */
  pageGenerations: number;
  /** ...holding this many line records at most in all (a few hundred bytes each). */
  pageRecords: number;
  /** Generations whose built index is kept (one per generation: its latest length)... */
  indexGenerations: number;
  /** ...holding this many records at most in all: a million-line session fits, built once. */
  indexRecords: number;
}

/**
 * The defaults, for a process that serves one request at a time in 1 GB (Lambda): about 150 MB
 * of pages and as much of built indexes at most. The one-machine server keeps more.
 */
export const DEFAULT_READER_CACHE: ReaderCacheLimits = {
  pageGenerations: 16,
  pageRecords: 400_000,
  indexGenerations: 4,
  indexRecords: 400_000,
};

/** What a session's delete removed (`DELETE /v1/sessions/:id` answers it when asked). */
export interface DeleteReceipt {
  id: string;
  /** Generations removed: the current one and every archived one. */
  generations: number;
  /** Their bytes, together. */
  bytes: number;
  /** Stored objects removed (segments and persisted indexes). */
  objects: number;
  /** Share links of the session revoked (their ids); expired or revoked ones were dead already. */
  sharesRevoked: string[];
  /** Blobs (images) it named that no other session of the user names, removed with it (see `releaseBlobs`). */
  blobs: number;
}

/**
 * The read side of sessions over the storage ports: heads and lists, raw bytes, the tree
 * index (kept per version, see {@link IndexCache}), batched and planned line reads, and the
 * context pi would send.
 */
export class Reader {
  private readonly pages: Lru<KnownPages>;
  private readonly loading = new Map<string, { length: number; pages: Promise<KnownPages> }>();
  private readonly indexes: IndexCache;
  private readonly persisted: PersistedIndexes;
  /** Persisted indexes being written, by generation. */
  private readonly persisting = new Map<string, Promise<void>>();

  constructor(
    private readonly stores: Stores,
    limits: Partial<ReaderCacheLimits> = {},
  ) {
    const l = { ...DEFAULT_READER_CACHE, ...limits };
    this.pages = new Lru(l.pageGenerations, l.pageRecords, (known) => known.records.length);
    this.indexes = new IndexCache(l.indexGenerations, l.indexRecords);
    this.persisted = new PersistedIndexes(stores);
  }

  async head(userId: string, sessionId: string): Promise<SessionHead> {
    const head = await this.stores.meta.getHead(userId, checkSessionId(sessionId));
    if (!head) throw new NotFound("no such session");
    return head;
  }

  /**
   * A page of the user's sessions, newest first. With `ownerTokens` (the user's own tokens,
   * asked for once and only when a session kept who wrote it), each names its `machines`.
   */
  async list(
    userId: string,
    options: { limit: number; cursor?: string },
    ownerTokens?: () => Promise<readonly TokenRecord[]>,
  ) {
    const { heads, cursor } = await this.stores.meta.listHeads(userId, options);
    let tokens: readonly TokenRecord[] | undefined;
    const sessions: (SessionView & { machines?: string[] })[] = [];
    for (const head of heads) {
      const runs = head.current.writers;
      if (!ownerTokens || !runs?.length) {
        sessions.push(viewOf(head));
        continue;
      }
      tokens ??= await ownerTokens();
      const machines = [...new Set((writersView(runs, tokens) ?? []).map((run) => run.device))];
      sessions.push({ ...viewOf(head), machines });
    }
    return { sessions, cursor };
  }

  /** A generation's state: the current one, or an archived one by number. */
  async generationState(userId: string, sessionId: string, generation?: number) {
    const head = await this.head(userId, sessionId);
    if (generation === undefined || generation === head.current.generation) return { head, state: head.current };
    const archived = (await this.stores.meta.getArchived(userId, sessionId)).find((g) => g.generation === generation);
    if (!archived) throw new NotFound(`no generation ${generation}`);
    return { head, state: archived };
  }

  async generations(userId: string, sessionId: string): Promise<GenerationState[]> {
    const head = await this.head(userId, sessionId);
    const archived = await this.stores.meta.getArchived(userId, sessionId);
    return [...archived, head.current]
      .map((g) => ({ ...g, segments: [] }))
      .map(({ segments: _, ...g }) => g as GenerationState);
  }

  /** Bytes [start, end) of a generation (the whole of it by default). */
  async raw(userId: string, sessionId: string, options: { generation?: number; start?: number; end?: number } = {}) {
    const load = async () => (await this.generationState(userId, sessionId, options.generation)).state;
    let total = 0;
    const bytes = await withFreshHead(
      async () => ({ current: await load() }) as SessionHead,
      async ({ current }) => {
        total = current.length;
        const start = Math.min(options.start ?? 0, total);
        const end = Math.min(options.end ?? total, total);
        if (end < start) throw new BadRequest("the range ends before it starts");
        return readRange(this.stores.blobs, current.segments, start, end);
      },
    );
    return { bytes, total };
  }

  /**
   * The tree index of a generation, rebuilt from its pages. A version's index is built once and
   * kept (each caller gets its own view: entries it loads stay its own); pages already read are
   * kept too (a generation only grows), so a session that grew costs only the pages appended since.
   */
  async index(head: SessionHead, state: GenerationState): Promise<BuiltIndex> {
    // A deleted and recreated session reuses generation numbers: creation times tell them apart.
    const key = `${head.userId}/${head.sessionId}/${head.createdAt}/${state.generation}/${state.createdAt}`;
    return this.indexes.get(key, state.length, () => this.build(head, state, key));
  }

  /** Builds the index of a generation at `state.length` from its pages. */
  private async build(head: SessionHead, state: GenerationState, key: string): Promise<BuiltIndex> {
    // Requests for the same pages at once share one load (one copy of the records, not one per request).
    const loading = this.loading.get(key);
    const pending = loading && loading.length >= state.length ? loading.pages : this.loadPages(head, state, key);
    if (pending !== loading?.pages) {
      this.loading.set(key, { length: state.length, pages: pending });
      pending
        .finally(() => {
          if (this.loading.get(key)?.pages === pending) this.loading.delete(key);
        })
        .catch(() => {});
    }
    const loaded = await pending;
    const large = loaded.records.length > YIELD_AFTER_RECORDS;
    if (large) await turn(); // between loading and building
    // The index owns its array (the records themselves are shared, as cached ones always were).
    const records =
      loaded.length === state.length ? [...loaded.records] : loaded.records.filter((r) => r.offset < state.length);
    const { problems, previews } = loaded;
    const index = await SessionIndex.build(
      {
        header: undefined,
        version: head.summary.headerVersion ?? 3,
        records,
        problems,
        completeLength: state.length,
        load: () => {
          throw new Error("entry content was not loaded");
        },
      },
      turn,
    );
    // Building a large index takes a while: let other requests run before the caller walks it.
    if (large) await turn();
    return { index, previews };
  }

  /**
   * The pages of a generation up to at least `state.length`: those kept, else the persisted
   * index of a large session (see {@link PersistedIndexes}), and those appended since. The
   * answer is the kept object itself, which later loads extend (synchronously, with its
   * `length`): a reader copies what it needs right away.
   */
  private async loadPages(head: SessionHead, state: GenerationState, key: string): Promise<KnownPages> {
    let known = this.pages.get(key);
    if (known && known.length > state.length) known = undefined;
    const large = state.lines >= PERSIST_MIN_LINES;
    const found = !known && large ? await this.findPersisted(head, state) : undefined;
    const from = known?.length ?? found?.pages?.length ?? 0;
    const fresh =
      from === state.length ? [] : await this.stores.meta.getPages(head.userId, head.sessionId, state.generation, from);
    // A kept object is extended in one go (others may be reading it); a new one is built a
    // few pages at a time, letting other requests run in between (a million lines take seconds).
    const loaded: KnownPages = known ?? found?.pages ?? { length: 0, records: [], problems: [], previews: {} };
    const before = loaded.records.length;
    let merged = 0;
    for (const page of fresh) {
      mergePages([page], state.length, loaded);
      if (!known && ++merged % 64 === 0) await turn();
    }
    loaded.length = state.length;
    this.pages.set(key, loaded);
    if (found && worthPersisting(found, loaded.records.length - before)) this.persistLater(head, state, loaded, found);
    return loaded;
  }

  /** The persisted index of a large generation, if one is intact; a store failing here only costs the rebuild. */
  private async findPersisted(head: SessionHead, state: GenerationState): Promise<Found> {
    try {
      return await this.persisted.find(ownerOf(head, state), state.length);
    } catch {
      return { keys: [] };
    }
  }

  /**
   * Writes the index of `state` once the request that built it has its answer (derived data: a
   * write that fails is written again by the next fresh reader, or by `verify --repair`).
   */
  private persistLater(head: SessionHead, state: GenerationState, loaded: KnownPages, found: Found): void {
    const owner = ownerOf(head, state);
    const at = `${owner.userId}/${owner.sessionId}/${owner.sessionCreatedAt}/${owner.generation}`;
    if (this.persisting.has(at)) return;
    // A copy as of now: the kept object grows with later appends.
    const pages = {
      length: state.length,
      records: loaded.records.filter((r) => r.offset < state.length),
      problems: [...loaded.problems],
      previews: { ...loaded.previews },
    };
    const write = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.persisted.save(owner, pages, found.keys))
      .then(
        () => {},
        () => {},
      )
      .finally(() => this.persisting.delete(at));
    this.persisting.set(at, write);
  }

  /** Resolves once the persisted indexes being written are written (tests, benchmarks, a graceful stop). */
  async settled(): Promise<void> {
    await Promise.all([...this.persisting.values()]);
  }

  async tree(userId: string, sessionId: string): Promise<{ leafId: string | null; entries: TreeNode[] }> {
    const head = await this.head(userId, sessionId);
    const { index, previews } = await this.index(head, head.current);
    const labels = labelsOf(index);
    const entries: TreeNode[] = [];
    for (const record of index.records) {
      if (record.id === undefined) continue;
      entries.push(
        boundedNode({
          id: record.id,
          parentId: record.parentId,
          type: record.type,
          role: record.role,
          timestamp: record.timestamp,
          label: labels.get(record.id),
          preview: previews[record.line],
        }),
      );
    }
    return { leafId: bounded(index.defaultLeafId, FIELD_LIMITS.token), entries };
  }

  /**
   * The bytes of records' lines, by line number: one ranged GET per segment they lie in.
   * Read again with a fresh head when a segment was swept meanwhile. `budget` bounds the GETs
   * (lines far apart beyond it are read with the bytes between them).
   */
  async lines(head: SessionHead, records: readonly LineRecord[], budget = MAX_READS): Promise<Map<number, Uint8Array>> {
    const wanted = [...records].sort((a, b) => a.offset - b.offset);
    return withFreshHead(
      async () => this.head(head.userId, head.sessionId),
      async (fresh) => {
        const out = new Map<number, Uint8Array>();
        const ranges = rangesToRead(wanted, fresh.current.segments, budget);
        await Promise.all(
          ranges.map(async (range) => {
            const bytes = await readRange(this.stores.blobs, [range.segment], range.start, range.end);
            for (const r of range.records) {
              out.set(r.line, bytes.subarray(r.offset - range.start, r.offset - range.start + r.length));
            }
          }),
        );
        return out;
      },
    );
  }

  /**
   * The decoded lines of `records`, in their order, a batch of about `batchBytes` at a time:
   * what is held at once is bounded by the batch (or one line longer than it), not by the session.
   */
  async *batches(
    head: SessionHead,
    records: readonly LineRecord[],
    batchBytes = BATCH_BYTES,
  ): AsyncGenerator<{ record: LineRecord; text: string }[]> {
    for (let from = 0; from < records.length; ) {
      let to = from;
      let bytes = 0;
      while (to < records.length && (to === from || bytes + records[to].length <= batchBytes)) {
        bytes += records[to++].length;
      }
      const batch = records.slice(from, to);
      const lines = await this.lines(head, batch);
      yield batch.map((record) => ({ record, text: decodeUtf8(lines.get(record.line) as Uint8Array) }));
      from = to;
    }
  }

  /**
   * The bytes of a generation as lines, a chunk of about `chunkBytes` at a time, without the
   * newlines; a line longer than a chunk is held whole until it ends.
   */
  async *rawLines(
    userId: string,
    sessionId: string,
    generation: number,
    chunkBytes = BATCH_BYTES,
  ): AsyncGenerator<string[]> {
    const { state } = await this.generationState(userId, sessionId, generation);
    let carry = new Uint8Array(0);
    for (let start = 0; start < state.length; start += chunkBytes) {
      const { bytes } = await this.raw(userId, sessionId, {
        generation,
        start,
        end: Math.min(start + chunkBytes, state.length),
      });
      const joined = carry.length ? Buffer.concat([carry, bytes]) : bytes;
      const lines: string[] = [];
      let from = 0;
      for (let at = joined.indexOf(10); at >= 0; at = joined.indexOf(10, from)) {
        lines.push(decodeUtf8(joined.subarray(from, at)));
        from = at + 1;
      }
      carry = joined.slice(from);
      if (lines.length) yield lines;
    }
  }

  /**
   * Previews of records' entries made again from their text, by line: `mask` rewrites the text
   * before it is cut (the stored previews were cut first).
   */
  async previews(
    head: SessionHead,
    records: readonly LineRecord[],
    mask: (text: string) => string,
  ): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (records.length === 0) return out;
    const budget = Math.max(MAX_READS, Math.min(records.length, MAX_SCATTERED_READS));
    for (const [line, bytes] of await this.lines(head, records, budget)) {
      let entry: unknown;
      try {
        entry = JSON.parse(decodeUtf8(bytes));
      } catch {
        continue; // not an entry: no preview
      }
      const preview = previewOf(entry, mask);
      if (preview !== undefined) out.set(line, preview);
    }
    return out;
  }

  /**
   * The context pi would send for `leafId` (the default leaf without it): only the entries the
   * context holds are fetched. `transform` may rewrite each line's text first (masking).
   */
  async context(
    userId: string,
    sessionId: string,
    leafId?: string,
    transform?: (lines: string[]) => Promise<string[]>,
  ): Promise<SessionContext & { leafId: string | null }> {
    const head = await this.head(userId, sessionId);
    const { index } = await this.index(head, head.current);
    if (leafId !== undefined && !index.byId(leafId)) throw new NotFound(`no entry ${leafId} in this session`);
    const needed = recordsForContext(index, leafId);
    await this.prime(head, index, needed, transform);
    const context = buildSessionContext(index, leafId);
    return { ...context, leafId: leafId ?? index.defaultLeafId };
  }

  /**
   * The context {@link Reader.context} answers, to be sent as it is read: its messages a batch
   * of entries at a time (what is held does not grow with the context), then `settings()`:
   * the thinking level, model and leaf. Throws {@link NotFound} before anything is read when
   * the session or the entry is missing.
   */
  async contextStream(
    userId: string,
    sessionId: string,
    leafId?: string,
  ): Promise<{
    messages: AsyncGenerator<AgentMessage[]>;
    settings: () => Omit<SessionContext, "messages"> & { leafId: string | null };
  }> {
    const head = await this.head(userId, sessionId);
    const { index } = await this.index(head, head.current);
    if (leafId !== undefined && !index.byId(leafId)) throw new NotFound(`no entry ${leafId} in this session`);
    return {
      messages: this.contextMessages(head, index, leafId),
      settings: () => ({ ...contextSettings(index, leafId), leafId: leafId ?? index.defaultLeafId }),
    };
  }

  /**
   * The messages of the context for `leafId` (the default leaf without it), in order, a batch
   * of entries at a time: what is held at once does not grow with the context. Its thinking
   * level and model come from the index alone (`contextSettings`). `transform` may rewrite
   * each batch's text first (masking).
   */
  async *contextMessages(
    head: SessionHead,
    index: SessionIndex,
    leafId?: string,
    transform?: (lines: string[]) => Promise<string[]>,
  ): AsyncGenerator<AgentMessage[]> {
    const needed = recordsForContext(index, leafId);
    const version = head.summary.headerVersion ?? 3;
    const byLine = new Map(needed.map((r) => [r.line, r]));
    const entriesOf = async function* (this: Reader, records: LineRecord[]) {
      for await (const batch of this.batches(head, records)) {
        // pi trims a byte order mark at the very start of the file (and only there).
        let texts = batch.map(({ record, text }) =>
          record.offset === 0 && text.startsWith("\uFEFF") ? text.slice(1) : text,
        );
        if (transform) texts = await transform(texts);
        const entries: [LineRecord, Record<string, unknown>][] = [];
        batch.forEach(({ record }, i) => {
          try {
            entries.push([record, migrateEntry(JSON.parse(texts[i]), version, byLine.get(record.line)?.v1)]);
          } catch {
            // a line the transform made unreadable stays unread, as in `context`
          }
        });
        yield entries;
      }
    }.bind(this);
    // Edits come later on the path than what they change: read them (small) first; the last one wins.
    const edits = new Map<unknown, Record<string, unknown>>();
    for await (const entries of entriesOf(needed.filter((r) => r.type === "context_edit"))) {
      for (const [, e] of entries) if (e.replacement !== undefined) edits.set(e.targetId, e);
    }
    // The last compaction's messages come first; then the kept entries and those after it, in order.
    const compactions = needed.filter((r) => r.type === "compaction");
    const ordered = [
      ...compactions.slice(-1),
      ...needed.filter((r) => r.type !== "compaction" && r.type !== "context_edit"),
    ];
    for await (const entries of entriesOf(ordered)) {
      const messages: AgentMessage[] = [];
      for (const [record, entry] of entries) {
        messages.push(...(applyEdit(messagesOfEntry(record.type, entry), edits.get(entry.id)) as AgentMessage[]));
        if (record.type === "compaction" && Array.isArray(entry.retainedTail)) {
          messages.push(...(entry.retainedTail as AgentMessage[]));
        }
      }
      yield messages;
    }
  }

  /** Loads records' entries into an index (optionally rewriting their text first). */
  async prime(
    head: SessionHead,
    index: SessionIndex,
    records: readonly LineRecord[],
    transform?: (lines: string[]) => Promise<string[]>,
  ): Promise<void> {
    const bytes = await this.lines(head, records);
    const lines = [...bytes.keys()];
    const atFileStart = new Set(records.filter((r) => r.offset === 0).map((r) => r.line));
    // pi trims a byte order mark at the very start of the file (and only there).
    let texts = lines.map((line) => {
      const text = decodeUtf8(bytes.get(line) as Uint8Array);
      return atFileStart.has(line) && text.startsWith("\uFEFF") ? text.slice(1) : text;
    });
    if (transform) texts = await transform(texts);
    const loaded: [number, Record<string, unknown>][] = [];
    lines.forEach((line, i) => {
      try {
        loaded.push([line, JSON.parse(texts[i])]);
      } catch {
        // A line the transform made unreadable stays unread: the context skips it.
      }
    });
    index.prime(loaded);
  }

  /**
   * Removes a session's items and the objects they named; its share links are revoked in the
   * same commit. Only what the head read first names is removed: a session made again under the
   * same id once the head is gone has objects of its own under the same prefix, and what an
   * append racing the delete wrote is named by no head, for the sweep to remove once old.
   */
  async delete(userId: string, sessionId: string, now: Date = new Date()): Promise<DeleteReceipt> {
    const head = await this.head(userId, sessionId);
    const archived = await this.stores.meta.getArchived(userId, sessionId);
    // The links the delete revokes: this session's, neither revoked nor expired yet.
    const at = now.toISOString();
    const links = (await this.stores.meta.listShares(userId)).filter(
      (s) => s.sessionId === sessionId && !s.revokedAt && s.expiresAt > at,
    );
    await this.stores.meta.deleteSession(userId, sessionId, at);
    this.indexes.forget(`${userId}/${sessionId}/`);
    const generations = [...archived, head.current];
    const segments = [...new Set(generations.flatMap((state) => state.segments.map((segment) => segment.key)))];
    const objects = [...segments, ...(await this.persisted.listLife(head))];
    // Read before the segments go; released once the head is gone (see blob-release.ts).
    const named = await namedBlobs(this.stores.blobs, head, generations);
    await this.stores.blobs.delete(objects);
    const blobs = await releaseBlobs(this.stores, userId, named);
    return {
      id: sessionId,
      generations: generations.length,
      bytes: generations.reduce((n, g) => n + g.length, 0),
      objects: objects.length,
      sharesRevoked: links.map((s) => s.id),
      blobs,
    };
  }
}
