/** The bucket of the storage layout, created for `npm start -- --store aws --create` and local servers. */
import {
  BucketAlreadyExists,
  BucketAlreadyOwnedByYou,
  CreateBucketCommand,
  HeadBucketCommand,
} from "@aws-sdk/client-s3";
import { type AwsConnection, s3Client } from "./client.js";

/** Creates the bucket (private, in the connection's region) if it does not exist. */
export async function ensureBucket(connection: AwsConnection, bucket: string): Promise<void> {
  const client = s3Client(connection);
  try {
    try {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
      return;
    } catch {
      // Missing (or not ours to see): creating it says which.
    }
    await client.send(
      new CreateBucketCommand({
        Bucket: bucket,
        // us-east-1 is the one region S3 takes no location constraint for.
        ...(connection.region === "us-east-1"
          ? {}
          : { CreateBucketConfiguration: { LocationConstraint: connection.region as never } }),
      }),
    );
  } catch (error) {
    if (!(error instanceof BucketAlreadyOwnedByYou || error instanceof BucketAlreadyExists)) throw error;
  } finally {
    client.destroy();
  }
}
