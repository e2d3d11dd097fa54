/**
 * The fault suite's own launcher of the Node server on the AWS stores, until `npm start --
 * --store aws` exists: the app as `functions/api/src/lambda.ts` builds it (S3 + DynamoDB, no
 * search), served by Node as `node.ts` serves it, with the settings `npm start -- --store aws`
 * will take. The local user's token is kept in `<data>/local-token`.
 *   AWS_REGION=… AWS_ENDPOINT_URL_S3=… AWS_ENDPOINT_URL_DYNAMODB=… PISYNC_BUCKET=… PISYNC_TABLE=…
 *   node --conditions=source --import tsx scripts/faults/aws-app.ts PORT DATA
 */
import { mkdirSync } from "node:fs";
import { serve } from "@hono/node-server";
import { createApp, ensureLocalToken } from "@pisync/api";
import { Tokens } from "@pisync/core";
import { awsStores, ensureTable } from "@pisync/store/aws";

const [port, dataDir] = process.argv.slice(2);
const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`aws-app: ${name} is not set`);
  return value;
};
const config = {
  region: env("AWS_REGION"),
  credentials: { accessKeyId: env("AWS_ACCESS_KEY_ID"), secretAccessKey: env("AWS_SECRET_ACCESS_KEY") },
  endpoints: { s3: env("AWS_ENDPOINT_URL_S3"), dynamodb: env("AWS_ENDPOINT_URL_DYNAMODB") },
  s3PathStyle: true,
  bucket: env("PISYNC_BUCKET"),
  table: env("PISYNC_TABLE"),
};
mkdirSync(dataDir as string, { recursive: true });
await ensureTable(config, config.table);
const stores = awsStores(config);
const app = createApp({ stores });
await ensureLocalToken(dataDir as string, new Tokens(stores.meta));
serve({ fetch: app.fetch, port: Number(port), hostname: "127.0.0.1" }, () =>
  console.log(`pisync listening on http://127.0.0.1:${port} (aws stores)`),
);
