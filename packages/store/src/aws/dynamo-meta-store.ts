/**
 * Session metadata in one DynamoDB table. A commit is one TransactWriteItems: the head put,
 * conditional on its revision, with the new index pages and any archived generation; all or
 * nothing. A failed condition comes back with the stored head (ReturnValuesOnConditionCheckFailure),
 * so a conflict costs no second read.
 *
 * Items (user and session ids are validated to [A-Za-z0-9._-], so `#` separates safely):
 * - head:    pk `U#<user>`, sk `S#<session>`; gsi1 `U#<user>` / `<updatedAt>#<session>`
 * - page:    pk `P#<user>#<session>`, sk `G#<generation:8 hex>#<start:16 hex>`
 * - archive: pk `P#<user>#<session>`, sk `A#<generation:8 hex>`
 * - token:   pk `T#<hash>`, sk `T`; gsi1 `UT#<user>` / `<token id>`
 * - share:   pk `H#<id>`, sk `H`; gsi1 `UH#<user>` / `<createdAt>#<id>`; TTL a month after expiry
 * Bodies are JSON strings in `data`: items stay small (content lives in S3). Page bodies are
 * gzip-compressed JSON in `gz` (binary): a fifth of the size, so fewer write units and a tree
 * read in fewer, smaller queries.
 */

import { gunzipSync, gzipSync } from "node:zlib";
import { RevisionConflictError } from "../errors.js";
import type { Commit, GenerationState, IndexPage, MetaStore, SessionHead, ShareRecord, TokenRecord } from "../ports.js";
import { type AwsConnection, AwsError, jsonCall } from "./client.js";
import { TTL_ATTRIBUTE } from "./table.js";

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const sessionPk = (userId: string, sessionId: string) => `P#${userId}#${sessionId}`;
const MONTH_SECONDS = 30 * 24 * 3600;

/** DynamoDB's typed values, for the three types this table holds. */
type AttributeValue = { S: string } | { N: string } | { B: string };
type Item = Record<string, AttributeValue>;
type Value = string | number | Uint8Array;

function attribute(value: Value): AttributeValue {
  if (typeof value === "string") return { S: value };
  if (typeof value === "number") return { N: String(value) };
  return { B: Buffer.from(value).toString("base64") };
}
function item(values: Record<string, Value>): Item {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, attribute(value)]));
}
const key = (pk: string, sk: string) => item({ pk, sk });
const headKey = (userId: string, sessionId: string) => key(`U#${userId}`, `S#${sessionId}`);
/** The JSON body of an item (`data`). */
const dataOf = <T>(stored: Item): T => JSON.parse((stored.data as { S: string }).S) as T;

interface QueryInput {
  IndexName?: string;
  KeyConditionExpression: string;
  ExpressionAttributeValues: Item;
  ScanIndexForward?: boolean;
  Limit?: number;
  ExclusiveStartKey?: Item;
  ProjectionExpression?: string;
  ConsistentRead?: boolean;
}
interface QueryOutput {
  Items?: Item[];
  LastEvaluatedKey?: Item;
}

/** A listing cursor is the last key of a page; one from a client is checked to be a key of that listing. */
function decodeCursor(cursor: string | undefined, gsi1pk: string): Item | undefined {
  if (!cursor) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Record<string, unknown>;
    const names = ["pk", "sk", "gsi1pk", "gsi1sk"];
    const valid =
      Object.keys(parsed).length === names.length &&
      names.every((name) => typeof (parsed[name] as { S?: unknown } | undefined)?.S === "string") &&
      (parsed.gsi1pk as { S: string }).S === gsi1pk;
    return valid ? (parsed as Item) : undefined;
  } catch {
    return undefined;
  }
}

export class DynamoMetaStore implements MetaStore {
  constructor(
    private readonly connection: AwsConnection,
    private readonly table: string,
  ) {}

  private call<T>(operation: string, input: Record<string, unknown>): Promise<T> {
    return jsonCall<T>(this.connection, "dynamodb", `DynamoDB_20120810.${operation}`, input);
  }

  private async getItem(Key: Item, ConsistentRead = false): Promise<Item | undefined> {
    const result = await this.call<{ Item?: Item }>("GetItem", { TableName: this.table, Key, ConsistentRead });
    return result.Item;
  }

  private async query(input: QueryInput): Promise<QueryOutput> {
    return this.call<QueryOutput>("Query", { TableName: this.table, ...input });
  }

  private async queryAll(input: QueryInput): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.query({ ...input, ExclusiveStartKey: start });
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  async getHead(userId: string, sessionId: string): Promise<SessionHead | undefined> {
    const stored = await this.getItem(headKey(userId, sessionId), true);
    return stored ? dataOf<SessionHead>(stored) : undefined;
  }

  async commit(commit: Commit): Promise<void> {
    const { head } = commit;
    const items: Record<string, unknown>[] = [
      {
        Put: {
          TableName: this.table,
          Item: {
            ...headKey(head.userId, head.sessionId),
            ...item({
              gsi1pk: `U#${head.userId}`,
              gsi1sk: `${head.updatedAt}#${head.sessionId}`,
              revision: head.revision,
              data: JSON.stringify(head),
            }),
          },
          ...(commit.expectedRevision === null
            ? { ConditionExpression: "attribute_not_exists(pk)" }
            : {
                ConditionExpression: "revision = :expected",
                ExpressionAttributeValues: { ":expected": attribute(commit.expectedRevision) },
              }),
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
    ];
    const pk = sessionPk(head.userId, head.sessionId);
    for (const page of commit.pages ?? []) {
      items.push({
        Put: {
          TableName: this.table,
          Item: item({
            pk,
            sk: `G#${hex(page.generation, 8)}#${hex(page.start, 16)}`,
            gz: gzipSync(JSON.stringify(page)),
          }),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      });
    }
    if (commit.archive) {
      items.push({
        Put: {
          TableName: this.table,
          Item: item({ pk, sk: `A#${hex(commit.archive.generation, 8)}`, data: JSON.stringify(commit.archive) }),
        },
      });
    }
    try {
      await this.call("TransactWriteItems", { TransactItems: items });
    } catch (error) {
      if (error instanceof AwsError && error.code === "TransactionCanceledException") {
        const reasons = error.details.CancellationReasons as { Code?: string; Item?: Item }[] | undefined;
        const reason = reasons?.[0];
        // Another transaction on the head at the same moment lost us the race just the same.
        if (reasons?.some((r) => r.Code === "TransactionConflict")) {
          throw new RevisionConflictError(await this.getHead(head.userId, head.sessionId));
        }
        if (reason?.Code === "ConditionalCheckFailed") {
          const stored = reason.Item?.data
            ? dataOf<SessionHead>(reason.Item)
            : await this.getHead(head.userId, head.sessionId);
          throw new RevisionConflictError(stored);
        }
      }
      throw error;
    }
  }

  async listHeads(userId: string, options: { limit: number; cursor?: string }) {
    const gsi1pk = `U#${userId}`;
    const result = await this.query({
      IndexName: "gsi1",
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: item({ ":pk": gsi1pk }),
      ScanIndexForward: false,
      Limit: options.limit,
      ExclusiveStartKey: decodeCursor(options.cursor, gsi1pk),
    });
    const heads = (result.Items ?? []).map((stored) => dataOf<SessionHead>(stored));
    return result.LastEvaluatedKey
      ? { heads, cursor: Buffer.from(JSON.stringify(result.LastEvaluatedKey)).toString("base64url") }
      : { heads };
  }

  async getPages(userId: string, sessionId: string, generation: number, from = 0): Promise<IndexPage[]> {
    // Fixed-width hex keeps sort keys in byte order: one range query, from `from` to the generation's end.
    const items = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
      ExpressionAttributeValues: item({
        ":pk": sessionPk(userId, sessionId),
        ":from": `G#${hex(generation, 8)}#${hex(from, 16)}`,
        ":to": `G#${hex(generation, 8)}#~`,
      }),
      ConsistentRead: true,
    });
    return items.map(
      (stored) =>
        JSON.parse(gunzipSync(Buffer.from((stored.gz as { B: string }).B, "base64")).toString("utf8")) as IndexPage,
    );
  }

  async getArchived(userId: string, sessionId: string): Promise<GenerationState[]> {
    const items = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: item({ ":pk": sessionPk(userId, sessionId), ":prefix": "A#" }),
      ConsistentRead: true,
    });
    return items.map((stored) => dataOf<GenerationState>(stored));
  }

  async deleteSession(userId: string, sessionId: string, revokedAt: string): Promise<void> {
    // The head's removal and the revocation of the session's shares are one transaction (up to
    // 100 items; a user with more live shares of one session has the rest revoked just before).
    const revoked = (await this.listShares(userId))
      .filter((share) => share.sessionId === sessionId && !share.revokedAt)
      .map((share) => ({ Put: { TableName: this.table, Item: this.shareItem({ ...share, revokedAt }) } }));
    const commitHead = [{ Delete: { TableName: this.table, Key: headKey(userId, sessionId) } }];
    const early = revoked.slice(0, Math.max(0, revoked.length - 99));
    for (let i = 0; i < early.length; i += 100) {
      await this.call("TransactWriteItems", { TransactItems: early.slice(i, i + 100) });
    }
    await this.call("TransactWriteItems", { TransactItems: [...commitHead, ...revoked.slice(early.length)] });
    // Then the pages and archives, which nothing reaches without the head.
    const keys = await this.queryAll({
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: item({ ":pk": sessionPk(userId, sessionId) }),
      ProjectionExpression: "pk, sk",
    });
    // BatchWriteItem takes 25 requests at most; unprocessed ones are retried.
    for (let i = 0; i < keys.length; i += 25) {
      let requests: unknown[] | undefined = keys.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests && requests.length > 0 && attempt < 8; attempt++) {
        const result: { UnprocessedItems?: Record<string, unknown[]> } = await this.call("BatchWriteItem", {
          RequestItems: { [this.table]: requests },
        });
        requests = result.UnprocessedItems?.[this.table];
        if (requests?.length) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
      if (requests?.length) throw new Error(`could not delete ${requests.length} items of session ${sessionId}`);
    }
  }

  async putToken(token: TokenRecord): Promise<void> {
    await this.call("PutItem", {
      TableName: this.table,
      Item: item({
        pk: `T#${token.hash}`,
        sk: "T",
        gsi1pk: `UT#${token.userId}`,
        gsi1sk: token.id,
        data: JSON.stringify(token),
      }),
      ConditionExpression: "attribute_not_exists(pk)",
    });
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const stored = await this.getItem(key(`T#${hash}`, "T"));
    return stored ? dataOf<TokenRecord>(stored) : undefined;
  }

  /** The bodies of every item under one `gsi1` partition (a user's tokens, a user's shares). */
  private async listIndexed<T>(gsi1pk: string, newestFirst = false): Promise<T[]> {
    const items = await this.queryAll({
      IndexName: "gsi1",
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: item({ ":pk": gsi1pk }),
      ScanIndexForward: !newestFirst,
    });
    return items.map((stored) => dataOf<T>(stored));
  }

  listTokens(userId: string): Promise<TokenRecord[]> {
    return this.listIndexed(`UT#${userId}`);
  }

  async deleteToken(userId: string, id: string): Promise<boolean> {
    const token = (await this.listTokens(userId)).find((t) => t.id === id);
    if (!token) return false;
    await this.call("DeleteItem", { TableName: this.table, Key: key(`T#${token.hash}`, "T") });
    return true;
  }

  /** A share's item: by id, listed under its user, kept a month past its expiry. */
  private shareItem(share: ShareRecord): Item {
    return item({
      pk: `H#${share.id}`,
      sk: "H",
      gsi1pk: `UH#${share.userId}`,
      gsi1sk: `${share.createdAt}#${share.id}`,
      [TTL_ATTRIBUTE]: Math.floor(Date.parse(share.expiresAt) / 1000) + MONTH_SECONDS,
      data: JSON.stringify(share),
    });
  }

  async putShare(share: ShareRecord): Promise<void> {
    await this.call("PutItem", { TableName: this.table, Item: this.shareItem(share) });
  }

  async getShare(id: string): Promise<ShareRecord | undefined> {
    const stored = await this.getItem(key(`H#${id}`, "H"), true);
    return stored ? dataOf<ShareRecord>(stored) : undefined;
  }

  listShares(userId: string): Promise<ShareRecord[]> {
    return this.listIndexed(`UH#${userId}`, true);
  }
}
