/**
 * The DynamoDB table layout, shared by the adapter, the test harness and the CDK stack.
 * One table; `pk`/`sk` keys; one GSI (`gsi1`) for "newest first" and "by user" listings.
 */
import { type AwsConnection, AwsError, jsonCall } from "./client.js";

export const TABLE_KEYS = {
  partitionKey: "pk",
  sortKey: "sk",
  gsi: "gsi1",
  gsiPartitionKey: "gsi1pk",
  gsiSortKey: "gsi1sk",
};
/** Attribute holding an epoch-seconds expiry (DynamoDB TTL). */
export const TTL_ATTRIBUTE = "expiresAt";

/** Creates the table (on-demand) if it does not exist: for tests and local development. */
export async function ensureTable(connection: AwsConnection, tableName: string): Promise<void> {
  try {
    await jsonCall(connection, "dynamodb", "DynamoDB_20120810.CreateTable", {
      TableName: tableName,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
        { AttributeName: "gsi1pk", AttributeType: "S" },
        { AttributeName: "gsi1sk", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: "gsi1",
          KeySchema: [
            { AttributeName: "gsi1pk", KeyType: "HASH" },
            { AttributeName: "gsi1sk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
      ],
    });
  } catch (error) {
    if (!(error instanceof AwsError && error.code === "ResourceInUseException")) throw error;
  }
}
