/** The DynamoDB table of the storage layout (`TABLE_SCHEMA`), created for tests and local development. */
import { CreateTableCommand, ResourceInUseException } from "@aws-sdk/client-dynamodb";
import { TABLE_SCHEMA } from "../layout.js";
import { type AttemptTimeouts, type AwsConnection, dynamoClient } from "./client.js";

/**
 * Bounds of the table's creation: set-up, never on a request's path, so it may wait longer
 * than a request's attempt (a DynamoDB Local just started on a busy machine takes seconds).
 */
const ADMIN_TIMEOUTS: AttemptTimeouts = { connectMs: 2000, idleMs: 20_000, requestMs: 20_000 };

/** Creates the table (on-demand) if it does not exist. The CDK stack declares the same schema. */
export async function ensureTable(connection: AwsConnection, tableName: string): Promise<void> {
  const { partitionKey, sortKey, index } = TABLE_SCHEMA;
  const client = dynamoClient({
    ...connection,
    timeouts: { ...connection.timeouts, dynamodb: connection.timeouts?.dynamodb ?? ADMIN_TIMEOUTS },
  });
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [partitionKey, sortKey, index.partitionKey, index.sortKey].map((AttributeName) => ({
          AttributeName,
          AttributeType: "S",
        })),
        KeySchema: [
          { AttributeName: partitionKey, KeyType: "HASH" },
          { AttributeName: sortKey, KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: "HASH" },
              { AttributeName: index.sortKey, KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  } finally {
    client.destroy();
  }
}
