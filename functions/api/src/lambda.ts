/**
 * The Lambda entry: the same app, on S3 + DynamoDB. `hono/aws-lambda` translates API Gateway
 * (v1, v2) and function-URL events, decodes base64 bodies and base64-encodes binary answers.
 */
import type { Stores } from "@pisync/store";
import { awsStores } from "@pisync/store/aws";
import { handle } from "hono/aws-lambda";
import { createApp } from "./app.js";
import { lambdaConfig } from "./config.js";

/** The handler for a store pair (tests give it the test servers' stores). */
export function createHandler(stores: Stores) {
  return handle(createApp({ stores }));
}

let cached: ReturnType<typeof createHandler> | undefined;

/** Built on the first event (not at import: a cold start stays an import). */
export const handler: ReturnType<typeof createHandler> = (event, context) => {
  if (!cached) {
    const config = lambdaConfig();
    cached = createHandler(awsStores({ bucket: config.bucket, table: config.table }));
  }
  return cached(event, context);
};
