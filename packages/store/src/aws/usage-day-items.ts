/**
 * Insights' usage by day in DynamoDB (see `../usage-days.ts`), in the user's partition:
 * - day part: sk `UD#<day>#<part:2 hex>`; `d`, JSON of `{ <session>: [<version>, <day usage>] }`,
 *   `n`, a counter every write moves (writes are conditional on it); a day's sessions fill part 0,
 *   then 1, … (each under {@link PART_BYTES}, DynamoDB's items holding 400 KB at most)
 * - pending mark: sk `UM#<session>`; `revision`, `days` (a string set): put in a commit's own
 *   transaction, for the days it changed, and deleted once those days are written. A mark left by
 *   a crash (or a lost answer) between the commit and those writes is settled by the next report,
 *   so a report is exact whatever happened between the two
 * - filled: sk `UR`, put once every head of the user written before usage was kept by day is in
 *   its days (the first report fills them)
 * A day's write is a read of its parts and a conditional write of the parts it changes (one
 * transaction); sessions of one user writing the same day at once retry. Each session's entry
 * carries its head's version (creation time, revision): an older writer never replaces a newer one.
 */
import { randomInt } from "node:crypto";
import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { eachAtOnce } from "../at-once.js";
import type { SessionHead } from "../ports.js";
import { type DayUsage, dayUsagesOf, UNCOUNTED_DAY, UsageCollector, type UsageInRange } from "../usage-days.js";
import { queryAll, untilProcessed } from "./client.js";

type Item = Record<string, unknown>;
type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** The most a day part holds (JSON bytes): well under DynamoDB's 400 KB item. */
const PART_BYTES = 300_000;
/** Tries of one day's read-and-write before giving up (the mark stays for the next report). */
const DAY_WRITE_TRIES = 12;
/** Writes of a mark's days from the head read again after a newer commit moved it. */
const SETTLE_ROUNDS = 3;
/** Days written at once by one settling or filling. */
const DAYS_AT_ONCE = 4;

/**
 * A head's version (creation time, then revision, each fixed-width base 36): newer heads sort
 * after older ones, a session made again after a delete too.
 */
const versionOf = (head: SessionHead) =>
  Date.parse(head.createdAt).toString(36).padStart(9, "0") + head.revision.toString(36).padStart(7, "0");
const userPk = (userId: string) => `U#${userId}`;
const markSk = (sessionId: string) => `UM#${sessionId}`;
const partSk = (day: string, part: number) => `UD#${day}#${part.toString(16).padStart(2, "0")}`;
const FILLED_SK = "UR";

/** What a day write does to one session: its version, and its day usage (JSON), absent to remove it. */
interface DayChange {
  version: string;
  usage?: string;
}

interface Part {
  part: number;
  counter?: number;
  entries: Record<string, [string, DayUsage]>;
  /** About the JSON bytes of its entries (kept as entries come and go). */
  bytes: number;
  changed: boolean;
}

/** About what an entry adds to its part's JSON. */
const entryBytes = (sessionId: string, entry: [string, DayUsage]) =>
  Buffer.byteLength(JSON.stringify(entry)) + sessionId.length + 4;

/** Days a report reads in one query; a longer range is read in stretches at once. */
const STRETCH_DAYS = 46;
const DAY_MS = 86_400_000;

/** Stretches read at once at most: a longer range (all time) is read in its last ones and one query before them. */
const MAX_STRETCHES = 9;

/**
 * A range cut into stretches of at most {@link STRETCH_DAYS} days, `[from, to]` each; a range of
 * more than {@link MAX_STRETCHES} of them (`since=all` starts in year 1) has its beginning read as
 * one query, paged by DynamoDB: its work is the items it holds, not its length.
 */
function stretchesOf(range: { from: string; to: string }): Array<[string, string]> {
  const end = Date.parse(range.to);
  const recent = end - (MAX_STRETCHES - 1) * STRETCH_DAYS * DAY_MS;
  if (Date.parse(range.from) < recent) {
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return [[range.from, day(recent - DAY_MS)], ...stretchesOf({ from: day(recent), to: range.to })];
  }
  const stretches: Array<[string, string]> = [];
  for (let start = Date.parse(range.from); start <= end; start += STRETCH_DAYS * DAY_MS) {
    const last = Math.min(end, start + (STRETCH_DAYS - 1) * DAY_MS);
    stretches.push([new Date(start).toISOString().slice(0, 10), new Date(last).toISOString().slice(0, 10)]);
  }
  return stretches;
}

/** The most JSON a process keeps parsed of day parts (the least recently read go first). */
const PARSED_BYTES = 64 * 1024 * 1024;

type Entries = Record<string, [string, DayUsage]>;

/** The answers a process keeps (see `answerOf`). */
const ANSWERS_KEPT = 16;

/** A range's day parts as read: what they were (keys and counters), and their sessions on demand. */
interface DaysRead {
  signature: string;
  collect: () => UsageCollector;
}

/**
 * Day parts parsed, by user and key, with the counter they were read at: a report lists the
 * counters of its range (small) and fetches only the parts that moved since.
 */
class ParsedParts {
  private readonly parts = new Map<string, { counter: number; entries: Entries; bytes: number }>();
  private bytes = 0;

  /** The part's entries when kept at that counter. */
  get(userId: string, sk: string, counter: number): Entries | undefined {
    const key = `${userId}\u0000${sk}`;
    const part = this.parts.get(key);
    if (!part || part.counter !== counter) return undefined;
    // Read again: it goes to the end of the eviction order.
    this.parts.delete(key);
    this.parts.set(key, part);
    return part.entries;
  }

  /** The part's entries at whatever counter they were last read. */
  latest(userId: string, sk: string): Entries | undefined {
    return this.parts.get(`${userId}\u0000${sk}`)?.entries;
  }

  put(userId: string, sk: string, counter: number, json: string): void {
    const key = `${userId}\u0000${sk}`;
    const old = this.parts.get(key);
    if (old) {
      this.bytes -= old.bytes;
      this.parts.delete(key);
    }
    this.parts.set(key, { counter, entries: JSON.parse(json), bytes: json.length });
    this.bytes += json.length;
    for (const [oldest, part] of this.parts) {
      if (this.bytes <= PARSED_BYTES) break;
      this.parts.delete(oldest);
      this.bytes -= part.bytes;
    }
  }
}

/** The usage by day of every user of one table. */
export class UsageDayItems {
  /** Users seen filled by this process (the flag is never removed). */
  private readonly filled = new Set<string>();
  /** Day parts this process has parsed, at their counters. */
  private readonly parsed = new ParsedParts();
  /** The last answers given, by user and range, with the parts' counters they were made of. */
  private readonly answers = new Map<string, { signature: string; answer: UsageInRange }>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly readHead: (userId: string, sessionId: string) => Promise<SessionHead | undefined>,
    /** Counts the day items reports read (for tests and benchmarks). */
    private readonly reads?: { items: number },
  ) {}

  /**
   * The mark a commit (or a delete) of a session puts in its own transaction, for the days it
   * changes; the same item for every sending of one commit.
   */
  markItem(userId: string, sessionId: string, revision: number, days: readonly string[]): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: { pk: userPk(userId), sk: markSk(sessionId) },
        // Days left by an earlier mark not settled yet are kept (a set's ADD is a union).
        UpdateExpression: "SET revision = :revision ADD days :days",
        ExpressionAttributeValues: { ":revision": revision, ":days": new Set(days) },
      },
    };
  }

  /**
   * Writes the days of a session's mark from its head as it is now (removing the session from
   * them when it is gone), then deletes the mark unless a newer commit moved it meanwhile.
   * `known` is the head the caller just committed (its mark's days, its revision): no read of them.
   */
  async settle(
    userId: string,
    sessionId: string,
    known?: { head: SessionHead | undefined; revision: number; days: readonly string[] },
  ): Promise<void> {
    let mark = known;
    if (!mark) {
      const stored = await this.get(markSk(sessionId), userId);
      if (!stored) return;
      const head = await this.readHead(userId, sessionId);
      mark = { head, revision: Number(stored.revision), days: [...((stored.days as Set<string>) ?? [])] };
    }
    const { revision, days } = mark;
    let head = mark.head;
    for (let round = 1; ; round++) {
      const usages = dayUsagesOf(head?.summary);
      const version = head ? versionOf(head) : "";
      await eachAtOnce(days, DAYS_AT_ONCE, (day) =>
        this.writeDay(userId, day, new Map([[sessionId, { version, usage: usages.get(day) }]])),
      );
      // A newer commit's settling may have written these days first (a removal keeps no
      // version to stop an older write): the head read after ours says whether ours is stale.
      const now = await this.readHead(userId, sessionId);
      if ((now ? versionOf(now) : "") === version || round >= SETTLE_ROUNDS) break;
      head = now;
    }
    try {
      await this.client.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: userPk(userId), sk: markSk(sessionId) },
          // Only the days written: a mark may also hold days of an earlier commit never settled.
          ConditionExpression: "revision = :revision AND size(days) = :count",
          ExpressionAttributeValues: { ":revision": revision, ":count": new Set(days).size },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // A newer commit's mark: its own settling (or the next report's) writes its days. Ours
      // with more days than we wrote: all of them, from the head as it is now.
      if (known) await this.settle(userId, sessionId);
    }
  }

  /**
   * The usage of a user's sessions on the days of a range: marks left pending are settled and
   * heads from before usage was kept by day are filled in first, then the range's days are read.
   */
  async read(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    // Marks are rare (a stop between a commit and its days): looked for beside the days' read,
    // which is read again only when one was settled.
    const [marks, days] = await Promise.all([this.marks(userId), this.readDays(userId, range)]);
    if (marks.length === 0 && this.filled.has(userId)) return this.answerOf(userId, range, days);
    // A mark that cannot be settled now (its day writes keep losing races, say) stays for the
    // next report; this one takes that session's days from its head instead.
    const unsettled: string[] = [];
    await eachAtOnce(marks, DAYS_AT_ONCE, (sessionId) =>
      this.settle(userId, sessionId).catch(() => {
        unsettled.push(sessionId);
      }),
    );
    await this.fillUser(userId);
    const again = (await this.readDays(userId, range)).collect();
    for (const sessionId of unsettled) {
      again.drop(sessionId);
      again.addHead(sessionId, (await this.readHead(userId, sessionId))?.summary, range);
    }
    return again.result();
  }

  /** The sessions whose marks are pending. */
  private async marks(userId: string): Promise<string[]> {
    const marks = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": "UM#" },
      ProjectionExpression: "sk",
      ConsistentRead: true,
    });
    return marks.map((mark) => String(mark.sk).slice(3));
  }

  /**
   * The answer of a range read with nothing pending: the one this process gave last for the same
   * user and range when no day part of it moved since (the same object: callers may keep what
   * they made of it), else a new one.
   */
  private answerOf(userId: string, range: { from: string; to: string }, days: DaysRead): UsageInRange {
    const key = `${userId}\u0000${range.from}\u0000${range.to}`;
    const last = this.answers.get(key);
    if (last?.signature === days.signature) return last.answer;
    const answer = days.collect().result();
    this.answers.delete(key);
    this.answers.set(key, { signature: days.signature, answer });
    for (const oldest of this.answers.keys()) {
      if (this.answers.size <= ANSWERS_KEPT) break;
      this.answers.delete(oldest);
    }
    return answer;
  }

  /**
   * The day items of a range and of sessions without a rollup: their keys and counters first (in
   * parallel stretches of days), then only the items this process has not parsed at that counter.
   */
  private async readDays(userId: string, range: { from: string; to: string }): Promise<DaysRead> {
    const between = (from: string, to: string) =>
      this.queryAll({
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: { ":pk": userPk(userId), ":from": `UD#${from}#`, ":to": `UD#${to}#~` },
        ProjectionExpression: "sk, n",
        ConsistentRead: true,
      });
    const stretches = [[UNCOUNTED_DAY, UNCOUNTED_DAY], ...stretchesOf(range)];
    const listed = (await Promise.all(stretches.map(([from, to]) => between(from, to)))).flat();
    const missing = listed.filter((item) => this.parsed.get(userId, String(item.sk), Number(item.n)) === undefined);
    const fetched = await this.fetchParts(
      userId,
      missing.map((item) => String(item.sk)),
    );
    if (this.reads) this.reads.items += listed.length + fetched;
    const collect = () => {
      const collector = new UsageCollector();
      for (const item of listed) {
        const sk = String(item.sk);
        // A part written again between the listing and the fetch is read at its newer counter.
        const entries = this.parsed.get(userId, sk, Number(item.n)) ?? this.parsed.latest(userId, sk);
        if (!entries) continue;
        const day = sk.slice(3, 13);
        for (const sessionId in entries) collector.add(day, sessionId, entries[sessionId][1]);
      }
      return collector;
    };
    return { signature: listed.map((item) => `${item.sk}:${item.n}`).join(","), collect };
  }

  /** Reads day parts by key (100 to a `BatchGetItem`, at once) into the cache; @returns how many. */
  private async fetchParts(userId: string, sks: readonly string[]): Promise<number> {
    const batches: string[][] = [];
    for (let i = 0; i < sks.length; i += 100) batches.push(sks.slice(i, i + 100));
    let count = 0;
    await Promise.all(
      batches.map(async (batch) => {
        const read = async (keys: Item[]) => {
          const result: BatchGetCommandOutput = await this.client.send(
            new BatchGetCommand({
              RequestItems: { [this.table]: { Keys: keys, ProjectionExpression: "sk, n, d", ConsistentRead: true } },
            }),
          );
          for (const item of result.Responses?.[this.table] ?? []) {
            this.parsed.put(userId, String(item.sk), Number(item.n), String(item.d));
            count++;
          }
          return result.UnprocessedKeys?.[this.table]?.Keys;
        };
        await untilProcessed(
          batch.map((sk) => ({ pk: userPk(userId), sk })),
          read,
          "usage days unread",
        );
      }),
    );
    return count;
  }

  /** Files every head of the user under its days, once (heads committed before usage was kept by day). */
  async fillUser(userId: string): Promise<void> {
    if (this.filled.has(userId)) return;
    if (!(await this.get(FILLED_SK, userId))) {
      const heads = await this.queryAll({
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": "S#" },
        ProjectionExpression: "#data",
        ExpressionAttributeNames: { "#data": "data" },
        ConsistentRead: true,
      });
      const byDay = new Map<string, Map<string, DayChange>>();
      for (const item of heads) {
        const head = JSON.parse(String(item.data)) as SessionHead;
        for (const [day, usage] of dayUsagesOf(head.summary)) {
          const changes = byDay.get(day) ?? new Map<string, DayChange>();
          byDay.set(day, changes);
          changes.set(head.sessionId, { version: versionOf(head), usage });
        }
      }
      await eachAtOnce([...byDay], DAYS_AT_ONCE, ([day, changes]) => this.writeDay(userId, day, changes));
      await this.client.send(new PutCommand({ TableName: this.table, Item: { pk: userPk(userId), sk: FILLED_SK } }));
    }
    this.filled.add(userId);
  }

  /**
   * Applies changes to one day's parts: a session's entry is replaced (or removed) unless the
   * stored one is as new or newer; parts it changes are written in one transaction, conditional
   * on their counters, retried when another writer moved one first.
   */
  private async writeDay(userId: string, day: string, changes: ReadonlyMap<string, DayChange>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const items = await this.queryAll({
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": `UD#${day}#` },
        ConsistentRead: true,
      });
      const parts: Part[] = items.map((item) => ({
        part: Number.parseInt(String(item.sk).slice(14), 16),
        counter: Number(item.n),
        entries: JSON.parse(String(item.d)),
        bytes: Buffer.byteLength(String(item.d)),
        changed: false,
      }));
      for (const [sessionId, change] of changes) place(parts, sessionId, change);
      const writes = parts.filter((p) => p.changed).map((p) => this.partWrite(userId, day, p));
      if (writes.length === 0) return;
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: writes }));
        return;
      } catch (error) {
        const raced =
          error instanceof TransactionCanceledException &&
          (error.CancellationReasons ?? []).some(
            (r) => r.Code === "ConditionalCheckFailed" || r.Code === "TransactionConflict",
          );
        if (!raced || attempt >= DAY_WRITE_TRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, randomInt(5, 20 * attempt)));
      }
    }
  }

  /**
   * The conditional write of a changed part: a put of its entries. An emptied part is kept (its
   * counter too): deleted, it could be made again at the counter a slower writer read.
   */
  private partWrite(userId: string, day: string, part: Part): TransactItem {
    const Key = { pk: userPk(userId), sk: partSk(day, part.part) };
    const guard =
      part.counter === undefined
        ? { ConditionExpression: "attribute_not_exists(pk)" }
        : { ConditionExpression: "n = :n", ExpressionAttributeValues: { ":n": part.counter } };
    const Item = { ...Key, n: (part.counter ?? 0) + 1, d: JSON.stringify(part.entries) };
    return { Put: { TableName: this.table, Item, ...guard } };
  }

  private async get(sk: string, userId: string): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetCommand({ TableName: this.table, Key: { pk: userPk(userId), sk }, ConsistentRead: true }),
    );
    return result.Item;
  }

  private queryAll(input: Omit<QueryCommandInput, "TableName">): Promise<Item[]> {
    return queryAll(this.client, { TableName: this.table, ...input });
  }
}

/** Puts one session's change into a day's parts (in memory), marking the parts it changes. */
function place(parts: Part[], sessionId: string, change: DayChange): void {
  const holder = parts.find((p) => Object.hasOwn(p.entries, sessionId));
  if (holder) {
    const [stored] = holder.entries[sessionId];
    // A removal (a deleted session, version "") always applies; a write only over an older one.
    if (change.usage !== undefined && stored >= change.version) return;
    holder.bytes -= entryBytes(sessionId, holder.entries[sessionId]);
    delete holder.entries[sessionId];
    holder.changed = true;
  }
  if (change.usage === undefined) return;
  const entry: [string, DayUsage] = [change.version, JSON.parse(change.usage)];
  const size = entryBytes(sessionId, entry);
  let target = holder && holder.bytes + size <= PART_BYTES ? holder : undefined;
  target ??= parts.find((p) => p.bytes + size <= PART_BYTES);
  if (!target) {
    const part = parts.reduce((max, p) => Math.max(max, p.part + 1), 0);
    target = { part, entries: {}, bytes: 2, changed: false };
    parts.push(target);
  }
  target.entries[sessionId] = entry;
  target.bytes += size;
  target.changed = true;
}
