/**
 * The one chain of indexing passes that continue themselves (on Lambda, each pass invokes the
 * function again for the next while marks are due). A chain holds a lease item (`items.ts`):
 * a pass claims its link — the chain's id and the link's number — with a conditional write, so
 * a continuation delivered twice, or a chain overtaken by a newer one, stops at its claim; a
 * chain whose continuation was lost lets its lease run out, and the schedule starts another.
 */
import { randomBytes } from "node:crypto";
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsConnection, awsErrorName, documentClient } from "@pisync/store/aws";
import { CHAIN_PK, CHAIN_SK } from "./items.js";

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
    const written = await this.conditional(
      new PutCommand({
        TableName: this.table,
        Item: { pk: CHAIN_PK, sk: CHAIN_SK, ...link, until: now + this.leaseMs },
        ConditionExpression: "attribute_not_exists(pk) OR #until < :now",
        ExpressionAttributeNames: { "#until": "until" },
        ExpressionAttributeValues: { ":now": now },
      }),
    );
    return written ? link : undefined;
  }

  /**
   * Claims `link` for the pass about to run (the lease renewed): true when it was the chain's
   * next link, false when it was claimed already (a second delivery) or another chain holds the lease.
   */
  async claim(link: ChainLink, now = Date.now()): Promise<boolean> {
    return this.conditional(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: CHAIN_PK, sk: CHAIN_SK },
        UpdateExpression: "SET #seq = :next, #until = :until",
        ConditionExpression: "#chain = :chain AND #seq = :seq",
        ExpressionAttributeNames: { "#seq": "seq", "#until": "until", "#chain": "chain" },
        ExpressionAttributeValues: {
          ":chain": link.chain,
          ":seq": link.seq - 1,
          ":next": link.seq,
          ":until": now + this.leaseMs,
        },
      }),
    );
  }

  /** Ends the chain at `link` (nothing left to do): the next schedule may start another at once. */
  async end(link: ChainLink): Promise<void> {
    await this.conditional(
      new DeleteCommand({
        TableName: this.table,
        Key: { pk: CHAIN_PK, sk: CHAIN_SK },
        ConditionExpression: "#chain = :chain AND #seq = :seq",
        ExpressionAttributeNames: { "#seq": "seq", "#chain": "chain" },
        ExpressionAttributeValues: { ":chain": link.chain, ":seq": link.seq },
      }),
    );
  }

  /** Sends a conditional write: false when its condition did not hold. */
  private async conditional(command: PutCommand | UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      await this.db.send(command as PutCommand);
      return true;
    } catch (error) {
      if (awsErrorName(error) === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }
}
