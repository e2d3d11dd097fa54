/**
 * The team list on DynamoDB Local and a pointer from before the list was kept by activity (its
 * keys and team only): the session's next write makes it an entry of the list, with its record.
 */
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { testAwsConfig } from "@pisync/testing";
import { describe, expect, it } from "vitest";
import { documentClient } from "../src/aws/client.js";
import { DynamoTeamStore } from "../src/aws/index.js";

describe("the team list on DynamoDB Local, from an earlier pointer", () => {
  it("a write makes it an entry, at the top, with its record made from its keys", async () => {
    const config = await testAwsConfig();
    const teams = new DynamoTeamStore(config, config.table);
    const record = { teamId: "t1", owner: "bob", sessionId: "later", addedAt: "2026-01-01T00:00:00.000Z" };
    await teams.setSessionTeam("bob", "later", { ...record, lastAt: "2026-01-02" });
    // A pointer as it was written before the list: no record, no list keys, no activity.
    await documentClient(config).send(
      new PutCommand({ TableName: config.table, Item: { pk: "U#ann", sk: "TS#early", team: "t1" } }),
    );
    expect(await teams.sessionTeam("ann", "early")).toBe("t1");
    const ids = async () => (await teams.teamSessionPage("t1", { limit: 10 })).sessions.map((s) => s.sessionId);
    expect(await ids()).toEqual(["later"]);
    await teams.touchTeamSession("ann", "early", "t1", "2026-01-03");
    const page = await teams.teamSessionPage("t1", { limit: 10 });
    expect(page.sessions.map((s) => s.sessionId)).toEqual(["early", "later"]);
    expect(page.sessions[0]).toMatchObject({ teamId: "t1", owner: "ann", sessionId: "early", lastAt: "2026-01-03" });
  });
});
