/**
 * The Lambda entry: the same app, on S3 + DynamoDB. `hono/aws-lambda` translates API Gateway
 * (v1, v2) and function-URL events, decodes base64 bodies and base64-encodes binary answers.
 */
import { parseShareKeys, type ShareKeys } from "@pisync/core";
import type { Stores } from "@pisync/store";
import { type AwsConnection, awsStores, readSecretString } from "@pisync/store/aws";
import { handle } from "hono/aws-lambda";
import { type AppDeps, createApp } from "./app.js";
import { lambdaConfig } from "./config.js";

/** The handler for a store pair (tests give it the test servers' stores). */
export function createHandler(stores: Stores, options: Omit<AppDeps, "stores"> = {}) {
  return handle(createApp({ stores, ...options }));
}

/** The share keys from Secrets Manager, read once per container, when first needed. */
export function secretKeys(connection: AwsConnection, secretId: string | undefined): () => Promise<ShareKeys> {
  let keys: Promise<ShareKeys> | undefined;
  return () => {
    if (!secretId) return Promise.reject(new Error("PISYNC_SHARE_KEY_SECRET is not set"));
    if (!keys) {
      const loading = readSecretString(connection, secretId).then(parseShareKeys);
      // A failed read is tried again on the next request.
      loading.catch(() => {
        keys = undefined;
      });
      keys = loading;
    }
    return keys;
  };
}

let cached: ReturnType<typeof createHandler> | undefined;

/**
 * Sets the function up from its environment, once per container: the SDK clients (each keeps
 * its connections open between requests) and the app. The handler calls it on the first event
 * (importing the module does nothing else); `npm run bench:bundle` calls it to time it apart.
 * @throws Error when the environment lacks a setting (see `lambdaConfig`).
 */
export function init(): ReturnType<typeof createHandler> {
  if (!cached) {
    const config = lambdaConfig();
    cached = createHandler(awsStores({ ...config.connection, bucket: config.bucket, table: config.table }), {
      shareKeys: secretKeys(config.connection, config.shareKeySecret),
      maxShareDays: config.maxShareDays,
      publicUrl: config.publicUrl,
    });
  }
  return cached;
}

/** The Lambda handler: the app, set up on the first event. */
export const handler: ReturnType<typeof createHandler> = (event, context) => init()(event, context);
