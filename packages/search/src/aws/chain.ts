/**
 * The one chain of indexing passes that continue themselves (on Lambda, each pass invokes the
 * function again for the next while marks are due). A chain holds a lease item (`items.ts`):
 * a pass claims its link — the chain's id and the link's number — with a conditional write, so
 * a continuation delivered twice, or a chain overtaken by a newer one, stops at its claim; a
 * chain whose continuation was lost lets its lease run out, and the schedule starts another.
 */
import { randomBytes } from "node:crypto";
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsConnection, documentClient } from "@pisync/store/aws";
import { newWriteToken, WRITE_TOKEN, writeIf } from "./conditional.js";
import { CHAIN_PK, CHAIN_SK } from "./items.js";

/** The lease item's key. */
const KEY = { pk: CHAIN_PK, sk: CHAIN_SK };

/** A link of a chain: the pass that may run next. */
export interface ChainLink {
  chain: string;
  seq: number;
}

/** How long a chain holds its lease after each claim: a pass and the delivery of its continuation, with room. */
export const CHAIN_LEASE_MS = 60_000;

/** The chain's lease item. */
export class PassChain {
  private readonly db: DynamoDBDocumentClient;

  constructor(
    connection: AwsConnection,
    private readonly table: string,
    private readonly leaseMs = CHAIN_LEASE_MS,
  ) {
    this.db = documentClient(connection);
  }

  /** Starts a chain if none holds the lease: its first link (already claimed), or undefined. */
  async start(now = Date.now()): Promise<ChainLink | undefined> {
    const link = { chain: randomBytes(8).toString("hex"), seq: 1 };
    const token = newWriteToken();
    const written = await writeIf(
      this.db,
      new PutCommand({
        TableName: this.table,
        Item: { ...KEY, ...link, until: now + this.leaseMs, [WRITE_TOKEN]: token },
        ConditionExpression: "attribute_not_exists(pk) OR #until < :now",
        ExpressionAttributeNames: { "#until": "until" },
        ExpressionAttributeValues: { ":now": now },
      }),
      { table: this.table, key: KEY, token },
    );
    return written ? link : undefined;
  }

  /**
   * Claims `link` for the pass about to run (the lease renewed): true when it was the chain's
   * next link, false when it was claimed already (a second delivery) or another chain holds the
   * lease. A claim whose first attempt applied with its answer lost is this claim's, by its token.
   */
  async claim(link: ChainLink, now = Date.now()): Promise<boolean> {
    const token = newWriteToken();
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.table,
        Key: KEY,
        UpdateExpression: "SET #seq = :next, #until = :until, #token = :token",
        ConditionExpression: "#chain = :chain AND #seq = :seq",
        ExpressionAttributeNames: { "#seq": "seq", "#until": "until", "#chain": "chain", "#token": WRITE_TOKEN },
        ExpressionAttributeValues: {
          ":chain": link.chain,
          ":seq": link.seq - 1,
          ":next": link.seq,
          ":until": now + this.leaseMs,
          ":token": token,
        },
      }),
      { table: this.table, key: KEY, token },
    );
  }

  /** Ends the chain at `link` (nothing left to do): the next schedule may start another at once. */
  async end(link: ChainLink): Promise<void> {
    // A "no" is the chain's lease taken by another, or this delete applied once already: either way it is gone.
    await writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.table,
        Key: KEY,
        ConditionExpression: "#chain = :chain AND #seq = :seq",
        ExpressionAttributeNames: { "#seq": "seq", "#chain": "chain" },
        ExpressionAttributeValues: { ":chain": link.chain, ":seq": link.seq },
      }),
    );
  }
}
