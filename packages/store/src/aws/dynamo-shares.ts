/**
 * Share links on the metadata table (see {@link ShareStore}): one item each, listed under its
 * user by creation; views and downloads are counters beside the record, `ADD`ed atomically.
 */
import { randomUUID } from "node:crypto";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { TABLE_SCHEMA } from "../layout.js";
import { decodeListCursor, encodeListCursor } from "../listing.js";
import type { ShareRecord, ShareStore } from "../ports-shares.js";
import { dataOf, GSI, type Item, key, type MetaTable } from "./meta-table.js";

const MONTH_SECONDS = 30 * 24 * 3600;
/** Tries of a share's counter whose transaction met another on the same link. */
const COUNT_ATTEMPTS = 4;

/**
 * A share's item written as an update: by id, listed under its user, kept a month past its
 * expiry; its `views` and `lastViewedAt` are left as they are.
 */
export function shareUpdate(share: ShareRecord) {
  const { views: _views, lastViewedAt: _last, downloads: _downloads, ...record } = share;
  return {
    Key: key(`H#${share.id}`, "H"),
    UpdateExpression: "SET gsi1pk = :gpk, gsi1sk = :gsk, #ttl = :ttl, #data = :data",
    ExpressionAttributeNames: { "#ttl": TABLE_SCHEMA.ttlAttribute, "#data": "data" },
    ExpressionAttributeValues: {
      ":gpk": `UH#${share.userId}`,
      ":gsk": `${share.createdAt}#${share.id}`,
      ":ttl": Math.floor(Date.parse(share.expiresAt) / 1000) + MONTH_SECONDS,
      ":data": JSON.stringify(record),
    },
  };
}

/** A share's record from its item, with its view count and last view. */
function shareOf(stored: Item): ShareRecord {
  const share = dataOf<ShareRecord>(stored);
  const lastViewedAt = typeof stored.lastViewedAt === "string" ? { lastViewedAt: stored.lastViewedAt } : {};
  return { ...share, views: Number(stored.views ?? 0), downloads: Number(stored.downloads ?? 0), ...lastViewedAt };
}

/** The shares port on the metadata table. */
export class DynamoShareStore implements ShareStore {
  constructor(private readonly table: MetaTable) {}

  async putShare(share: ShareRecord): Promise<void> {
    await this.table.client.send(new UpdateCommand({ TableName: this.table.name, ...shareUpdate(share) }));
  }

  async getShare(id: string): Promise<ShareRecord | undefined> {
    const stored = await this.table.getItem(key(`H#${id}`, "H"), true);
    return stored ? shareOf(stored) : undefined;
  }

  async listShares(userId: string): Promise<ShareRecord[]> {
    const items = await this.table.queryAll({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": `UH#${userId}` },
      ScanIndexForward: false,
    });
    return items.map((stored) => shareOf(stored));
  }

  async listSharePage(userId: string, page: { limit: number; cursor?: string }) {
    const gsi1pk = `UH#${userId}`;
    const after = page.cursor ? decodeListCursor(userId, page.cursor) : undefined;
    const result = await this.table.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": gsi1pk },
      ScanIndexForward: false,
      // One more than the page: whether another page follows.
      Limit: page.limit + 1,
      ExclusiveStartKey: after
        ? { ...key(`H#${after[1]}`, "H"), gsi1pk, gsi1sk: `${after[0]}#${after[1]}` }
        : undefined,
    });
    const shares = (result.Items ?? []).map((stored) => shareOf(stored));
    if (shares.length <= page.limit) return { shares };
    const last = shares[page.limit - 1];
    return { shares: shares.slice(0, page.limit), cursor: encodeListCursor(userId, [last.createdAt, last.id]) };
  }

  recordShareView(id: string, at: string): Promise<void> {
    return this.countShare(id, "ADD #n :one SET lastViewedAt = :at", "views", { ":at": at });
  }

  recordShareDownload(id: string): Promise<void> {
    return this.countShare(id, "ADD #n :one", "downloads");
  }

  /**
   * One atomic counter update of an existing share (nothing is read first); an unknown id
   * changes nothing. A transaction of one update, for its idempotency token: the SDK sends an
   * attempt whose answer was lost again with the same token, which DynamoDB applies once. Views
   * of one link at the same moment cancel each other's transactions (nothing applied): each
   * is tried again, with a token of its own, a few times.
   */
  private async countShare(id: string, update: string, counter: string, values: Record<string, string> = {}) {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.table.client.send(
          new TransactWriteCommand({
            ClientRequestToken: randomUUID(),
            TransactItems: [
              {
                Update: {
                  TableName: this.table.name,
                  Key: key(`H#${id}`, "H"),
                  UpdateExpression: update,
                  ConditionExpression: "attribute_exists(pk)",
                  ExpressionAttributeNames: { "#n": counter },
                  ExpressionAttributeValues: { ":one": 1, ...values },
                },
              },
            ],
          }),
        );
        return;
      } catch (error) {
        const reason = error instanceof TransactionCanceledException ? error.CancellationReasons?.[0]?.Code : undefined;
        if (reason === "ConditionalCheckFailed") return; // no such share
        if (reason !== "TransactionConflict" || attempt >= COUNT_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  }
}
