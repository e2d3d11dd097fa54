/**
 * The one DynamoDB table of `TABLE_SCHEMA` the metadata adapters share (`dynamo-*.ts`, one per
 * port): its client and name, the item helpers and the reads and writes every family makes. The
 * item layout of the whole table is described in `dynamo-meta-store.ts`.
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { TABLE_SCHEMA } from "../layout.js";
import { queryAll, untilProcessed } from "./client.js";

/** An item as the document client gives it: plain strings, numbers and bytes. */
export type Item = Record<string, unknown>;
/** One item of a TransactWriteItems. */
export type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];
type QueryInput = Omit<QueryCommandInput, "TableName">;
type WriteRequest = NonNullable<BatchWriteCommandInput["RequestItems"]>[string][number];

/** The table's one secondary index. */
export const GSI = TABLE_SCHEMA.index.name;
/** Items one TransactWriteItems may hold. */
export const TRANSACTION_ITEMS = 100;
export const DAY_SECONDS = 24 * 3600;

/** An item's key. */
export const key = (pk: string, sk: string) => ({ pk, sk });
/** The JSON body of an item (`data`). */
export const dataOf = <T>(stored: Item): T => JSON.parse(stored.data as string) as T;
/** The JSON body of a token or browser session item, with its last use (kept beside it). */
export const usedDataOf = <T>(stored: Item): T =>
  typeof stored.lastUsedAt === "string" ? { ...dataOf<T>(stored), lastUsedAt: stored.lastUsedAt } : dataOf<T>(stored);
export const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The metadata table: one client and one table name, shared by every family's adapter. */
export class MetaTable {
  constructor(
    readonly client: DynamoDBDocumentClient,
    readonly name: string,
  ) {}

  /** A conditional write's answer, or `undefined` when its condition failed (nothing was written). */
  async unlessConditionFails<T>(write: Promise<T>): Promise<T | undefined> {
    try {
      return await write;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** One item by key (consistently when asked). */
  async getItem(Key: Item, ConsistentRead = false): Promise<Item | undefined> {
    const result = await this.client.send(new GetCommand({ TableName: this.name, Key, ConsistentRead }));
    return result.Item;
  }

  /** One Query page of the table. */
  query(input: QueryInput) {
    return this.client.send(new QueryCommand({ TableName: this.name, ...input }));
  }

  /** Every page of a Query. */
  queryAll(input: QueryInput): Promise<Item[]> {
    return queryAll(this.client, { TableName: this.name, ...input });
  }

  /** Items by key, 100 to a BatchGetItem; unprocessed keys are asked again (see `untilProcessed`). */
  async batchGet(keys: Item[], ProjectionExpression: string): Promise<Item[]> {
    const items: Item[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      const read = async (pending: Item[]) => {
        const result = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.name]: { Keys: pending, ProjectionExpression } } }),
        );
        items.push(...(result.Responses?.[this.name] ?? []));
        return result.UnprocessedKeys?.[this.name]?.Keys as Item[] | undefined;
      };
      await untilProcessed(keys.slice(i, i + 100), read, "keys unread");
    }
    return items;
  }

  /** Deletes items by key. */
  deleteKeys(keys: Item[], what: string): Promise<void> {
    return this.writeBatch(
      keys.map((Key) => ({ DeleteRequest: { Key } })),
      `delete ${keys.length} items ${what}`,
    );
  }

  /** Writes requests 25 to a BatchWriteItem (its most); unprocessed ones are sent again (see `untilProcessed`). */
  async writeBatch(all: WriteRequest[], what: string): Promise<void> {
    for (let i = 0; i < all.length; i += 25) {
      const write = async (pending: WriteRequest[]) => {
        const result: BatchWriteCommandOutput = await this.client.send(
          new BatchWriteCommand({ RequestItems: { [this.name]: pending } }),
        );
        return result.UnprocessedItems?.[this.name];
      };
      await untilProcessed(all.slice(i, i + 25), write, `requests to ${what}`);
    }
  }

  /**
   * Creates an item that must not exist yet (its key holds a fresh secret's hash). A retry of a
   * put that was applied but whose answer was lost fails the condition: the item then holds
   * exactly what we wrote, and the put succeeded.
   */
  async putNew(Item: Item): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({ TableName: this.name, Item, ConditionExpression: "attribute_not_exists(pk)" }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const stored = await this.getItem(key(Item.pk as string, Item.sk as string), true);
      if (stored?.data !== Item.data) throw error;
    }
  }

  /** The items under one `gsi1` partition (a user's tokens, shares, browser sessions). */
  listIndexedItems(gsi1pk: string, newestFirst = false): Promise<Item[]> {
    return this.queryAll({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": gsi1pk },
      ScanIndexForward: !newestFirst,
    });
  }

  /** The bodies (with their last use) of every item under one `gsi1` partition. */
  async listIndexed<T>(gsi1pk: string, newestFirst = false): Promise<T[]> {
    return (await this.listIndexedItems(gsi1pk, newestFirst)).map((stored) => usedDataOf<T>(stored));
  }

  /** Sets an item's `lastUsedAt` (and more), only if the item still exists. */
  async touch(Key: Item, lastUsedAt: string, ttl?: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.name,
          Key,
          UpdateExpression: ttl === undefined ? "SET lastUsedAt = :at" : "SET lastUsedAt = :at, #ttl = :ttl",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":at": lastUsedAt, ...(ttl === undefined ? {} : { ":ttl": ttl }) },
          ...(ttl === undefined ? {} : { ExpressionAttributeNames: { "#ttl": TABLE_SCHEMA.ttlAttribute } }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /**
   * A page of one `gsi1` partition in ascending order, after `after` (a sort key value, read as
   * a key condition: the items' own keys hold secrets' hashes, which a cursor must not carry).
   */
  async ascendingPage(gsi1pk: string, after: string | undefined, limit: number) {
    const result = await this.query({
      IndexName: GSI,
      KeyConditionExpression: after === undefined ? "gsi1pk = :pk" : "gsi1pk = :pk AND gsi1sk > :after",
      ExpressionAttributeValues: { ":pk": gsi1pk, ...(after === undefined ? {} : { ":after": after }) },
      // One more than the page: whether another page follows.
      Limit: limit + 1,
    });
    const items = result.Items ?? [];
    return { items: items.slice(0, limit), more: items.length > limit || result.LastEvaluatedKey !== undefined };
  }
}
