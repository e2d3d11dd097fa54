/**
 * The AWS pair: DynamoDB Local on disk and s3rver as processes, the dropping proxy in front of
 * DynamoDB Local throughout, the app on them; its faults stop and kill each storage server and
 * kill the app.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { LOCAL_USER } from "@pisync/api";
import { type AwsStoresConfig, awsStores } from "@pisync/store/aws";
import { type AwsSettings, appProcess, awsEnvironment } from "./app.js";
import { droppingProxy } from "./dropping-proxy.js";
import { inventory } from "./inventory.js";
import type { Restartable } from "./process.js";
import { appKill, type Fault, type FaultSize, type Rig } from "./rig.js";
import { FAULTS_BUCKET, storageServers } from "./storage.js";
import { runVerify } from "./verify.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stopAndContinue(name: string, server: Restartable): Fault {
  return {
    name: `${name} SIGSTOP/SIGCONT`,
    async inject({ size }) {
      server.pause();
      await sleep(size.stopMs);
      const recovering = Date.now();
      server.resume();
      return recovering;
    },
  };
}

function killAndRestart(name: string, server: Restartable): Fault {
  return {
    name: `${name} SIGKILL+restart`,
    async inject() {
      await server.kill();
      const recovering = Date.now();
      await server.start();
      return recovering;
    },
  };
}

/** The AWS pair under `dir`. */
export async function awsRig(dir: string, size: FaultSize): Promise<Rig> {
  const storage = await storageServers(dir);
  const proxy = await droppingProxy(storage.dynamodbEndpoint, { afterApply: size.dropRate });
  const settings: AwsSettings = {
    dynamodbEndpoint: proxy.endpoint,
    s3Endpoint: storage.s3Endpoint,
    bucket: FAULTS_BUCKET,
    table: `pisync-faults-${randomUUID().slice(0, 8)}`,
  };
  // The suite reads the stores directly, not through the proxy.
  const direct: AwsStoresConfig = {
    region: "us-east-1",
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    endpoints: { s3: storage.s3Endpoint, dynamodb: storage.dynamodbEndpoint },
    s3PathStyle: true,
    bucket: settings.bucket,
    table: settings.table,
  };
  const stores = awsStores(direct);
  const app = await appProcess(join(dir, "app"), settings);
  const faults: Fault[] = [
    stopAndContinue("DynamoDB Local", storage.dynamodb),
    killAndRestart("DynamoDB Local", storage.dynamodb),
    stopAndContinue("s3rver", storage.s3),
    killAndRestart("s3rver", storage.s3),
  ];
  for (let n = 1; n <= size.appKills; n++) faults.push(appKill(n));
  return {
    name: "aws",
    app,
    faults,
    async start() {
      await Promise.all([storage.dynamodb.start(), storage.s3.start()]);
      await app.start();
    },
    inventory: (ids) => inventory(stores, LOCAL_USER, ids),
    verify: (repair) =>
      runVerify(
        ["--store", "aws", ...(repair ? ["--repair", "--min-age", "0"] : [])],
        { ...awsEnvironment({ ...settings, dynamodbEndpoint: storage.dynamodbEndpoint }) },
        120_000,
      ),
    figures: () => ({ ...proxy.counts }),
    async close() {
      for (const server of [app, storage.dynamodb, storage.s3]) {
        await server.stop();
        server.close();
      }
      await proxy.close();
    },
  };
}
