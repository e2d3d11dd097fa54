/**
 * The sweep on the Lambda entry (its own EventBridge rule's event), against DynamoDB Local and
 * s3rver: a head gone back one commit is rolled forward from its stored segment; an orphan
 * younger than an hour is left alone.
 */
import { randomUUID } from "node:crypto";
import { Appender } from "@pisync/core";
import { type Stores, segmentKey } from "@pisync/store";
import { awsStores, ensureBucket } from "@pisync/store/aws";
import { testAwsConfig } from "@pisync/testing";
import type { LambdaContext } from "hono/aws-lambda";
import { expect, it } from "vitest";
import { createSearchingHandler, SWEEP_EVENT } from "../src/lambda.js";

const enc = (text: string) => new TextEncoder().encode(text);
const header = `${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;
const message = `${JSON.stringify({ type: "message", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "acknowledged", timestamp: 1 } })}\n`;

/**
 * A user's session whose head went back one append (as after DynamoDB Local lost an
 * acknowledged transaction): the second segment is stored, and no head names it.
 */
async function sessionWithHeadBehind(stores: Stores): Promise<string> {
  const user = `u-${randomUUID()}`;
  const appender = new Appender(stores);
  await appender.append({ userId: user, sessionId: "s", offset: 0, body: enc(header) });
  const before = await stores.meta.getHead(user, "s");
  await appender.append({ userId: user, sessionId: "s", offset: header.length, body: enc(message) });
  const after = await stores.meta.getHead(user, "s");
  if (!before || !after) throw new Error("no head");
  await stores.meta.commit({ head: { ...before, revision: after.revision + 1 }, expectedRevision: after.revision });
  return user;
}

it("the sweep event rolls a head behind its stored segment forward and leaves a young orphan", async () => {
  // A bucket of its own: the sweep lists its whole bucket within a budget, and the shared one
  // holds every other test's objects.
  const config = { ...(await testAwsConfig()), bucket: `sweep-${randomUUID()}` };
  await ensureBucket(config, config.bucket);
  const stores = awsStores(config);
  const handler = createSearchingHandler(stores, { connection: config, table: config.table });
  try {
    const user = await sessionWithHeadBehind(stores);
    const orphan = segmentKey(user, "s", 1, 0, 4, "young");
    await stores.blobs.put(orphan, enc("abc\n"));

    const answer = (await handler(SWEEP_EVENT, {} as LambdaContext)) as { swept: number; wrong: number };
    expect(answer.swept).toBeGreaterThanOrEqual(1);
    expect((await stores.meta.getHead(user, "s"))?.current.length).toBe(header.length + message.length);
    expect(await stores.blobs.list(orphan)).toEqual([orphan]);
  } finally {
    handler.index.close();
  }
});

it("the sweep event keeps inside the invocation's time: what it could not visit is left for the next run", async () => {
  // A bucket of its own: the sweep lists its whole bucket within a budget, and the shared one
  // holds every other test's objects.
  const config = { ...(await testAwsConfig()), bucket: `sweep-${randomUUID()}` };
  await ensureBucket(config, config.bucket);
  const stores = awsStores(config);
  const handler = createSearchingHandler(stores, { connection: config, table: config.table });
  try {
    const user = await sessionWithHeadBehind(stores);

    // An invocation with no time left to sweep: nothing visited, the session left for the next run.
    const out = { getRemainingTimeInMillis: () => 1000 } as LambdaContext;
    const hurried = (await handler(SWEEP_EVENT, out)) as { swept: number; left: number };
    expect(hurried.left).toBeGreaterThanOrEqual(1);
    expect((await stores.meta.getHead(user, "s"))?.current.length).toBe(header.length);

    const next = (await handler(SWEEP_EVENT, {} as LambdaContext)) as { swept: number; left: number };
    expect(next.left).toBe(0);
    expect((await stores.meta.getHead(user, "s"))?.current.length).toBe(header.length + message.length);
  } finally {
    handler.index.close();
  }
});
