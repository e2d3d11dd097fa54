/**
 * The storage ports in memory, for fast unit tests of the use cases. Values are copied in and
 * out (as a real store serializes them), commits are conditional on the revision like the real
 * adapters' (the contract suite holds those to the same rules), and every blob GET is counted.
 */
import {
  type BlobStore,
  type BrowserSessionRecord,
  type CardPage,
  type CardPageRequest,
  type Commit,
  cardOf,
  type DeviceCodeRecord,
  type DeviceCodeStatus,
  decodeListCursor,
  encodeListCursor,
  type GenerationState,
  type IndexPage,
  type LoginLinkRecord,
  listedCard,
  type MetaStore,
  NotFoundError,
  type ObjectInfo,
  RevisionConflictError,
  readCardPage,
  type SessionCard,
  type SessionHead,
  type ShareRecord,
  StorageUnavailableError,
  type Stores,
  type TokenRecord,
  UsageCollector,
  type UsageInRange,
} from "@pisync/store";

/** Blobs in a map; `gets` counts reads (a ranged read is one GET, as on S3). */
export class MemoryBlobStore implements BlobStore {
  readonly objects = new Map<string, Uint8Array>();
  gets = 0;
  /** Every key ever passed to `delete`. */
  readonly deleted: string[] = [];

  async put(key: string, body: Uint8Array): Promise<void> {
    this.objects.set(key, body.slice());
    this.written.set(key, new Date());
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    this.gets++;
    const stored = this.objects.get(key);
    if (!stored) throw new NotFoundError(key);
    return range ? stored.slice(range.start, Math.max(range.start, range.end)) : stored.slice();
  }

  async delete(keys: readonly string[]): Promise<void> {
    this.deleted.push(...keys);
    for (const key of keys) {
      this.objects.delete(key);
      this.written.delete(key);
    }
  }

  /** When each object was last written (the listing's `modifiedAt`). */
  readonly written = new Map<string, Date>();

  async list(prefix: string): Promise<string[]> {
    return [...this.objects.keys()].filter((key) => key.startsWith(prefix)).sort();
  }

  async listObjects(prefix: string): Promise<ObjectInfo[]> {
    return (await this.list(prefix)).map((key) => ({
      key,
      size: (this.objects.get(key) as Uint8Array).length,
      modifiedAt: this.written.get(key) ?? new Date(0),
    }));
  }

  async uploadUrl(): Promise<string | undefined> {
    return undefined;
  }
}

const copy = <T>(value: T): T => structuredClone(value);

/** Heads, pages, archives, tokens, shares, sign-in links and browser sessions in maps. */
export class MemoryMetaStore implements MetaStore {
  private readonly heads = new Map<string, SessionHead>();
  private readonly pages = new Map<string, IndexPage[]>();
  private readonly archives = new Map<string, GenerationState[]>();
  private readonly tokens = new Map<string, TokenRecord>();
  private readonly shares = new Map<string, ShareRecord>();
  private readonly loginLinks = new Map<string, LoginLinkRecord>();
  private readonly deviceCodes = new Map<string, DeviceCodeRecord>();
  private readonly browserSessions = new Map<string, BrowserSessionRecord>();
  commits = 0;
  /** Last-use writes (tokens and browser sessions), to hold them to one a minute. */
  touches = 0;

  private storeId: string | undefined;

  async serverId(candidate: string): Promise<string> {
    this.storeId ??= candidate;
    return this.storeId;
  }

  async users(): Promise<string[]> {
    return [...new Set([...this.heads.values()].map((head) => head.userId))];
  }

  async getHead(userId: string, sessionId: string): Promise<SessionHead | undefined> {
    const head = this.heads.get(`${userId}/${sessionId}`);
    return head && copy(head);
  }

  async commit({ head, expectedRevision, pages, archive }: Commit): Promise<void> {
    const key = `${head.userId}/${head.sessionId}`;
    const stored = this.heads.get(key);
    if ((stored?.revision ?? null) !== expectedRevision) throw new RevisionConflictError(stored && copy(stored));
    this.commits++;
    this.heads.set(key, copy(head));
    for (const page of pages ?? []) {
      const pageKey = `${key}/${page.generation}`;
      this.pages.set(pageKey, [...(this.pages.get(pageKey) ?? []), copy(page)]);
    }
    if (archive) this.archives.set(key, [...(this.archives.get(key) ?? []), copy(archive)]);
  }

  async listHeads(userId: string, options: { limit: number; cursor?: string }) {
    const all = [...this.heads.values()]
      .filter((h) => h.userId === userId)
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.sessionId.localeCompare(a.sessionId));
    const from = options.cursor ? Number(options.cursor) : 0;
    const heads = all.slice(from, from + options.limit).map(copy);
    return from + options.limit < all.length ? { heads, cursor: String(from + options.limit) } : { heads };
  }

  async listCards(userId: string): Promise<SessionCard[]> {
    return [...this.heads.values()].filter((h) => h.userId === userId).map(cardOf);
  }

  async listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    const collector = new UsageCollector();
    for (const head of this.heads.values()) {
      if (head.userId === userId) collector.addHead(head.sessionId, head.summary, range);
    }
    return collector.result();
  }

  async listCardPage(userId: string, request: CardPageRequest): Promise<CardPage> {
    // Code-unit order, as the real indexes compare (not the locale's).
    const order = (a: SessionCard, b: SessionCard) =>
      a.lastAt === b.lastAt ? (a.sessionId < b.sessionId ? 1 : -1) : a.lastAt < b.lastAt ? 1 : -1;
    const cards = (await this.listCards(userId)).map(listedCard).sort(order);
    return readCardPage(userId, request, async (after, count) => {
      const start = after
        ? cards.findIndex((c) => c.lastAt < after[0] || (c.lastAt === after[0] && c.sessionId < after[1]))
        : 0;
      const from = start < 0 ? cards.length : start;
      const read = cards.slice(from, from + count);
      const last = read[read.length - 1];
      return {
        cards: read,
        scanned: read.length,
        last: last && [last.lastAt, last.sessionId],
        end: from + count >= cards.length,
      };
    });
  }

  async getCards(userId: string, sessionIds: readonly string[]): Promise<SessionCard[]> {
    return (await this.listCards(userId)).filter((c) => sessionIds.includes(c.sessionId)).map(listedCard);
  }

  async fillCardList(_userId: string, _options?: { check?: boolean }): Promise<number> {
    return 0;
  }

  async getPages(userId: string, sessionId: string, generation: number, from = 0): Promise<IndexPage[]> {
    const pages = this.pages.get(`${userId}/${sessionId}/${generation}`) ?? [];
    return pages
      .filter((p) => p.start >= from)
      .sort((a, b) => a.start - b.start)
      .map(copy);
  }

  async getArchived(userId: string, sessionId: string): Promise<GenerationState[]> {
    return (this.archives.get(`${userId}/${sessionId}`) ?? []).map(copy);
  }

  async deleteSession(userId: string, sessionId: string): Promise<void> {
    const key = `${userId}/${sessionId}`;
    this.heads.delete(key);
    this.archives.delete(key);
    for (const pageKey of [...this.pages.keys()]) if (pageKey.startsWith(`${key}/`)) this.pages.delete(pageKey);
  }

  async putToken(token: TokenRecord): Promise<void> {
    if (this.tokens.has(token.hash)) throw new Error("token hash exists");
    this.tokens.set(token.hash, copy(token));
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const token = this.tokens.get(hash);
    return token && copy(token);
  }

  async listTokens(userId: string): Promise<TokenRecord[]> {
    return [...this.tokens.values()].filter((t) => t.userId === userId).map(copy);
  }

  async listTokenPage(userId: string, page: { limit: number; cursor?: string }) {
    const after = page.cursor ? decodeListCursor(userId, page.cursor)[1] : "";
    const all = (await this.listTokens(userId)).sort((a, b) => a.id.localeCompare(b.id)).filter((t) => t.id > after);
    const tokens = all.slice(0, page.limit);
    const last = tokens[tokens.length - 1];
    return all.length > page.limit ? { tokens, cursor: encodeListCursor(userId, [last.id, last.id]) } : { tokens };
  }

  async deleteToken(userId: string, id: string): Promise<boolean> {
    const token = [...this.tokens.values()].find((t) => t.userId === userId && t.id === id);
    if (token) this.tokens.delete(token.hash);
    return Boolean(token);
  }

  async renameToken(userId: string, id: string, name: string): Promise<boolean> {
    const token = [...this.tokens.values()].find((t) => t.userId === userId && t.id === id);
    if (token) token.name = name;
    return Boolean(token);
  }

  async touchToken(hash: string, lastUsedAt: string): Promise<void> {
    this.touches++;
    const token = this.tokens.get(hash);
    if (token) token.lastUsedAt = lastUsedAt;
  }

  async putLoginLink(link: LoginLinkRecord): Promise<void> {
    this.loginLinks.set(link.hash, copy(link));
  }

  async consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined> {
    const link = this.loginLinks.get(hash);
    this.loginLinks.delete(hash);
    return link && copy(link);
  }

  async putDeviceCode(record: DeviceCodeRecord): Promise<boolean> {
    const stored = this.deviceCodes.get(record.userCode);
    if (stored && Date.parse(stored.expiresAt) > Date.parse(record.createdAt)) return false;
    this.deviceCodes.set(record.userCode, copy(record));
    return true;
  }

  async getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined> {
    const stored = this.deviceCodes.get(userCode);
    return stored && copy(stored);
  }

  async updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean> {
    if (this.deviceCodes.get(record.userCode)?.status !== expected) return false;
    this.deviceCodes.set(record.userCode, copy(record));
    return true;
  }

  async consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined> {
    const stored = this.deviceCodes.get(userCode);
    if (stored?.status !== expected) return undefined;
    this.deviceCodes.delete(userCode);
    return stored;
  }

  async putBrowserSession(session: BrowserSessionRecord): Promise<void> {
    this.browserSessions.set(session.hash, copy(session));
  }

  async findBrowserSession(hash: string): Promise<BrowserSessionRecord | undefined> {
    const session = this.browserSessions.get(hash);
    return session && copy(session);
  }

  async listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]> {
    return [...this.browserSessions.values()]
      .filter((s) => s.userId === userId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map(copy);
  }

  async listBrowserSessionPage(userId: string, page: { limit: number; cursor?: string }) {
    const at = page.cursor ? decodeListCursor(userId, page.cursor).join("#") : "";
    const all = (await this.listBrowserSessions(userId)).filter((s) => `${s.createdAt}#${s.id}` > at);
    const sessions = all.slice(0, page.limit);
    const last = sessions[sessions.length - 1];
    return all.length > page.limit
      ? { sessions, cursor: encodeListCursor(userId, [last.createdAt, last.id]) }
      : { sessions };
  }

  async touchBrowserSession(hash: string, lastUsedAt: string): Promise<void> {
    this.touches++;
    const session = this.browserSessions.get(hash);
    if (session) session.lastUsedAt = lastUsedAt;
  }

  async deleteBrowserSession(userId: string, id: string): Promise<boolean> {
    const session = [...this.browserSessions.values()].find((s) => s.userId === userId && s.id === id);
    if (session) this.browserSessions.delete(session.hash);
    return Boolean(session);
  }

  async deleteBrowserSessions(userId: string): Promise<number> {
    const mine = [...this.browserSessions.values()].filter((s) => s.userId === userId);
    for (const session of mine) this.browserSessions.delete(session.hash);
    return mine.length;
  }

  async putShare(share: ShareRecord): Promise<void> {
    const stored = this.shares.get(share.id);
    const { views: _views, lastViewedAt: _last, downloads: _downloads, ...record } = copy(share);
    this.shares.set(share.id, {
      ...record,
      views: stored?.views ?? 0,
      lastViewedAt: stored?.lastViewedAt,
      downloads: stored?.downloads ?? 0,
    });
  }

  async recordShareView(id: string, at: string): Promise<void> {
    const stored = this.shares.get(id);
    if (stored) this.shares.set(id, { ...stored, views: (stored.views ?? 0) + 1, lastViewedAt: at });
  }

  async recordShareDownload(id: string): Promise<void> {
    const stored = this.shares.get(id);
    if (stored) this.shares.set(id, { ...stored, downloads: (stored.downloads ?? 0) + 1 });
  }

  async getShare(id: string): Promise<ShareRecord | undefined> {
    const share = this.shares.get(id);
    return share && copy(share);
  }

  async listShares(userId: string): Promise<ShareRecord[]> {
    return [...this.shares.values()]
      .filter((s) => s.userId === userId)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .map(copy);
  }

  async listSharePage(userId: string, page: { limit: number; cursor?: string }) {
    const all = (await this.listShares(userId)).sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );
    const after = page.cursor ? decodeListCursor(userId, page.cursor) : undefined;
    const rest = after
      ? all.filter((s) => s.createdAt < after[0] || (s.createdAt === after[0] && s.id < after[1]))
      : all;
    const shares = rest.slice(0, page.limit);
    const last = shares[shares.length - 1];
    return rest.length > page.limit
      ? { shares, cursor: encodeListCursor(userId, [last.createdAt, last.id]) }
      : { shares };
  }
}

/** Both ports in memory. */
export function memoryStores(): Stores & { blobs: MemoryBlobStore; meta: MemoryMetaStore } {
  return { blobs: new MemoryBlobStore(), meta: new MemoryMetaStore() };
}

/**
 * What goes wrong with one sending of a commit, as a real store and network do it:
 * - `lost-after`: applied, then the answer is lost (a socket hang-up after DynamoDB applied it);
 * - `lost-before`: the request is lost before the store sees it (nothing applied);
 * - `throttled`: refused for throughput after the client's retries (nothing applied);
 * - `retried-after`: applied, then the client's own retry of it meets its write and comes back
 *   as a failed condition carrying the stored head.
 */
export type CommitFault = "lost-after" | "lost-before" | "throttled" | "retried-after";

/**
 * Makes the next sendings of `meta.commit` fail as `faults` says, one fault per sending in
 * order (`undefined` or the end of the list: the commit goes through). Returns what was sent.
 */
export function faultyCommits(meta: MemoryMetaStore, faults: (CommitFault | undefined)[]): { sent: Commit[] } {
  const commit = meta.commit.bind(meta);
  const sent: Commit[] = [];
  meta.commit = async (request: Commit) => {
    sent.push(request);
    const fault = faults.shift();
    if (fault === "lost-before") throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    if (fault === "throttled") throw new StorageUnavailableError("ThrottlingException: rate exceeded");
    await commit(request);
    if (fault === "lost-after") throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    if (fault === "retried-after") {
      throw new RevisionConflictError(await meta.getHead(request.head.userId, request.head.sessionId));
    }
  };
  return { sent };
}
