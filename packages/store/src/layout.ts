/**
 * The storage layout, in one place: the blob keys (format/parse pairs with fixed-width hex
 * offsets, so listing order is byte order, as Litestream names its files), their prefixes, and
 * the metadata table's schema. The adapters, the core and the CDK stack (its bucket rules and
 * IAM grants) all read it from here.
 */

/** The top-level blob prefixes, each with its trailing slash. */
export const PREFIXES = {
  /** Session bytes: `sessions/<user>/<session>/<generation>/<start>-<end>-<nonce>`. */
  sessions: "sessions/",
  /** Large lines uploaded before the append that commits them: `uploads/<user>/<upload>`. */
  uploads: "uploads/",
  /** Content-addressed attachments (oh-my-pi's images): `blobs/<user>/<sha256>`. */
  blobs: "blobs/",
  /** A user's search index (derived from the sessions' bytes): `search/<user>/<version>-<nonce>.sqlite`. */
  search: "search/",
  /**
   * Sessions' tree indexes as of one version (derived from the index pages, rebuilt when lost):
   * `indexes/<user>/<session>/<created>/<generation>/<length>.json.gz`.
   */
  indexes: "indexes/",
} as const;

/** The metadata table: one table, `pk`/`sk` keys, one index for "by user, newest first" listings. */
export const TABLE_SCHEMA = {
  partitionKey: "pk",
  sortKey: "sk",
  index: { name: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk" },
  /** Attribute holding an epoch-seconds expiry (DynamoDB TTL). */
  ttlAttribute: "expiresAt",
} as const;

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
/** Ids are checked to `[A-Za-z0-9._-]` before they reach a key (see core's `checkId`). */
const ID = "([A-Za-z0-9][A-Za-z0-9._-]*)";

/** Prefix of every blob of a session. */
export function sessionPrefix(userId: string, sessionId: string): string {
  return `${PREFIXES.sessions}${userId}/${sessionId}/`;
}

/** The parts of a segment key. */
export interface SegmentKey {
  userId: string;
  sessionId: string;
  generation: number;
  /** Bytes [start, end) of the generation. */
  start: number;
  end: number;
  /** Keeps racing writers of the same range apart. */
  nonce: string;
}

/**
 * A segment's key: bytes [start, end) of a generation; {@link parseSegmentKey} reads it back.
 * @example segmentKey("u", "s", 1, 0, 16, "9f2c") // "sessions/u/s/00000001/0000000000000000-0000000000000010-9f2c"
 */
export function segmentKey(
  userId: string,
  sessionId: string,
  generation: number,
  start: number,
  end: number,
  nonce: string,
): string {
  return `${sessionPrefix(userId, sessionId)}${hex(generation, 8)}/${hex(start, 16)}-${hex(end, 16)}-${nonce}`;
}

const SEGMENT = new RegExp(
  `^${PREFIXES.sessions}${ID}/${ID}/([0-9a-f]{8})/([0-9a-f]{16})-([0-9a-f]{16})-([A-Za-z0-9_-]+)$`,
);

/** The parts of a segment key, or undefined when `key` is not one. */
export function parseSegmentKey(key: string): SegmentKey | undefined {
  const m = SEGMENT.exec(key);
  if (!m) return undefined;
  const [, userId, sessionId, generation, start, end, nonce] = m as unknown as string[];
  return {
    userId: userId as string,
    sessionId: sessionId as string,
    generation: Number.parseInt(generation as string, 16),
    start: Number.parseInt(start as string, 16),
    end: Number.parseInt(end as string, 16),
    nonce: nonce as string,
  };
}

/** Where a large line is uploaded before an append commits it. */
export function uploadKey(userId: string, uploadId: string): string {
  return `${PREFIXES.uploads}${userId}/${uploadId}`;
}

const UPLOAD = new RegExp(`^${PREFIXES.uploads}${ID}/${ID}$`);

/** The user and upload of an upload key, or undefined when `key` is not one. */
export function parseUploadKey(key: string): { userId: string; uploadId: string } | undefined {
  const m = UPLOAD.exec(key);
  return m ? { userId: m[1] as string, uploadId: m[2] as string } : undefined;
}

/** Where an attachment is kept, by the SHA-256 of its bytes (lowercase hex). */
export function blobKey(userId: string, sha256: string): string {
  return `${PREFIXES.blobs}${userId}/${sha256}`;
}

const BLOB = new RegExp(`^${PREFIXES.blobs}${ID}/([0-9a-f]{64})$`);

/** The user and hash of an attachment key, or undefined when `key` is not one. */
export function parseBlobKey(key: string): { userId: string; sha256: string } | undefined {
  const m = BLOB.exec(key);
  return m ? { userId: m[1] as string, sha256: m[2] as string } : undefined;
}

/**
 * Where a version of a user's search index is kept (an immutable SQLite FTS5 file): versions
 * count up, the nonce keeps two indexers' uploads of the same version apart.
 * @example searchIndexKey("u", 3, "9f2c") // "search/u/0000000000000003-9f2c.sqlite"
 */
export function searchIndexKey(userId: string, version: number, nonce: string): string {
  return `${PREFIXES.search}${userId}/${hex(version, 16)}-${nonce}.sqlite`;
}

const SEARCH_INDEX = new RegExp(`^${PREFIXES.search}${ID}/([0-9a-f]{16})-([A-Za-z0-9_-]+)\\.sqlite$`);

const SEARCH_OBJECT = new RegExp(`^${PREFIXES.search}${ID}/(?:log|chunk|base)/[A-Za-z0-9_.-]+$`);

/** Whether `key` is one of the objects of a user's search index as the AWS adapter keeps it (log, chunk, manifest). */
export function isSearchObjectKey(key: string): boolean {
  return SEARCH_OBJECT.test(key) || parseSearchIndexKey(key) !== undefined;
}

/** The parts of a search index key, or undefined when `key` is not one. */
export function parseSearchIndexKey(key: string): { userId: string; version: number; nonce: string } | undefined {
  const m = SEARCH_INDEX.exec(key);
  return m
    ? { userId: m[1] as string, version: Number.parseInt(m[2] as string, 16), nonce: m[3] as string }
    : undefined;
}

/** Prefix of every persisted tree index of a session, of any life of it. */
export function sessionIndexPrefix(userId: string, sessionId: string): string {
  return `${PREFIXES.indexes}${userId}/${sessionId}/`;
}

/** The parts of a persisted tree index's key. */
export interface PersistedIndexKey {
  userId: string;
  sessionId: string;
  /** The session head's `createdAt`, in epoch milliseconds: a session deleted and made again is another one. */
  sessionCreated: number;
  generation: number;
  /** The index covers bytes [0, length) of the generation. */
  length: number;
}

/**
 * Where the tree index of bytes [0, length) of a generation is kept; in key order the longest
 * comes last. {@link parsePersistedIndexKey} reads it back.
 * @example persistedIndexKey("u", "s", 0, 1, 16) // "indexes/u/s/000000000000/00000001/0000000000000010.json.gz"
 */
export function persistedIndexKey(
  userId: string,
  sessionId: string,
  sessionCreated: number,
  generation: number,
  length: number,
): string {
  return `${persistedIndexPrefix(userId, sessionId, sessionCreated, generation)}${hex(length, 16)}.json.gz`;
}

/** Prefix of the persisted tree indexes of one life of a session (made at `sessionCreated`, epoch ms). */
export function sessionLifeIndexPrefix(userId: string, sessionId: string, sessionCreated: number): string {
  return `${sessionIndexPrefix(userId, sessionId)}${hex(sessionCreated, 12)}/`;
}

/** Prefix of the persisted tree indexes of one generation of one life of a session. */
export function persistedIndexPrefix(userId: string, sessionId: string, sessionCreated: number, generation: number) {
  return `${sessionLifeIndexPrefix(userId, sessionId, sessionCreated)}${hex(generation, 8)}/`;
}

const PERSISTED_INDEX = new RegExp(
  `^${PREFIXES.indexes}${ID}/${ID}/([0-9a-f]{12})/([0-9a-f]{8})/([0-9a-f]{16})\\.json\\.gz$`,
);

/** The parts of a persisted tree index's key, or undefined when `key` is not one. */
export function parsePersistedIndexKey(key: string): PersistedIndexKey | undefined {
  const m = PERSISTED_INDEX.exec(key);
  if (!m) return undefined;
  const [, userId, sessionId, created, generation, length] = m as unknown as string[];
  return {
    userId: userId as string,
    sessionId: sessionId as string,
    sessionCreated: Number.parseInt(created as string, 16),
    generation: Number.parseInt(generation as string, 16),
    length: Number.parseInt(length as string, 16),
  };
}
