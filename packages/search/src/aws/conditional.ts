/**
 * Conditional writes whose answer may be lost: DynamoDB applied the first attempt, its answer
 * never came, and the SDK sent the same write again, which then failed its own condition. Such a
 * write carries a fresh token in its item (`writeToken`): a "condition failed" is its own applied
 * write when a consistent read of the item finds the token.
 */
import { randomBytes } from "node:crypto";
import {
  type DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  type PutCommand,
  type UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { awsErrorName } from "@pisync/store/aws";

/** The attribute that holds the token of the item's last conditional write. */
export const WRITE_TOKEN = "writeToken";

/** A token for one conditional write. */
export const newWriteToken = (): string => randomBytes(8).toString("hex");

/**
 * Sends `command`, a conditional write of the item at `key`: true when it applied, false when its
 * condition did not hold. With `token` (written by the command into {@link WRITE_TOKEN}), a failed
 * condition is read back: the item holding the token means the write applied on an earlier
 * attempt. Other errors are thrown as they come.
 */
export async function writeIf(
  db: DynamoDBDocumentClient,
  command: PutCommand | UpdateCommand | DeleteCommand,
  check?: { table: string; key: Record<string, string>; token: string },
): Promise<boolean> {
  try {
    await db.send(command as PutCommand);
    return true;
  } catch (error) {
    if (awsErrorName(error) !== "ConditionalCheckFailedException") throw error;
    if (!check) return false;
    const { Item } = await db.send(new GetCommand({ TableName: check.table, Key: check.key, ConsistentRead: true }));
    return Item?.[WRITE_TOKEN] === check.token;
  }
}
