/**
 * The check and the sweep of stored sessions (`npm run verify`, and the server's schedule).
 *
 * Every head is checked against the objects it names (see verify-generation.ts); every object
 * is classified by its key (the storage layout's kinds). What the stored bytes prove is repaired:
 * - a head *behind* stored segments of its current generation that no head names and that
 *   continue it without a gap (a commit whose record was lost) is rolled forward by appending
 *   their bytes through the normal, offset-checked commit;
 * - segments no head names and uploads no append took, older than `minAgeMs`, are removed
 *   (younger ones may belong to a request still running); so are the embedded store's stale
 *   temporary files.
 * Persisted tree indexes (`indexes/`) no head can use are removed; a deep pass rebuilds a large
 * session's missing or corrupt one from its pages (see verify-index.ts).
 * Attachments (`blobs/`) and search index files (`search/`) are known but never removed here:
 * entries and the search index own them. Keys of no known kind are reported and left alone.
 */
import {
  eachAtOnce,
  type GenerationState,
  isSearchObjectKey,
  type ObjectInfo,
  PREFIXES,
  parseBlobKey,
  parsePersistedIndexKey,
  parseSegmentKey,
  parseUploadKey,
  type SegmentKey,
  type SessionHead,
  type Stores,
} from "@pisync/store";
import { Appender } from "./append.js";
import { checkBytes, checkSegments, type GenerationProblem } from "./verify-generation.js";
import { checkIndexes, type IndexFinding, indexesByKey, type ListedIndex } from "./verify-index.js";

/** How old an unreferenced object must be before it is removed, by default. */
export const SWEEP_MIN_AGE_MS = 3600_000;

/**
 * How much earlier than its generation's creation a segment may seem written and still continue
 * it (the object store's clock against the server's): older ones are a deleted session's.
 */
const CLOCK_SKEW_MS = 60_000;

/** What is wrong, or (a note) what was found and left alone. */
export interface Finding {
  kind:
    | GenerationProblem["kind"]
    | IndexFinding["kind"]
    | "generation-count"
    | "head-behind"
    | "orphan"
    | "abandoned-upload"
    | "temp-file"
    | "unknown-object"
    | "unlisted";
  message: string;
  userId?: string;
  sessionId?: string;
  key?: string;
  /** Whether it is wrong (a note is not: the exit code ignores it). */
  problem: boolean;
  /** Whether `--repair` put it right. */
  repaired: boolean;
}

/** The embedded store's temporary files (the file blob store has them; S3 has none). */
export interface TemporaryFiles {
  listTemporary(): Promise<ObjectInfo[]>;
  deleteTemporary(keys: readonly string[]): Promise<void>;
}

export interface VerifyOptions {
  /** One user's sessions and objects; every user's when absent. */
  userId?: string;
  /** Put right what the stored bytes prove. */
  repair?: boolean;
  /** Unreferenced objects younger than this are left (default an hour). */
  minAgeMs?: number;
  /**
   * Read every generation's bytes and pages, and list every key (unknown ones included); the
   * scheduled sweep leaves this off: it lists only the prefixes it owns and reads no session
   * that has no unreferenced object.
   */
  deep?: boolean;
  temporary?: TemporaryFiles;
  now?: () => Date;
  /** Each finding, as it is found (and repaired). */
  onFinding?: (finding: Finding) => void;
  /**
   * Time for visiting sessions and uploads, in ms (none by default): sessions not started by
   * then are left (`left` counts them). A run with a budget starts from a random session and
   * goes round, so runs that stop early cover different sessions; every step is safe to repeat.
   */
  budgetMs?: number;
}

/** What a pass found. */
export interface VerifyReport {
  findings: Finding[];
  sessions: number;
  objects: number;
  /** Unreferenced objects left because they are younger than the minimum age. */
  young: number;
  /** Findings still wrong (the exit code is non-zero while this is). */
  wrong: number;
  /** Sessions and uploads not visited: the budget ran out (0 without one). */
  left: number;
}

/** Sessions checked at once. */
const PARALLEL = 8;

interface Listed {
  objects: Map<string, ObjectInfo>;
  /** Segments by `user/session`. */
  segments: Map<string, { info: ObjectInfo; key: SegmentKey }[]>;
  uploads: ObjectInfo[];
  unknown: ObjectInfo[];
  /** Persisted tree indexes by `user/session`. */
  indexes: Map<string, ListedIndex[]>;
}

const sessionKey = (userId: string, sessionId: string) => `${userId}/${sessionId}`;

/** Lists the objects a pass looks at and sorts them by kind. */
async function listObjects(stores: Stores, options: VerifyOptions): Promise<Listed> {
  const owned = [PREFIXES.sessions, PREFIXES.uploads, PREFIXES.indexes];
  const prefixes = options.deep ? (options.userId ? Object.values(PREFIXES) : [""]) : owned;
  const scoped = prefixes.map((prefix) => (options.userId && prefix ? `${prefix}${options.userId}/` : prefix));
  const listed: Listed = { objects: new Map(), segments: new Map(), uploads: [], unknown: [], indexes: new Map() };
  for (const info of (await Promise.all(scoped.map((prefix) => stores.blobs.listObjects(prefix)))).flat()) {
    listed.objects.set(info.key, info);
    const segment = parseSegmentKey(info.key);
    if (segment) {
      const at = sessionKey(segment.userId, segment.sessionId);
      listed.segments.set(at, [...(listed.segments.get(at) ?? []), { info, key: segment }]);
    } else if (parseUploadKey(info.key)) listed.uploads.push(info);
    else if (!parseBlobKey(info.key) && !isSearchObjectKey(info.key) && !parsePersistedIndexKey(info.key)) {
      listed.unknown.push(info);
    }
  }
  listed.indexes = indexesByKey(listed.objects.values());
  return listed;
}

/** Every session a pass visits: those with heads (when deep) and those with segments. */
async function sessionsToVisit(stores: Stores, listed: Listed, options: VerifyOptions): Promise<[string, string][]> {
  const found = new Set([...listed.segments.keys(), ...listed.indexes.keys()]);
  if (options.deep) {
    const users = options.userId ? [options.userId] : await stores.meta.users();
    for (const userId of users) {
      let cursor: string | undefined;
      do {
        const page = await stores.meta.listHeads(userId, { limit: 100, cursor });
        for (const head of page.heads) found.add(sessionKey(userId, head.sessionId));
        cursor = page.cursor;
      } while (cursor);
    }
  }
  return [...found].sort().map((at) => at.split("/") as [string, string]);
}

/** The keys a head and its archived generations name. */
function referenced(head: SessionHead | undefined, archived: readonly GenerationState[]): Set<string> {
  if (!head) return new Set();
  return new Set([head.current, ...archived].flatMap((state) => state.segments.map((segment) => segment.key)));
}

/** One pass over one session; its findings go to `report`. */
class SessionPass {
  constructor(
    private readonly stores: Stores,
    private readonly options: VerifyOptions,
    private readonly listed: Listed,
    private readonly cutoff: number,
    private readonly report: (finding: Omit<Finding, "repaired"> & { repaired?: boolean }) => void,
    private readonly young: () => void,
  ) {}

  async run(userId: string, sessionId: string): Promise<void> {
    const at = { userId, sessionId };
    let head = await this.stores.meta.getHead(userId, sessionId);
    let archived = head ? await this.stores.meta.getArchived(userId, sessionId) : [];
    const listed = this.listed.segments.get(sessionKey(userId, sessionId)) ?? [];
    const unreferencedBy = (names: Set<string>) => listed.filter((segment) => !names.has(segment.info.key));
    const chain = head ? this.chainAfter(head, unreferencedBy(referenced(head, archived))) : [];
    const rolled = chain.length > 0 && (await this.rollForward(head as SessionHead, chain));
    if (rolled) {
      // Checked as it is now: the roll-forward's commits are part of it.
      head = await this.stores.meta.getHead(userId, sessionId);
      archived = head ? await this.stores.meta.getArchived(userId, sessionId) : [];
    }
    if (head) await this.checkHead(head, archived);
    await checkIndexes(
      {
        stores: this.stores,
        repair: this.options.repair ?? false,
        deep: this.options.deep ?? false,
        cutoff: this.cutoff,
        young: this.young,
        report: (finding) => this.report({ ...finding, ...at }),
      },
      head,
      this.listed.indexes.get(sessionKey(userId, sessionId)) ?? [],
    );
    const inChain = new Set(chain.map((link) => link.info.key));
    for (const { info } of unreferencedBy(referenced(head, archived))) {
      // A chain not rolled forward is reported as a head behind its bytes, not as orphans.
      if (inChain.has(info.key) && !rolled) continue;
      if (info.modifiedAt.getTime() > this.cutoff) {
        this.young();
        continue;
      }
      const repaired = this.options.repair ? await this.removeOrphan(userId, sessionId, info.key) : false;
      this.report({
        kind: "orphan",
        ...at,
        key: info.key,
        message: inChain.has(info.key)
          ? "a segment whose bytes the roll-forward committed again: no head names it"
          : `a segment no head names (${info.size} bytes, written ${info.modifiedAt.toISOString()})`,
        problem: true,
        repaired,
      });
    }
  }

  private async checkHead(head: SessionHead, archived: readonly GenerationState[]): Promise<void> {
    const at = { userId: head.userId, sessionId: head.sessionId };
    if (head.generations !== archived.length + 1) {
      this.report({
        kind: "generation-count",
        ...at,
        message: `the head counts ${head.generations} generations, ${archived.length} are archived besides the current one`,
        problem: true,
      });
    }
    for (const state of [...archived, head.current]) {
      const problems = await checkSegments(this.stores.blobs, at, state, this.listed.objects);
      if (problems.length === 0 && this.options.deep) {
        const pages = await this.stores.meta.getPages(head.userId, head.sessionId, state.generation);
        problems.push(...(await checkBytes(this.stores.blobs, state, pages)));
      }
      for (const problem of problems) this.report({ ...problem, ...at, problem: true });
    }
  }

  /**
   * The unreferenced segments of the current generation that continue it from its length, one
   * after another without a gap, written after the generation began. Two different ones at the
   * same offset prove nothing: the chain stops before them (and is reported).
   */
  private chainAfter(head: SessionHead, unreferenced: { info: ObjectInfo; key: SegmentKey }[]) {
    const { generation, length, createdAt } = head.current;
    const since = Date.parse(createdAt) - CLOCK_SKEW_MS;
    const candidates = unreferenced.filter(
      (s) => s.key.generation === generation && s.key.start >= length && s.info.modifiedAt.getTime() >= since,
    );
    const chain: typeof candidates = [];
    for (let at = length; ; ) {
      const next = candidates.filter((s) => s.key.start === at);
      if (next.length === 0) break;
      const ends = new Set(next.map((s) => s.key.end));
      if (ends.size > 1) {
        this.report({
          kind: "head-behind",
          userId: head.userId,
          sessionId: head.sessionId,
          message: `stored segments at offset ${at} disagree on where they end: not rolled forward past ${at}`,
          problem: true,
        });
        break;
      }
      // Same range: retries of one append (their bytes are compared when appended).
      chain.push(next[0] as (typeof candidates)[number]);
      at = (next[0] as (typeof candidates)[number]).key.end;
    }
    return chain;
  }

  /** Appends the chain's bytes at the head's length through the normal commit. @returns whether all were committed */
  private async rollForward(head: SessionHead, chain: { info: ObjectInfo; key: SegmentKey }[]): Promise<boolean> {
    const from = head.current.length;
    const to = (chain[chain.length - 1] as (typeof chain)[number]).key.end;
    const at = { userId: head.userId, sessionId: head.sessionId };
    const message = `the head ends at ${from}, stored segments no head names continue it to ${to}`;
    if (!this.options.repair) {
      this.report({ kind: "head-behind", ...at, message, problem: true });
      return false;
    }
    const appender = new Appender(this.stores);
    try {
      for (const link of chain) {
        const body = await this.stores.blobs.get(link.info.key);
        await appender.append({ ...at, offset: link.key.start, body, generation: link.key.generation });
      }
    } catch (error) {
      this.report({
        kind: "head-behind",
        ...at,
        message: `${message}; rolling forward failed: ${(error as Error).message}`,
        problem: true,
      });
      return false;
    }
    this.report({ kind: "head-behind", ...at, message: `${message}: rolled forward`, problem: true, repaired: true });
    return true;
  }

  /** Removes an unreferenced segment once a fresh read of the head shows that nothing names it yet. */
  private async removeOrphan(userId: string, sessionId: string, key: string): Promise<boolean> {
    const head = await this.stores.meta.getHead(userId, sessionId);
    const archived = head ? await this.stores.meta.getArchived(userId, sessionId) : [];
    if (referenced(head, archived).has(key)) return false;
    await this.stores.blobs.delete([key]);
    return true;
  }
}

/** The items from a random one on, going round (a run stopped by its budget leaves others first for the next). */
function fromRandom<T>(items: readonly T[]): T[] {
  const start = Math.floor(Math.random() * items.length);
  return [...items.slice(start), ...items.slice(0, start)];
}

/**
 * Checks (and with `repair`, repairs) the stored sessions of one user or of every user.
 *
 * @example
 * ```ts
 * const report = await verifyStores(stores, { deep: true, repair: true, minAgeMs: 0 });
 * process.exitCode = report.wrong > 0 ? 1 : 0;
 * ```
 */
export async function verifyStores(stores: Stores, options: VerifyOptions = {}): Promise<VerifyReport> {
  const now = (options.now ?? (() => new Date()))().getTime();
  const cutoff = now - (options.minAgeMs ?? SWEEP_MIN_AGE_MS);
  const findings: Finding[] = [];
  let young = 0;
  const report = (finding: Omit<Finding, "repaired"> & { repaired?: boolean }) => {
    const full: Finding = { ...finding, repaired: finding.repaired ?? false };
    findings.push(full);
    options.onFinding?.(full);
  };
  const deadline = options.budgetMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.budgetMs;
  const listed = await listObjects(stores, options);
  const sessions = await sessionsToVisit(stores, listed, options);
  const pass = new SessionPass(stores, options, listed, cutoff, report, () => young++);
  const order = options.budgetMs === undefined ? sessions : fromRandom(sessions);
  let left = await eachAtOnce(order, PARALLEL, ([userId, sessionId]) => pass.run(userId, sessionId), deadline);

  for (const [i, info] of listed.uploads.entries()) {
    if (Date.now() >= deadline) {
      left += listed.uploads.length - i;
      break;
    }
    if (info.modifiedAt.getTime() > cutoff) {
      young++;
      continue;
    }
    if (options.repair) await stores.blobs.delete([info.key]);
    const { userId } = parseUploadKey(info.key) as { userId: string };
    report({
      kind: "abandoned-upload",
      userId,
      key: info.key,
      message: `an upload no append took (${info.size} bytes, written ${info.modifiedAt.toISOString()})`,
      problem: true,
      repaired: options.repair,
    });
  }
  for (const info of listed.unknown) {
    report({
      kind: "unknown-object",
      key: info.key,
      message: "not a kind of object pisync writes: left alone",
      problem: false,
    });
  }
  const temporary = ((await options.temporary?.listTemporary()) ?? []).filter(
    (info) => !options.userId || Object.values(PREFIXES).some((p) => info.key.startsWith(`${p}${options.userId}/`)),
  );
  for (const info of temporary) {
    if (info.modifiedAt.getTime() > cutoff) {
      young++;
      continue;
    }
    if (options.repair) await options.temporary?.deleteTemporary([info.key]);
    report({
      kind: "temp-file",
      key: info.key,
      message: `the temporary file of a write that never finished (${info.size} bytes)`,
      problem: true,
      repaired: options.repair,
    });
  }
  if (options.deep) {
    // Heads written before the library's list index was kept: the list would not show them.
    for (const userId of options.userId ? [options.userId] : await stores.meta.users()) {
      const missing = await stores.meta.fillCardList(userId, { check: !options.repair });
      if (!missing) continue;
      report({
        kind: "unlisted",
        userId,
        message: `${missing} session${missing === 1 ? "" : "s"} missing from the library's list`,
        problem: true,
        repaired: options.repair,
      });
    }
  }
  const wrong = findings.filter((finding) => finding.problem && !finding.repaired).length;
  return { findings, sessions: sessions.length, objects: listed.objects.size, young, wrong, left };
}
