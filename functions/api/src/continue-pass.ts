/**
 * The next bounded indexing pass, started at once instead of at the next scheduled minute: on
 * Lambda the function invokes itself asynchronously (`InvocationType: "Event"`). The Lambda
 * client's module is loaded on the first continuation, never on an append's cold path.
 */
import type { AwsConnection } from "@pisync/store/aws";
import * as z from "zod/mini";
import { lazy } from "./lazy.js";

/** The event a pass sends for the next one of its chain (see `PassChain`). */
export interface IndexEvent {
  pisync: "index";
  chain: string;
  seq: number;
}

/** An index event as it must be: the chain's id (16 hex digits) and the link's number. */
const indexEvent = z.object({
  pisync: z.literal("index"),
  chain: z.string().check(z.regex(/^[0-9a-f]{16}$/)),
  seq: z.int().check(z.minimum(2)),
});

/** Whether an event is a chain's continuation (`{ "pisync": "index", ... }`), whatever its fields. */
export function isIndexEvent(event: unknown): boolean {
  return (event as { pisync?: unknown } | undefined)?.pisync === "index";
}

/** The continuation's fields. @throws Error when they are not a chain's id and a link's number */
export function parseIndexEvent(event: unknown): IndexEvent {
  const parsed = indexEvent.safeParse(event);
  if (!parsed.success)
    throw new Error('an index event is { "pisync": "index", "chain": <16 hex digits>, "seq": n ≥ 2 }');
  return parsed.data;
}

/** Sends a continuation. */
export type ContinuePass = (event: IndexEvent) => Promise<void>;

/**
 * Continuations as asynchronous invocations of the function `functionName` (Lambda's
 * `AWS_LAMBDA_FUNCTION_NAME`); its role needs `lambda:InvokeFunction` on itself (the stack grants it).
 */
export function invokeSelf(connection: AwsConnection, functionName: string, endpoint?: string): ContinuePass {
  const client = lazy(async () => {
    const sdk = await import("@aws-sdk/client-lambda");
    const lambda = new sdk.LambdaClient({ region: connection.region, credentials: connection.credentials, endpoint });
    return { lambda, InvokeCommand: sdk.InvokeCommand };
  });
  return async (event) => {
    const { lambda, InvokeCommand } = await client.load();
    await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: "Event",
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
  };
}
