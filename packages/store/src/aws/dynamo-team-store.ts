/**
 * Teams in the metadata table (see {@link TeamStore}). Every list is one Query of a partition
 * or of `gsi1`, never a Scan.
 *
 * Items (team and user ids are checked to [A-Za-z0-9._-], so `#` separates safely):
 * - team:         pk `TM#<team>`, sk `TM`; `data` the record, policy included
 * - member:       pk `TM#<team>`, sk `M#<user>`; gsi1 `UTM#<user>` / `<team>`: a team's members
 *                 are one partition's `M#` items, a user's teams one `gsi1` partition
 * - team session: pk `TM#<team>`, sk `S#<owner>#<session>`, beside the session's pointer
 *                 pk `U#<owner>`, sk `TS#<session>` (`team`), written in one transaction; the
 *                 pointer is the team's list entry too: gsi1 `TMS#<team>` /
 *                 `<lastAt>#<owner>#<session>`, so the list is one Query of `gsi1`, most
 *                 recently active first, and a write moves it by updating the pointer alone
 * - invite:       pk `TI#<hash>`, sk `TI`; TTL a day after its expiry (redeeming marks it `redeemedBy`)
 * - audit event:  pk `TA#<team>`, sk `<at>#<nonce>`, put only if new: the log is only added to
 */
import { randomBytes, randomUUID } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { TABLE_SCHEMA } from "../layout.js";
import { decodeListCursor, encodeListCursor } from "../listing.js";
import type {
  AuditEvent,
  AuditPage,
  InviteRecord,
  MembershipRecord,
  TeamPolicy,
  TeamRecord,
  TeamSessionEntry,
  TeamSessionPage,
  TeamSessionRecord,
  TeamStore,
} from "../ports-teams.js";
import { decodeTeamCursor, encodeTeamCursor, teamPageLimit } from "../team-listing.js";
import { type AwsConnection, documentClient, queryAll } from "./client.js";

type Item = Record<string, unknown>;
const teamPk = (teamId: string) => `TM#${teamId}`;
const memberKey = (teamId: string, userId: string) => ({ pk: teamPk(teamId), sk: `M#${userId}` });
const teamSessionKey = (teamId: string, owner: string, sessionId: string) => ({
  pk: teamPk(teamId),
  sk: `S#${owner}#${sessionId}`,
});
const pointerKey = (owner: string, sessionId: string) => ({ pk: `U#${owner}`, sk: `TS#${sessionId}` });
const listPk = (teamId: string) => `TMS#${teamId}`;
/** A team list entry's sort key: ids hold only characters above `#`, so the order is the tuple's. */
const listSk = (lastAt: string, owner: string, sessionId: string) => `${lastAt}#${owner}#${sessionId}`;
const dataOf = <T>(item: Item): T => JSON.parse(item.data as string) as T;
const DAY_SECONDS = 24 * 3600;
/** The record as stored: its last activity is a key of the list, kept apart. */
const withoutLastAt = ({ lastAt: _lastAt, ...record }: TeamSessionRecord): TeamSessionRecord => record;

/** The record of a pointer written before the list kept records: its keys and team only. */
const keysRecord = (teamId: string, owner: string, sessionId: string): TeamSessionRecord => ({
  teamId,
  owner,
  sessionId,
  addedAt: "",
});

/** A team session pointer as the list reads it (one from before the list had only its keys and team). */
function entryOf(item: Item): TeamSessionEntry {
  const record: TeamSessionRecord =
    typeof item.data === "string"
      ? dataOf<TeamSessionRecord>(item)
      : keysRecord(
          item.team as string,
          (item.pk as string).slice("U#".length),
          (item.sk as string).slice("TS#".length),
        );
  return { ...record, lastAt: typeof item.lastAt === "string" ? item.lastAt : "" };
}

/** The teams port on one DynamoDB table of `TABLE_SCHEMA`. */
export class DynamoTeamStore implements TeamStore {
  private readonly client: DynamoDBDocumentClient;

  constructor(
    connection: AwsConnection,
    private readonly table: string,
  ) {
    this.client = documentClient(connection);
  }

  private async get(Key: Item, ConsistentRead = true): Promise<Item | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.table, Key, ConsistentRead }))).Item;
  }

  async createTeam(team: TeamRecord, owner: MembershipRecord): Promise<void> {
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.table,
              Item: { pk: teamPk(team.id), sk: "TM", data: JSON.stringify(team) },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          },
          { Put: { TableName: this.table, Item: this.memberItem(owner) } },
        ],
      }),
    );
  }

  private memberItem(m: MembershipRecord): Item {
    return { ...memberKey(m.teamId, m.userId), gsi1pk: `UTM#${m.userId}`, gsi1sk: m.teamId, data: JSON.stringify(m) };
  }

  async getTeam(teamId: string): Promise<TeamRecord | undefined> {
    const item = await this.get({ pk: teamPk(teamId), sk: "TM" });
    return item ? dataOf<TeamRecord>(item) : undefined;
  }

  async setPolicy(teamId: string, policy: TeamPolicy): Promise<void> {
    const team = await this.getTeam(teamId);
    if (!team) return;
    await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: { pk: teamPk(teamId), sk: "TM", data: JSON.stringify({ ...team, policy }) },
      }),
    );
  }

  async memberships(query: { teamId?: string; userId?: string }): Promise<MembershipRecord[]> {
    const { teamId, userId } = query;
    if (teamId !== undefined && userId !== undefined) {
      const item = await this.get(memberKey(teamId, userId));
      return item ? [dataOf<MembershipRecord>(item)] : [];
    }
    const items =
      teamId !== undefined
        ? await queryAll(this.client, {
            TableName: this.table,
            KeyConditionExpression: "pk = :pk AND begins_with(sk, :m)",
            ExpressionAttributeValues: { ":pk": teamPk(teamId), ":m": "M#" },
            ConsistentRead: true,
          })
        : await queryAll(this.client, {
            TableName: this.table,
            IndexName: TABLE_SCHEMA.index.name,
            KeyConditionExpression: "gsi1pk = :pk",
            ExpressionAttributeValues: { ":pk": `UTM#${userId ?? ""}` },
          });
    return items.map((item) => dataOf<MembershipRecord>(item));
  }

  async putMembership(membership: MembershipRecord): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.table, Item: this.memberItem(membership) }));
  }

  async removeMembership(teamId: string, userId: string): Promise<TeamSessionRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :s)",
      ExpressionAttributeValues: { ":pk": teamPk(teamId), ":s": `S#${userId}#` },
      ConsistentRead: true,
    });
    const sessions = items.map((item) => dataOf<TeamSessionRecord>(item));
    // The sessions leave first: a member whose removal fails halfway is still a member.
    for (const session of sessions) await this.setSessionTeam(session.owner, session.sessionId, null);
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [{ Delete: { TableName: this.table, Key: memberKey(teamId, userId) } }],
      }),
    );
    return sessions;
  }

  async putInvite(invite: InviteRecord): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          pk: `TI#${invite.hash}`,
          sk: "TI",
          [TABLE_SCHEMA.ttlAttribute]: Math.floor(Date.parse(invite.expiresAt) / 1000) + DAY_SECONDS,
          data: JSON.stringify(invite),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  async getInvite(hash: string): Promise<InviteRecord | undefined> {
    const item = await this.get({ pk: `TI#${hash}`, sk: "TI" });
    return item && item.redeemedBy === undefined ? dataOf<InviteRecord>(item) : undefined;
  }

  async consumeInvite(hash: string): Promise<InviteRecord | undefined> {
    // As sign-in links: a conditional mark, so one of many concurrent redemptions wins and the
    // SDK's retry of an applied mark meets its own write.
    const redemption = randomUUID();
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: `TI#${hash}`, sk: "TI" },
          UpdateExpression: "SET redeemedBy = :r",
          ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(redeemedBy) OR redeemedBy = :r)",
          ExpressionAttributeValues: { ":r": redemption },
          ReturnValues: "ALL_NEW",
        }),
      );
      return result.Attributes ? dataOf<InviteRecord>(result.Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  async setSessionTeam(
    owner: string,
    sessionId: string,
    record: TeamSessionRecord | null,
  ): Promise<string | undefined> {
    const before = await this.sessionTeam(owner, sessionId);
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]["TransactItems"]> = [];
    if (before !== undefined && before !== record?.teamId) {
      items.push({ Delete: { TableName: this.table, Key: teamSessionKey(before, owner, sessionId) } });
    }
    if (record) {
      items.push(
        {
          Put: {
            TableName: this.table,
            Item: this.pointerItem(record),
            // The pointer read above is still the stored one: a racing change fails this one.
            ...(before === undefined
              ? { ConditionExpression: "attribute_not_exists(pk)" }
              : { ConditionExpression: "team = :before", ExpressionAttributeValues: { ":before": before } }),
          },
        },
        {
          Put: {
            TableName: this.table,
            Item: { ...teamSessionKey(record.teamId, owner, sessionId), data: JSON.stringify(withoutLastAt(record)) },
          },
        },
      );
    } else if (before !== undefined) {
      items.push({ Delete: { TableName: this.table, Key: pointerKey(owner, sessionId) } });
    }
    if (items.length) await this.client.send(new TransactWriteCommand({ TransactItems: items }));
    return before;
  }

  /** A session's pointer to its team, which is also its entry in the team's list. */
  private pointerItem(record: TeamSessionRecord): Item {
    const lastAt = record.lastAt ?? "";
    return {
      ...pointerKey(record.owner, record.sessionId),
      team: record.teamId,
      lastAt,
      gsi1pk: listPk(record.teamId),
      gsi1sk: listSk(lastAt, record.owner, record.sessionId),
      data: JSON.stringify(withoutLastAt(record)),
    };
  }

  async sessionTeam(owner: string, sessionId: string): Promise<string | undefined> {
    const item = await this.get(pointerKey(owner, sessionId));
    return typeof item?.team === "string" ? item.team : undefined;
  }

  async teamSessions(teamId: string): Promise<TeamSessionRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :s)",
      ExpressionAttributeValues: { ":pk": teamPk(teamId), ":s": "S#" },
      ConsistentRead: true,
    });
    return items.map((item) => dataOf<TeamSessionRecord>(item));
  }

  async teamSessionPage(teamId: string, page: { limit: number; cursor?: string }): Promise<TeamSessionPage> {
    const limit = teamPageLimit(page.limit);
    const after = page.cursor ? decodeTeamCursor(teamId, page.cursor) : undefined;
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: TABLE_SCHEMA.index.name,
        KeyConditionExpression: after ? "gsi1pk = :pk AND gsi1sk < :after" : "gsi1pk = :pk",
        ExpressionAttributeValues: {
          ":pk": listPk(teamId),
          ...(after ? { ":after": listSk(after.lastAt, after.owner, after.sessionId) } : {}),
        },
        ScanIndexForward: false,
        Limit: limit + 1,
      }),
    );
    const items = result.Items ?? [];
    const sessions = items.slice(0, limit).map((item) => entryOf(item));
    const last = sessions[limit - 1];
    return items.length > limit && last ? { sessions, cursor: encodeTeamCursor(teamId, last) } : { sessions };
  }

  async touchTeamSession(owner: string, sessionId: string, teamId: string, lastAt: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: pointerKey(owner, sessionId),
          // The list's keys move with the activity; a pointer from before the list was kept
          // (no record, no list keys) becomes an entry now.
          UpdateExpression: "SET lastAt = :at, gsi1pk = :pk, gsi1sk = :sk, #data = if_not_exists(#data, :data)",
          // Still in that team, and no later activity recorded meanwhile.
          ConditionExpression: "team = :team AND (attribute_not_exists(lastAt) OR lastAt < :at)",
          ExpressionAttributeNames: { "#data": "data" },
          ExpressionAttributeValues: {
            ":team": teamId,
            ":at": lastAt,
            ":pk": listPk(teamId),
            ":sk": listSk(lastAt, owner, sessionId),
            ":data": JSON.stringify(keysRecord(teamId, owner, sessionId)),
          },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw error;
    }
  }

  async appendAudit(event: AuditEvent): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          pk: `TA#${event.teamId}`,
          sk: `${event.at}#${randomBytes(6).toString("hex")}`,
          data: JSON.stringify(event),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  async listAudit(teamId: string, page: { limit: number; cursor?: string }): Promise<AuditPage> {
    const pk = `TA#${teamId}`;
    const after = page.cursor ? decodeListCursor(`audit:${teamId}`, page.cursor) : undefined;
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: after ? "pk = :pk AND sk < :after" : "pk = :pk",
        ExpressionAttributeValues: { ":pk": pk, ...(after ? { ":after": `${after[0]}#${after[1]}` } : {}) },
        ScanIndexForward: false,
        Limit: page.limit + 1,
        ConsistentRead: true,
      }),
    );
    const items = result.Items ?? [];
    const events = items.slice(0, page.limit).map((item) => dataOf<AuditEvent>(item));
    const last = items[page.limit - 1];
    if (!(items.length > page.limit) || !last) return { events };
    const sk = last.sk as string;
    const cut = sk.lastIndexOf("#");
    return { events, cursor: encodeListCursor(`audit:${teamId}`, [sk.slice(0, cut), sk.slice(cut + 1)]) };
  }
}
