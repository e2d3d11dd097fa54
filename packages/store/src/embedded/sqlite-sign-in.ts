/**
 * Sign-in links and device codes in the metadata file (see {@link SignInStore}): consuming one is
 * a single `DELETE … RETURNING`, so of concurrent calls exactly one gets it.
 */

import type { DeviceCodeRecord, DeviceCodeStatus, LoginLinkRecord, SignInStore } from "../ports-sign-in.js";
import type { SqliteDatabase } from "./sqlite.js";

/** The sign-in port on the metadata file. */
export class SqliteSignInStore implements SignInStore {
  constructor(private readonly db: SqliteDatabase) {}

  async putLoginLink(link: LoginLinkRecord): Promise<void> {
    this.db.prepare("INSERT INTO login_links (hash, data) VALUES (?, ?)").run(link.hash, JSON.stringify(link));
    // Links live a minute: the ones nobody redeemed go when the next is made.
    const now = link.createdAt;
    this.db.prepare("DELETE FROM login_links WHERE json_extract(data, '$.expiresAt') < ?").run(now);
  }

  async consumeLoginLink(hash: string): Promise<LoginLinkRecord | undefined> {
    // One statement deletes and returns: a second redemption finds no row.
    const row = this.db.prepare("DELETE FROM login_links WHERE hash = ? RETURNING data").get(hash) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as LoginLinkRecord) : undefined;
  }

  async putDeviceCode(record: DeviceCodeRecord): Promise<boolean> {
    // Codes live minutes: the expired ones go when the next is made, which frees their user code.
    this.db.prepare("DELETE FROM device_codes WHERE expires_at <= ?").run(record.createdAt);
    const { changes } = this.db
      .prepare("INSERT OR IGNORE INTO device_codes (user_code, status, expires_at, data) VALUES (?, ?, ?, ?)")
      .run(record.userCode, record.status, record.expiresAt, JSON.stringify(record));
    return changes === 1;
  }

  async getDeviceCode(userCode: string): Promise<DeviceCodeRecord | undefined> {
    const row = this.db.prepare("SELECT data FROM device_codes WHERE user_code = ?").get(userCode) as
      | { data: string }
      | undefined;
    return row ? (JSON.parse(row.data) as DeviceCodeRecord) : undefined;
  }

  async updateDeviceCode(record: DeviceCodeRecord, expected: DeviceCodeStatus): Promise<boolean> {
    const { changes } = this.db
      .prepare("UPDATE device_codes SET status = ?, expires_at = ?, data = ? WHERE user_code = ? AND status = ?")
      .run(record.status, record.expiresAt, JSON.stringify(record), record.userCode, expected);
    return changes === 1;
  }

  async consumeDeviceCode(userCode: string, expected: DeviceCodeStatus): Promise<DeviceCodeRecord | undefined> {
    const row = this.db
      .prepare("DELETE FROM device_codes WHERE user_code = ? AND status = ? RETURNING data")
      .get(userCode, expected) as { data: string } | undefined;
    return row ? (JSON.parse(row.data) as DeviceCodeRecord) : undefined;
  }
}
