/**
 * The next indexing pass on Lambda: an asynchronous invocation of the function itself, sent by
 * the AWS SDK's Lambda client to a local endpoint that records what it received.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { invokeSelf, parseIndexEvent } from "../src/continue-pass.js";

describe("the next indexing pass", () => {
  it("is an asynchronous invocation of the function, whose payload is the chain's next link", async () => {
    const received: { path: string; type: string | undefined; body: string }[] = [];
    const server = createServer((request: IncomingMessage, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        received.push({
          path: request.url ?? "",
          type: request.headers["x-amz-invocation-type"] as string | undefined,
          body,
        });
        response.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const send = invokeSelf(
        { region: "us-east-1", credentials: { accessKeyId: "k", secretAccessKey: "s" } },
        "pisync-api",
        endpoint,
      );
      const link = { pisync: "index" as const, chain: "0123456789abcdef", seq: 2 };
      await send(link);
      expect(received).toEqual([
        { path: "/2015-03-31/functions/pisync-api/invocations", type: "Event", body: JSON.stringify(link) },
      ]);
      expect(parseIndexEvent(JSON.parse(received[0]?.body as string))).toEqual(link);
    } finally {
      server.close();
    }
  });

  it("refuses a continuation that does not name a chain and a later link", () => {
    expect(() => parseIndexEvent({ pisync: "index", chain: "../x", seq: 2 })).toThrow(/index event/);
    expect(() => parseIndexEvent({ pisync: "index", chain: "0123456789abcdef", seq: 1 })).toThrow(/index event/);
    expect(() => parseIndexEvent({ pisync: "index", chain: "0123456789abcdef" })).toThrow(/index event/);
  });
});
