/**
 * Insights' usage by day on DynamoDB when a commit's day writes land late or never: the report
 * must add up each session's days as its head has them now.
 */
import { randomUUID } from "node:crypto";
import { DeleteCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { testAwsConfig } from "@pisync/testing";
import { describe, expect, it } from "vitest";
import { awsStores, DynamoMetaStore, documentClient } from "../src/aws/index.js";
import { UsageDayItems } from "../src/aws/usage-day-items.js";
import { changedUsageDays, type SessionHead, type UsageRow } from "../src/index.js";
import { head } from "./contract.js";

type Config = Awaited<ReturnType<typeof testAwsConfig>>;

const row = (day: string, cost: number): UsageRow => [day, "m/x", "dev1", 10, 5, 0, 0, cost, 100, 1];
const withUsage = (user: string, id: string, revision: number, rows: UsageRow[]): SessionHead => {
  const h = head(user, id, revision, `2026-01-0${revision}T00:00:00.000Z`);
  return { ...h, summary: { ...h.summary, cwd: "/w", usage: { rows, tools: [] } } };
};

/** Commits `next` over `before` as the appender does (its changed days only). */
async function commit(config: Config, before: SessionHead | undefined, next: SessionHead): Promise<void> {
  await awsStores(config).meta.commit({
    head: next,
    expectedRevision: before?.revision ?? null,
    usageDays: changedUsageDays(before, next),
  });
}

/** The days of the user's sessions in a range, as a report reads them. */
async function daysOf(config: Config, user: string, from: string, to: string) {
  const usage = await awsStores(config).meta.listUsage(user, { from, to });
  return usage.sessions.flatMap((s) => s.rows.map((r) => `${s.sessionId} ${r[0]} ${r[7]}`)).sort();
}

/** What a stop between a commit's transaction and its day writes leaves: its mark, and `day` as before. */
async function undoSettle(config: Config, user: string, sessionId: string, revision: number, day: string) {
  const client = documentClient(config);
  const parts = await client.send(
    new QueryCommand({
      TableName: config.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `U#${user}`, ":prefix": `UD#${day}#` },
      ProjectionExpression: "pk, sk",
      ConsistentRead: true,
    }),
  );
  for (const Key of parts.Items ?? []) await client.send(new DeleteCommand({ TableName: config.table, Key }));
  await client.send(
    new UpdateCommand({
      TableName: config.table,
      Key: { pk: `U#${user}`, sk: `UM#${sessionId}` },
      UpdateExpression: "SET revision = :r ADD days :d",
      ExpressionAttributeValues: { ":r": revision, ":d": new Set([day]) },
    }),
  );
}

/** A user who has had a report already (so heads from before are filed, once, and not again). */
async function reportedUser(config: Config): Promise<string> {
  const user = `u-${randomUUID()}`;
  await awsStores(config).meta.listUsage(user, { from: "2025-01-01", to: "2025-01-01" });
  return user;
}

describe("insights' usage by day on DynamoDB: late or missing day writes", () => {
  it("a commit made after one whose days were never written leaves none of those days out", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const first = withUsage(user, "a", 1, [row("2025-02-01", 1)]);
    await commit(config, undefined, first);
    const second = withUsage(user, "a", 2, [row("2025-02-01", 1), row("2025-02-02", 2)]);
    await commit(config, first, second);
    // The process stopped (or the commit's answer was lost) before 2025-02-02 was written.
    await undoSettle(config, user, "a", 2, "2025-02-02");
    // The session's next append (another day) comes before any report.
    const third = withUsage(user, "a", 3, [row("2025-02-01", 1), row("2025-02-02", 2), row("2025-02-03", 3)]);
    await commit(config, second, third);
    expect(await daysOf(config, user, "2025-02-01", "2025-02-28")).toEqual([
      "a 2025-02-01 1",
      "a 2025-02-02 2",
      "a 2025-02-03 3",
    ]);
  });

  it("an older commit's day writes landing after a newer commit's do not remove a day the newer head has", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const first = withUsage(user, "a", 1, [row("2025-03-01", 1)]);
    await commit(config, undefined, first);
    // A replaced body (a new generation): its usage has 2025-03-02 only.
    const second = withUsage(user, "a", 2, [row("2025-03-02", 2)]);
    await commit(config, first, second);
    const third = withUsage(user, "a", 3, [row("2025-03-01", 5), row("2025-03-02", 2)]);
    await commit(config, second, third);
    // The second commit's settling, slow (retries on a busy day), lands last.
    const lateSettle = new UsageDayItems(documentClient(config), config.table, async () => third);
    await lateSettle.settle(user, "a", { head: second, revision: 2, days: changedUsageDays(first, second) });
    expect(await daysOf(config, user, "2025-03-01", "2025-03-31")).toEqual(["a 2025-03-01 5", "a 2025-03-02 2"]);
  });

  it("an older commit's day writes landing after a newer commit's do not bring back a day the newer head dropped", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const first = withUsage(user, "a", 1, [row("2025-04-01", 1)]);
    await commit(config, undefined, first);
    // A replaced body whose usage has another day only.
    const second = withUsage(user, "a", 2, [row("2025-04-02", 2)]);
    await commit(config, first, second);
    // The first commit's settling, slow, lands last.
    const lateSettle = new UsageDayItems(documentClient(config), config.table, async () => second);
    await lateSettle.settle(user, "a", { head: first, revision: 1, days: changedUsageDays(undefined, first) });
    expect(await daysOf(config, user, "2025-04-01", "2025-04-30")).toEqual(["a 2025-04-02 2"]);
  });

  it("a mark that cannot be settled now stays, and the report takes that session's days from its head", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const first = withUsage(user, "a", 1, [row("2025-06-01", 1), row("2025-07-01", 2)]);
    await commit(config, undefined, first);
    await undoSettle(config, user, "a", 1, "2025-06-01");
    // A day of the mark that no write can get through (its part unreadable), outside the range read.
    await documentClient(config).send(
      new UpdateCommand({
        TableName: config.table,
        Key: { pk: `U#${user}`, sk: "UD#2025-07-01#00" },
        UpdateExpression: "SET d = :d, n = :n",
        ExpressionAttributeValues: { ":d": "{not json", ":n": 1 },
      }),
    );
    await documentClient(config).send(
      new UpdateCommand({
        TableName: config.table,
        Key: { pk: `U#${user}`, sk: "UM#a" },
        UpdateExpression: "ADD days :d",
        ExpressionAttributeValues: { ":d": new Set(["2025-07-01"]) },
      }),
    );
    expect(await daysOf(config, user, "2025-06-01", "2025-06-30")).toEqual(["a 2025-06-01 1"]);
    const marks = await documentClient(config).send(
      new QueryCommand({
        TableName: config.table,
        KeyConditionExpression: "pk = :pk AND sk = :sk",
        ExpressionAttributeValues: { ":pk": `U#${user}`, ":sk": "UM#a" },
        ConsistentRead: true,
      }),
    );
    expect(marks.Items).toHaveLength(1);
  });

  it("a process's report after another process wrote a day it had read sees the write", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const reader = awsStores(config).meta;
    const first = withUsage(user, "a", 1, [row("2025-08-01", 1)]);
    await commit(config, undefined, first);
    const range = { from: "2025-08-01", to: "2025-08-31" };
    expect((await reader.listUsage(user, range)).sessions.map((s) => s.rows[0][7])).toEqual([1]);
    await commit(config, first, withUsage(user, "a", 2, [row("2025-08-01", 5)]));
    await commit(config, undefined, withUsage(user, "b", 1, [row("2025-08-01", 7)]));
    const again = await reader.listUsage(user, range);
    expect(again.sessions.map((s) => `${s.sessionId} ${s.rows[0][7]}`).sort()).toEqual(["a 5", "b 7"]);
  });

  it("a session deleted while an append commits leaves no day of it in the report", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const first = withUsage(user, "a", 1, [row("2025-05-01", 1)]);
    await commit(config, undefined, first);
    const second = withUsage(user, "a", 2, [row("2025-05-01", 1), row("2025-05-02", 2)]);
    // The delete reads the head, then an append (another process) commits a new day, then the delete goes on.
    let appendMeanwhile: (() => Promise<void>) | undefined = () => commit(config, first, second);
    class Deleting extends DynamoMetaStore {
      override async getHead(userId: string, sessionId: string) {
        const found = await super.getHead(userId, sessionId);
        const append = appendMeanwhile;
        appendMeanwhile = undefined;
        await append?.();
        return found;
      }
    }
    await new Deleting(config, config.table).deleteSession(user, "a", "2026-01-09T00:00:00.000Z");
    expect(await awsStores(config).meta.getHead(user, "a")).toBeUndefined();
    expect(await daysOf(config, user, "2025-05-01", "2025-05-31")).toEqual([]);
  });

  it("a day write meets the day's part as it read it, not one emptied and made again since", async () => {
    const config = await testAwsConfig();
    const user = await reportedUser(config);
    const day = "2025-07-01";
    const sessions = new Map(
      ["x", "y", "z"].map((id) => [id, withUsage(user, id, 1, [row(day, id === "x" ? 1 : id === "y" ? 2 : 3)])]),
    );
    const client = documentClient(config);
    const items = new UsageDayItems(client, config.table, async (_, id) => sessions.get(id));
    const settle = (on: UsageDayItems, id: string) =>
      on.settle(user, id, { head: sessions.get(id), revision: sessions.get(id)?.revision ?? 9, days: [day] });
    await settle(items, "x");
    // y's day write reads the part holding x; before it lands, x is deleted (the part emptied)
    // and z is filed (the part made again).
    let meanwhile: (() => Promise<void>) | undefined = async () => {
      sessions.delete("x");
      await settle(items, "x");
      await settle(items, "z");
    };
    const slow = new Proxy(client, {
      get(target, name, receiver) {
        if (name !== "send") return Reflect.get(target, name, receiver);
        return async (command: Parameters<typeof client.send>[0]) => {
          const first = command instanceof TransactWriteCommand ? meanwhile : undefined;
          if (first) meanwhile = undefined;
          await first?.();
          return target.send(command);
        };
      },
    });
    await settle(new UsageDayItems(slow, config.table, async (_, id) => sessions.get(id)), "y");
    expect(await daysOf(config, user, day, day)).toEqual([`y ${day} 2`, `z ${day} 3`]);
  });
});
