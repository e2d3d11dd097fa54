/**
 * Device tokens on the metadata table (see {@link TokenStore}): one item per token, keyed by its
 * hash and listed under its user by id; its last use is an attribute of its own (a small update
 * that never brings a revoked token back).
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { decodeListCursor, encodeListCursor } from "../listing.js";
import type { TokenRecord, TokenStore } from "../ports-credentials.js";
import { dataOf, GSI, key, type MetaTable, usedDataOf } from "./meta-table.js";

/** The tokens port on the metadata table. */
export class DynamoTokenStore implements TokenStore {
  constructor(private readonly table: MetaTable) {}

  async putToken(token: TokenRecord): Promise<void> {
    await this.table.putNew({
      pk: `T#${token.hash}`,
      sk: "T",
      gsi1pk: `UT#${token.userId}`,
      gsi1sk: token.id,
      data: JSON.stringify(token),
    });
  }

  async findToken(hash: string): Promise<TokenRecord | undefined> {
    const stored = await this.table.getItem(key(`T#${hash}`, "T"));
    return stored ? usedDataOf<TokenRecord>(stored) : undefined;
  }

  listTokens(userId: string): Promise<TokenRecord[]> {
    return this.table.listIndexed(`UT#${userId}`);
  }

  async listTokenPage(userId: string, page: { limit: number; cursor?: string }) {
    const after = page.cursor ? decodeListCursor(userId, page.cursor)[1] : undefined;
    const { items, more } = await this.table.ascendingPage(`UT#${userId}`, after, page.limit);
    const tokens = items.map((stored) => usedDataOf<TokenRecord>(stored));
    const last = tokens[tokens.length - 1];
    return more && last ? { tokens, cursor: encodeListCursor(userId, [last.id, last.id]) } : { tokens };
  }

  async deleteToken(userId: string, id: string): Promise<boolean> {
    const token = (await this.listTokens(userId)).find((t) => t.id === id);
    if (!token) return false;
    await this.table.client.send(new DeleteCommand({ TableName: this.table.name, Key: key(`T#${token.hash}`, "T") }));
    return true;
  }

  async renameToken(userId: string, id: string, name: string): Promise<boolean> {
    // The user's index, read at the one id: the item's own key is the secret's hash.
    const found = await this.table.query({
      IndexName: GSI,
      KeyConditionExpression: "gsi1pk = :pk AND gsi1sk = :id",
      ExpressionAttributeValues: { ":pk": `UT#${userId}`, ":id": id },
    });
    const stored = found.Items?.[0];
    if (!stored) return false;
    const { lastUsedAt: _kept, ...record } = dataOf<TokenRecord>(stored);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: key(stored.pk as string, "T"),
          UpdateExpression: "SET #data = :data",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: { "#data": "data" },
          ExpressionAttributeValues: { ":data": JSON.stringify({ ...record, name }) },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false; // revoked meanwhile
      throw error;
    }
  }

  touchToken(hash: string, lastUsedAt: string): Promise<void> {
    return this.table.touch(key(`T#${hash}`, "T"), lastUsedAt);
  }
}
