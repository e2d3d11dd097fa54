/**
 * The share-signing keys kept in Secrets Manager: the Lambda entry's, and the Node server's
 * when it runs on S3 + DynamoDB with `PISYNC_SHARE_KEY_SECRET` set.
 */
import { parseShareKeys, type ShareKeys } from "@pisync/core";
import { type AwsConnection, readSecretString } from "@pisync/store/aws";

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
