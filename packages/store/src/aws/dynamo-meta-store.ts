/**
 * The metadata port on one DynamoDB table: one adapter per record family over the same table
 * (`dynamo-sessions.ts`, `dynamo-cards.ts`, `dynamo-usage.ts`, `dynamo-credentials.ts`,
 * `dynamo-sign-in.ts`, `dynamo-browser-sessions.ts`, `dynamo-shares.ts`, sharing `meta-table.ts`),
 * composed here into {@link MetaStore}.
 *
 * Items (user and session ids are validated to [A-Za-z0-9._-], so `#` separates safely):
 * - head:    pk `U#<user>`, sk `S#<session>`; gsi1 `U#<user>` / `<updatedAt>#<session>`; `card`, the
 *            library's small view of it (JSON), read alone when a whole list is wanted
 * - list entry: pk `U#<user>`, sk `C#<session>`; gsi1 `UL#<user>` / `<lastAt>#<session>`; `card`
 *            without its usage, `cwd` and `mk` (the model names it answers to) for the filters:
 *            the library's list read a page at a time in its order, written (and deleted) in the
 *            same transaction as the head
 * - filter entry: pk `U#<user>`, sk `K#<session>#<key hash>`; gsi1 `UK#<user>#<key hash>` /
 *            `<lastAt>#<session>`: one per filter key of the session's card (`filterKeys`: its
 *            folder and the folders above it, its model names), no body, so a folder or model
 *            filter reads a page of its own index in the list's order, then those sessions'
 *            list entries (`BatchGetItem`); written in the same transaction as the head. One
 *            whose key the card no longer has is left stale (its `lastAt` old): a read drops it,
 *            as the list entry it names no longer matches; `verify --repair` removes it
 * - page:    pk `P#<user>#<session>`, sk `G#<generation:8 hex>#<start:16 hex>`
 * - archive: pk `P#<user>#<session>`, sk `A#<generation:8 hex>`
 * - token:   pk `T#<hash>`, sk `T`; gsi1 `UT#<user>` / `<token id>`
 * - share:   pk `H#<id>`, sk `H`; gsi1 `UH#<user>` / `<createdAt>#<id>`; TTL a month after expiry;
 *            `views` (a number, `ADD`ed atomically) and `lastViewedAt` beside `data`, which
 *            writes of the record never touch
 * - sign-in link:    pk `L#<hash>`, sk `L`; TTL a day after its expiry (redeeming marks it `redeemedBy`)
 * - device code:     pk `D#<user code>`, sk `D`; `status` and `until` (its expiry, epoch seconds) beside
 *                    `data` for the conditions; TTL a day after its expiry
 * - browser session: pk `B#<hash>`, sk `B`; gsi1 `UB#<user>` / `<createdAt>#<id>`; TTL 31 days after last use
 * A token's or browser session's last use is its own attribute `lastUsedAt` (one small update,
 * conditional on the item existing, so a touch never brings a revoked one back).
 * Bodies are JSON strings in `data`: items stay small (content lives in S3). Page bodies are
 * gzip-compressed JSON in `gz` (binary): a fifth of the size, so fewer write units and a tree
 * read in fewer, smaller queries.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { ComposedMetaStore } from "../composed-meta-store.js";
import { type AwsConnection, documentClient } from "./client.js";
import { DynamoBrowserSessionStore } from "./dynamo-browser-sessions.js";
import { DynamoCardStore } from "./dynamo-cards.js";
import { DynamoTokenStore } from "./dynamo-credentials.js";
import { type CommitItems, DynamoSessionStore } from "./dynamo-sessions.js";
import { DynamoShareStore } from "./dynamo-shares.js";
import { DynamoSignInStore } from "./dynamo-sign-in.js";
import { DynamoUsageStore } from "./dynamo-usage.js";
import { MetaTable } from "./meta-table.js";
import { UsageDayItems } from "./usage-day-items.js";

export type { CommitItems };

/**
 * The metadata port on one DynamoDB table of `TABLE_SCHEMA` (see {@link MetaStore} for the
 * contract): each method is its family's adapter's. A head read inside a family (a commit's
 * conflict, a delete, a card made from its head, a day of usage) goes through {@link getHead}.
 */
export class DynamoMetaStore extends ComposedMetaStore {
  /** Items the list queries have read (their `ScannedCount`), for tests and benchmarks. */
  readonly listReads: DynamoCardStore["listReads"];
  /** Day items insights' reports have read. */
  readonly usageReads = { items: 0 };
  /** The table's client and name, shared by every family (a repair or a test reaches the items through them). */
  readonly client: DynamoDBDocumentClient;
  readonly table: string;
  protected readonly sessions: DynamoSessionStore;
  protected readonly cards: DynamoCardStore;
  protected readonly usage: DynamoUsageStore;
  protected readonly tokens: DynamoTokenStore;
  protected readonly signIn: DynamoSignInStore;
  protected readonly browserSessions: DynamoBrowserSessionStore;
  protected readonly shares: DynamoShareStore;

  constructor(connection: AwsConnection, table: string, commitItems?: CommitItems) {
    super();
    const client = documentClient(connection);
    this.client = client;
    this.table = table;
    const meta = new MetaTable(client, table);
    const readHead = (userId: string, sessionId: string) => this.getHead(userId, sessionId);
    const days = new UsageDayItems(client, table, readHead, this.usageReads);
    this.shares = new DynamoShareStore(meta);
    this.sessions = new DynamoSessionStore(meta, days, this.shares, commitItems, readHead);
    this.cards = new DynamoCardStore(meta, days, readHead);
    this.listReads = this.cards.listReads;
    this.usage = new DynamoUsageStore(days);
    this.tokens = new DynamoTokenStore(meta);
    this.signIn = new DynamoSignInStore(meta);
    this.browserSessions = new DynamoBrowserSessionStore(meta);
  }
}
