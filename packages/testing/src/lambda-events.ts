/** Lambda events as API Gateway HTTP APIs and function URLs send them, for tests. */
import type { LambdaEvent } from "hono/aws-lambda";

export type Kind = "http-api" | "function-url";

/** A payload-format-2.0 event, as API Gateway HTTP APIs and function URLs send them. */
export function event(
  kind: Kind,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Uint8Array,
): LambdaEvent {
  const [rawPath, rawQueryString = ""] = path.split("?");
  return {
    version: "2.0",
    routeKey: kind === "http-api" ? "$default" : "$default",
    rawPath,
    rawQueryString,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    requestContext: {
      accountId: kind === "function-url" ? "anonymous" : "123456789012",
      apiId: kind === "function-url" ? "abcdefgh" : "api123",
      domainName:
        kind === "function-url" ? "abcdefgh.lambda-url.eu-west-1.on.aws" : "api123.execute-api.eu-west-1.amazonaws.com",
      domainPrefix: "abcdefgh",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "203.0.113.7", userAgent: "pisync-test" },
      requestId: "r1",
      routeKey: "$default",
      stage: "$default",
      time: "29/Nov/2026:13:00:00 +0000",
      timeEpoch: 1795957200000,
    },
    body: body ? Buffer.from(body).toString("base64") : undefined,
    isBase64Encoded: body !== undefined,
  } as LambdaEvent;
}
