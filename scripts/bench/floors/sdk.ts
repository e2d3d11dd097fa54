/**
 * `npm run bench:bundle`'s variant (g), the AWS SDK alone: a Lambda entry that makes the
 * function's S3 and DynamoDB clients (the store's settings, the function's connection) and sends
 * the append's four calls, with no pisync code beside them. Bundled with the shipped options, it
 * is what any function built on the SDK pays at a cold start.
 */
import { createHash, randomUUID } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { lambdaConfig } from "../../../functions/api/src/config.js";
import { documentClient, s3Client } from "../../../packages/store/src/aws/client.js";
import { TABLE_SCHEMA } from "../../../packages/store/src/layout.js";

let made: ReturnType<typeof make> | undefined;

function make() {
  const config = lambdaConfig();
  return { config, s3: s3Client(config.connection), dynamo: documentClient(config.connection) };
}

/** The clients, once per process (as the function's `init`). */
export function init() {
  made ??= make();
  return made;
}

/**
 * The append's round trips, on fresh keys: GetItem (the token), GetItem (the session's head),
 * PutObject (the segment, with its Content-MD5), TransactWriteItems (the head, if absent).
 */
export async function handler() {
  const { config, s3, dynamo } = init();
  const { partitionKey: pk, sortKey: sk } = TABLE_SCHEMA;
  const id = `floor-${randomUUID()}`;
  const segment = new TextEncoder().encode(`${JSON.stringify({ type: "session", version: 3, id })}\n`);
  await dynamo.send(new GetCommand({ TableName: config.table, Key: { [pk]: `T#${id}`, [sk]: "T" } }));
  await dynamo.send(
    new GetCommand({ TableName: config.table, Key: { [pk]: `S#${id}`, [sk]: "H" }, ConsistentRead: true }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: config.bucket,
      Key: `floor/${id}`,
      Body: segment,
      ContentMD5: createHash("md5").update(segment).digest("base64"),
    }),
  );
  await dynamo.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: config.table,
            Item: { [pk]: `S#${id}`, [sk]: "H", length: segment.length },
            ConditionExpression: `attribute_not_exists(${pk})`,
          },
        },
      ],
    }),
  );
  return { statusCode: 200 };
}
