/**
 * Sign-in links and device codes on the metadata table (see {@link SignInStore}): one item each,
 * kept a day past its expiry by TTL; consuming one marks it with the call's own id, so of
 * concurrent calls exactly one gets it.
 */
import { randomUUID } from "node:crypto";
import { PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { TABLE_SCHEMA } from "../layout.js";
import type { DeviceCodeRecord, DeviceCodeStatus, LoginLinkRecord, SignInStore } from "../ports-sign-in.js";
import { DAY_SECONDS, dataOf, epochSeconds, type Item, key, type MetaTable } from "./meta-table.js";

/** The sign-in port on the metadata table. */
export class DynamoSignInStore implements SignInStore {
  constructor(private readonly table: MetaTable) {}

  async putLoginLink(link: LoginLinkRecord): Promise<void> {
    await this.table.putNew({
      ...key(`L#${link.hash}`, "L"),
      [TABLE_SCHEMA.ttlAttribute]: epochSeconds(link.expiresAt) + DAY_SECONDS,
      data: JSON.stringify(link),
    });
  }

  async consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined> {
    // Marked redeemed by this call; the item then lives out its TTL, as a used link.
    return this.markOnce<LoginLinkRecord>(key(`L#${hash}`, "L"), "redeemedBy");
  }

  /**
   * Marks an item as taken by this call (`attribute` set to a fresh id) if it exists, meets
   * `condition` and no other call marked it, and returns its record: of concurrent calls one
   * marks it and the others fail the condition, while the SDK's own retry of an applied mark
   * (its answer lost) carries the same id and meets its own write.
   */
  private async markOnce<T>(
    Key: Item,
    attribute: "redeemedBy" | "consumedBy",
    condition?: { expression: string; names: Record<string, string>; values: Record<string, unknown> },
  ): Promise<T | undefined> {
    const mark = randomUUID();
    const result = await this.table.unlessConditionFails(
      this.table.client.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key,
          UpdateExpression: `SET ${attribute} = :mark`,
          ConditionExpression: `attribute_exists(pk)${condition ? ` AND ${condition.expression}` : ""} AND (attribute_not_exists(${attribute}) OR ${attribute} = :mark)`,
          ...(condition ? { ExpressionAttributeNames: condition.names } : {}),
          ExpressionAttributeValues: { ":mark": mark, ...condition?.values },
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    return result?.Attributes ? dataOf<T>(result.Attributes) : undefined;
  }

  private deviceCodeItem(record: DeviceCodeRecord): Item {
    return {
      ...key(`D#${record.userCode}`, "D"),
      status: record.status,
      until: epochSeconds(record.expiresAt),
      [TABLE_SCHEMA.ttlAttribute]: epochSeconds(record.expiresAt) + DAY_SECONDS,
      data: JSON.stringify(record),
    };
  }

  async putDeviceCode(record: DeviceCodeRecord): Promise<boolean> {
    // An expired code that TTL has not removed yet gives its user code away.
    return this.putDeviceCodeIf(record, "attribute_not_exists(pk) OR #until <= :now OR #data = :data", {
      names: { "#until": "until" },
      values: { ":now": epochSeconds(record.createdAt) },
    });
  }

  /** Puts a device code's item if `condition` holds (`#data = :data`: the item already is this one); @returns whether it did. */
  private async putDeviceCodeIf(
    record: DeviceCodeRecord,
    condition: string,
    { names, values }: { names: Record<string, string>; values: Record<string, unknown> },
  ): Promise<boolean> {
    const item = this.deviceCodeItem(record);
    const result = await this.table.unlessConditionFails(
      this.table.client.send(
        new PutCommand({
          TableName: this.table.name,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: { ...names, "#data": "data" },
          ExpressionAttributeValues: { ...values, ":data": item.data },
        }),
      ),
    );
    return result !== undefined;
  }

  async getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined> {
    const stored = await this.table.getItem(key(`D#${userCode}`, "D"), true);
    // A consumed code waits for TTL only: it is gone.
    return stored && stored.consumedBy === undefined ? dataOf<DeviceCodeRecord>(stored) : undefined;
  }

  async updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean> {
    // A retry of an applied update (its answer lost) meets its own write: the same data counts.
    return this.putDeviceCodeIf(
      record,
      "attribute_exists(pk) AND attribute_not_exists(consumedBy) AND (#status = :expected OR #data = :data)",
      { names: { "#status": "status" }, values: { ":expected": expected } },
    );
  }

  async consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined> {
    // As a sign-in link: marked consumed by this call, so of concurrent calls exactly one gets
    // it; TTL removes the item.
    return this.markOnce<DeviceCodeRecord>(key(`D#${userCode}`, "D"), "consumedBy", {
      expression: "#status = :expected",
      names: { "#status": "status" },
      values: { ":expected": expected },
    });
  }
}
