/**
 * A stand-in DynamoDB for answers DynamoDB Local does not give on demand (a throttled table's
 * unprocessed batch items): each request is answered 200 with what `answer` gives for its
 * operation (`PutItem`, `BatchWriteItem`...) and its parsed body.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { AwsConnection } from "@pisync/store/aws";

export interface FakeDynamo {
  /** A connection to it, for the adapters under test. */
  connection: AwsConnection;
  close(): Promise<void>;
}

/** Starts a fake DynamoDB answering `answer(operation, body)` (JSON) to every request. */
export async function fakeDynamo(answer: (operation: string, body: Record<string, unknown>) => unknown) {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const operation = String(request.headers["x-amz-target"]).split(".").pop() ?? "";
      response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
      response.end(JSON.stringify(answer(operation, JSON.parse(body) as Record<string, unknown>) ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    connection: {
      region: "us-east-1",
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
      endpoints: { dynamodb: `http://127.0.0.1:${port}` },
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  } satisfies FakeDynamo;
}
