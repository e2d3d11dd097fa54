/**
 * The AWS pair's storage servers as restartable processes on fixed ports: DynamoDB Local on
 * disk (its database survives a SIGKILL, as far as DynamoDB Local keeps it) and s3rver behind
 * the tests' SigV4 gate, storing into a folder that outlives restarts.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { dynamoDbLocalCommand, freePort, s3rverCommand } from "@pisync/testing/servers";
import { Restartable, untilResponds } from "./process.js";

/** The bucket the AWS pair's app writes to. */
export const FAULTS_BUCKET = "pisync-faults";

export interface StorageServers {
  dynamodb: Restartable;
  s3: Restartable;
  dynamodbEndpoint: string;
  /** The SigV4 gate in front of s3rver. */
  s3Endpoint: string;
}

/** DynamoDB Local and s3rver, with their data under `dir`, not started yet. */
export async function storageServers(dir: string): Promise<StorageServers> {
  const [dynamoPort, s3Port] = [await freePort(), await freePort()];
  const dynamodbEndpoint = `http://127.0.0.1:${dynamoPort}`;
  const s3Endpoint = `http://127.0.0.1:${s3Port}`;
  const dbPath = join(dir, "dynamodb");
  const s3Dir = join(dir, "s3");
  mkdirSync(dbPath, { recursive: true });
  mkdirSync(s3Dir, { recursive: true });
  const dynamo = dynamoDbLocalCommand(dynamoPort, dbPath);
  const s3 = s3rverCommand(s3Port, s3Dir, [FAULTS_BUCKET]);
  return {
    dynamodbEndpoint,
    s3Endpoint,
    dynamodb: new Restartable({
      name: "dynamodb-local",
      ...dynamo,
      logFile: join(dir, "dynamodb.log"),
      ready: (child) => untilResponds(dynamodbEndpoint, child, "DynamoDB Local"),
    }),
    s3: new Restartable({
      name: "s3rver",
      ...s3,
      logFile: join(dir, "s3rver.log"),
      ready: (child) => untilResponds(s3Endpoint, child, "s3rver"),
    }),
  };
}
