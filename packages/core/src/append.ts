/**
 * The append protocol (tus's offset semantics), exactly once whatever crashes:
 *
 * 1. Read the head. If the body equals the committed bytes at [offset, offset + length), it is
 *    a retry: answer the new offset and store nothing. Else if offset is the committed length,
 *    append. Else conflict (409, with the committed length).
 * 2. Write the body as a new segment object (a fresh key: racing writers never overwrite each
 *    other, and an uncommitted segment is invisible).
 * 3. Commit: the head (new length, segment list, summary) conditional on the revision read in
 *    1, with the body's index pages, in one transaction. This is the commit point: a crash
 *    before it leaves the old state (the segment is an orphan), after it the new one.
 * 4. A commit whose answer was lost is resolved by reading the head (see commit.ts): applied,
 *    not applied (sent again, then 503), or lost to another writer. On a lost race, start again
 *    from 1.
 *
 * Nothing a head may name is ever deleted here: a lost race's segment and a merge's superseded
 * segments are left for the sweep, which removes objects no head names once they are old.
 *
 * PUT is the same from offset 0, starting a new generation (the old one is archived).
 */
import type { LineRecord } from "@pisync/format";
import type { GenerationState, IndexPage, SessionHead, Stores } from "@pisync/store";
import { cardOf, changedUsageDays, NotFoundError } from "@pisync/store";
import { missingBlobs } from "./blob-release.js";
import { commitAndResolve } from "./commit.js";
import { dictionaryBefore } from "./dictionary.js";
import { BadRequest, Busy, GenerationMismatch, NotFound, OffsetConflict, TooLarge } from "./errors.js";
import { advanceGeneration, advanceSummary, emptySummary, type IngestedBody, ingestBody } from "./ingest.js";
import { checkSessionId, segmentKey } from "./keys.js";
import { type RenameRequest, type RenameResult, renameSlot } from "./rename.js";
import { MAX_SEGMENTS, mergePlan, nonce, readRange, sameBytes } from "./segments.js";
import { advanceWriters } from "./writers.js";

/** Limits of one append. */
export interface AppendLimits {
  /** Lines in one body (each becomes a tree record written with the commit). */
  maxLines: number;
}

export const DEFAULT_APPEND_LIMITS: AppendLimits = { maxLines: 20_000 };

export interface AppendRequest {
  userId: string;
  sessionId: string;
  /** `Upload-Offset`. */
  offset: number;
  body: Uint8Array;
  /** `If-Match`: the generation the client believes is current. */
  generation?: number;
  /** PUT: start a new generation with this body. */
  replace?: boolean;
  /** The public id of the token that sent it: usage is attributed to it (insights' "by machine"). */
  device?: string;
}

export interface AppendResult {
  /** The new committed length (`Upload-Offset`). */
  offset: number;
  generation: number;
  /** Whether this request was a retry of a committed one (nothing stored). */
  retry: boolean;
  /** Body length. */
  length: number;
  entries: number;
  leafId: string | null;
  /** What was wrong in this body's lines (kept verbatim all the same). */
  problems: IngestedBody["problems"];
  /** Blobs the body newly names that the store lacks: the client sends them (see blob-release.ts). */
  missingBlobs: string[];
}

const PAGE_BYTES = 300_000;
const MAX_ATTEMPTS = 8;

function now(clock: () => Date): string {
  return clock().toISOString();
}

/** Splits a body's records into pages that fit a DynamoDB item (400 KB) with room to spare. */
function pagesOf(generation: number, start: number, end: number, ingested: IngestedBody): IndexPage[] {
  if (ingested.records.length === 0 && ingested.problems.length === 0) return [];
  const pages: IndexPage[] = [];
  let current: IndexPage = { generation, start, end, records: [], problems: ingested.problems, previews: {} };
  let size = JSON.stringify(ingested.problems).length;
  const flush = (next: LineRecord) => {
    current.end = next.offset;
    pages.push(current);
    current = { generation, start: next.offset, end, records: [], problems: [], previews: {} };
    size = 0;
  };
  for (const record of ingested.records) {
    const preview = ingested.previews[record.line];
    const bytes = JSON.stringify(record).length + (preview?.length ?? 0) + 16;
    if (size + bytes > PAGE_BYTES && current.records.length > 0) flush(record);
    current.records.push(record);
    if (preview !== undefined && current.previews) current.previews[record.line] = preview;
    size += bytes;
  }
  pages.push(current);
  return pages;
}

/**
 * The append protocol over the ports: committed offsets and generations, appends checked
 * against the offset (a retry of a committed append is recognised, a stale one is a conflict),
 * new generations, and the merging of small segments.
 *
 * @example
 * ```ts
 * const appender = new Appender(stores, () => new Date());
 * const { offset } = await appender.status("alice", sessionId);
 * ```
 */
export class Appender {
  constructor(
    private readonly stores: Stores,
    private readonly clock: () => Date = () => new Date(),
    private readonly limits: AppendLimits = DEFAULT_APPEND_LIMITS,
  ) {}

  /** HEAD: the committed length and generation. */
  async status(userId: string, sessionId: string): Promise<{ offset: number; generation: number }> {
    const head = await this.stores.meta.getHead(userId, checkSessionId(sessionId));
    if (!head) throw new NotFound("no such session");
    return { offset: head.current.length, generation: head.current.generation };
  }

  /**
   * The dictionary of a `pisync-deflate-dict` body appended at `offset`: the committed bytes
   * just before it. @throws OffsetConflict when `offset` is past them
   */
  dictionary(userId: string, sessionId: string, offset: number): Promise<Uint8Array> {
    return dictionaryBefore(this.stores, userId, sessionId, offset);
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    const { userId, sessionId, body, offset } = request;
    checkSessionId(sessionId);
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new BadRequest("Upload-Offset must be a non-negative integer", "invalid_offset");
    if (body.length === 0) throw new BadRequest("the body is empty", "empty_body");
    if (body[body.length - 1] !== 0x0a) {
      throw new BadRequest("the body must be complete lines: it must end with a newline", "incomplete_line");
    }
    if (request.replace && offset !== 0) throw new BadRequest("a new generation starts at offset 0", "invalid_offset");
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const head = await this.stores.meta.getHead(userId, sessionId);
      const outcome = await (request.replace ? this.tryReplace(request, head) : this.tryAppend(request, head)).catch(
        (error: unknown) => {
          // A segment of the head read was swept meanwhile: the head moved on; read it again.
          if (error instanceof NotFoundError) return undefined;
          throw error;
        },
      );
      if (outcome) return outcome;
    }
    // Others kept committing first: a busy session, not a failure of the server.
    throw new Busy("the session kept changing under this append; try again", 1);
  }

  private checkGeneration(request: AppendRequest, head: SessionHead | undefined) {
    if (request.generation !== undefined && head && head.current.generation !== request.generation) {
      throw new GenerationMismatch(head.current.generation, head.current.length);
    }
    if (request.generation !== undefined && !head) throw new NotFound("no such session");
  }

  private retryResult(head: SessionHead, request: AppendRequest): AppendResult {
    return {
      offset: request.offset + request.body.length,
      generation: head.current.generation,
      retry: true,
      length: request.body.length,
      entries: head.summary.entries,
      leafId: head.summary.leafId,
      problems: [],
      missingBlobs: [],
    };
  }

  /** One attempt of PATCH; `undefined` when the head changed under it. */
  private async tryAppend(request: AppendRequest, head: SessionHead | undefined): Promise<AppendResult | undefined> {
    const { offset, body } = request;
    this.checkGeneration(request, head);
    const committed = head?.current.length ?? 0;
    if (head && offset + body.length <= committed && (await sameBytes(this.stores.blobs, head.current, offset, body))) {
      return this.retryResult(head, request);
    }
    if (offset !== committed) {
      if (!head && offset > 0) throw new NotFound("no such session: its first append starts at offset 0");
      throw new OffsetConflict(committed, head?.current.generation ?? 0);
    }
    const state: GenerationState = head?.current ?? {
      generation: 1,
      length: 0,
      lines: 0,
      values: 0,
      segments: [],
      createdAt: now(this.clock),
    };
    return this.commitBody(request, head, state, head?.summary ?? emptySummary(), undefined);
  }

  /** One attempt of PUT; `undefined` when the head changed under it. */
  private async tryReplace(request: AppendRequest, head: SessionHead | undefined): Promise<AppendResult | undefined> {
    this.checkGeneration(request, head);
    // A retried PUT finds its own generation: exactly this body.
    if (head && head.current.length === request.body.length) {
      if (await sameBytes(this.stores.blobs, head.current, 0, request.body)) return this.retryResult(head, request);
    }
    const state: GenerationState = {
      generation: (head?.current.generation ?? 0) + 1,
      length: 0,
      lines: 0,
      values: 0,
      segments: [],
      createdAt: now(this.clock),
      reason: head ? "replaced" : undefined,
    };
    return this.commitBody(request, head, state, emptySummary(), head?.current);
  }

  private async commitBody(
    request: AppendRequest,
    head: SessionHead | undefined,
    state: GenerationState,
    summary: SessionHead["summary"],
    archive: GenerationState | undefined,
  ): Promise<AppendResult | undefined> {
    const { userId, sessionId, body } = request;
    const start = state.length;
    const version = summary.headerVersion ?? 3;
    const ingested = ingestBody(
      body,
      { offset: start, line: state.lines + 1, values: state.values, version },
      sessionId,
    );
    if (ingested.records.length > this.limits.maxLines) {
      throw new TooLarge(`at most ${this.limits.maxLines} lines per append`);
    }
    const headerVersion = ingested.header
      ? typeof ingested.header.version === "number"
        ? ingested.header.version
        : 1
      : version;
    const end = start + body.length;
    const key = segmentKey(userId, sessionId, state.generation, start, end, nonce());
    // The session's team, for its place in the team's list, is read while its bytes are stored
    // and committed, not after them (a session is put in a team only once it exists: a first
    // write has none). A team change racing the write costs the list's order until the next one.
    const team = head ? this.teamOf(userId, sessionId) : Promise.resolve(undefined);
    await this.stores.blobs.put(key, body);
    const time = now(this.clock);
    const next: SessionHead = {
      userId,
      sessionId,
      revision: (head?.revision ?? 0) + 1,
      current: {
        ...advanceGeneration(state, ingested, body.length),
        segments: [...state.segments, { key, start, end }],
        // Who wrote these bytes, in the same head write as them.
        writers: advanceWriters(state.writers, start, request.device ?? ""),
      },
      generations: (head?.generations ?? 0) + (archive || !head ? 1 : 0),
      summary: advanceSummary(summary, ingested, headerVersion, { device: request.device ?? "", now: time }),
      createdAt: head?.createdAt ?? time,
      updatedAt: time,
    };
    const commit = {
      head: next,
      expectedRevision: head?.revision ?? null,
      pages: pagesOf(state.generation, start, end, ingested),
      archive,
      usageDays: changedUsageDays(head, next),
    };
    // A lost race leaves the segment for the sweep: a late sending could still name it.
    if ((await commitAndResolve(this.stores.meta, commit, key)) === "lost") return undefined;
    const teamId = await team;
    if (teamId) await this.teamActivity(next, teamId);
    if (next.current.segments.length > MAX_SEGMENTS) await this.mergeSegments(next).catch(() => {});
    return {
      offset: end,
      generation: state.generation,
      retry: false,
      length: body.length,
      entries: next.summary.entries,
      leafId: next.summary.leafId,
      problems: ingested.problems,
      missingBlobs: ingested.blobRefs.length
        ? await missingBlobs(this.stores.blobs, userId, summary, ingested.blobRefs)
        : [],
    };
  }

  /** The team a session is in; `undefined` for none, or when it cannot be read now. */
  private teamOf(userId: string, sessionId: string): Promise<string | undefined> {
    const teams = this.stores.teams;
    if (!teams) return Promise.resolve(undefined);
    return teams.sessionTeam(userId, sessionId).catch(() => undefined);
  }

  /**
   * A session in a team moves up the team's list as it is written (one conditional write; a
   * session in no team costs only the read beside the commit). The append is committed already:
   * a failure here, or a team change racing the write, costs the list's order until the
   * session's next write, never the append.
   */
  private async teamActivity(head: SessionHead, teamId: string): Promise<void> {
    await this.stores.teams?.touchTeamSession(head.userId, head.sessionId, teamId, cardOf(head).lastAt).catch(() => {});
  }

  /** A rename: the title slot replaced in place, no generation made (see rename.ts). */
  rename(request: RenameRequest): Promise<RenameResult> {
    return renameSlot(this.stores, this.clock, request);
  }

  /**
   * Merges the cheapest run of neighbouring segments into one object, then commits the new
   * list (conditional, like any commit). Nothing is deleted: readers and retries holding the
   * old list still find its segments, and a merged object no head took is left, like the
   * superseded ones, for the sweep.
   */
  async mergeSegments(head: SessionHead): Promise<void> {
    const segments = head.current.segments;
    const plan = mergePlan(segments);
    if (!plan) return;
    const run = segments.slice(plan.from, plan.to);
    const start = run[0].start;
    const end = run[run.length - 1].end;
    const bytes = await readRange(this.stores.blobs, run, start, end);
    const key = segmentKey(head.userId, head.sessionId, head.current.generation, start, end, nonce());
    await this.stores.blobs.put(key, bytes);
    const merged = [...segments.slice(0, plan.from), { key, start, end }, ...segments.slice(plan.to)];
    await commitAndResolve(
      this.stores.meta,
      {
        head: { ...head, revision: head.revision + 1, current: { ...head.current, segments: merged } },
        expectedRevision: head.revision,
        // The same entries, so the same usage.
        usageDays: [],
      },
      key,
    );
  }
}
