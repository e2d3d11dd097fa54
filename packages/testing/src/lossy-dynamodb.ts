/**
 * A proxy in front of DynamoDB Local that loses answers after DynamoDB applied their writes: it
 * forwards each request and, for the operations it was told to, destroys the connection instead
 * of passing the first answer back. The SDK then sends the same request again, as it does when a
 * real answer is lost, and the code under test must recognise its own applied write. It can also
 * answer a transaction as cancelled by a conflict without forwarding it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** DynamoDB's write operations, for {@link LossyDynamo.loseNext}. */
export const DYNAMO_WRITES = ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"];

export interface LossyDynamo {
  /** The proxy's endpoint, for a connection's `endpoints.dynamodb`. */
  endpoint: string;
  /** Loses the answer of the next request of any of `operations` (one, the first that comes), once applied. */
  loseNext(operations: string[]): void;
  /** Answers the next request of any of `operations` as a transaction conflict, without forwarding it. */
  conflictNext(operations: string[]): void;
  /** Whether an operation asked for by {@link conflictNext} is still waiting for its request. */
  conflictPending(): boolean;
  /** The operations whose answers were lost, in order. */
  lost: string[];
  close(): Promise<void>;
}

/**
 * Starts a proxy to `upstream` (DynamoDB Local's endpoint).
 * @example const proxy = await lossyDynamo(config.endpoints.dynamodb); proxy.loseNext(DYNAMO_WRITES);
 */
export async function lossyDynamo(upstream: string): Promise<LossyDynamo> {
  let lose: string[] = [];
  let conflict: string[] = [];
  const lost: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const operation =
        String(request.headers["x-amz-target"] ?? "")
          .split(".")
          .pop() ?? "";
      if (conflict.includes(operation)) {
        // What DynamoDB answers a transaction that met another on the same item: cancelled, nothing applied.
        conflict = [];
        const answer = {
          __type: "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
          Message: "Transaction cancelled [TransactionConflict]",
          CancellationReasons: [{ Code: "TransactionConflict", Message: "Transaction is ongoing for the item" }],
        };
        response.writeHead(400, { "content-type": "application/x-amz-json-1.0" }).end(JSON.stringify(answer));
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name)),
      ) as Record<string, string>;
      const answer = await fetch(`${upstream}${request.url}`, {
        method: request.method,
        headers,
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (lose.includes(operation)) {
        lose = [];
        lost.push(operation);
        request.socket.destroy(); // applied by DynamoDB; the answer never arrives
        return;
      }
      response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    loseNext: (operations) => {
      lose = operations;
    },
    conflictNext: (operations) => {
      conflict = operations;
    },
    conflictPending: () => conflict.length > 0,
    lost,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
