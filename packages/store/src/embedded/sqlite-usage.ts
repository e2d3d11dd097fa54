/**
 * Insights' usage by day in the metadata file (see {@link UsageStore}): each session's usage of
 * each day in `usage_days`, written by every commit in its transaction (see `usage-days.ts`).
 */

import type { SessionHead } from "../ports-sessions.js";
import type { UsageInRange, UsageStore } from "../ports-usage.js";
import { dayUsagesOf, UNCOUNTED_DAY, UsageCollector } from "../usage-days.js";
import type { SqliteDatabase } from "./sqlite.js";

/** Usage days read at once by a report (then other requests run). */
const USAGE_DAYS_AT_ONCE = 2000;
/** Reports' answers kept (by user and range), for when nothing moved since. */
const USAGE_ANSWERS_KEPT = 16;

/** The usage port on the metadata file; the sessions adapter writes its days. */
export class SqliteUsageStore implements UsageStore {
  /** Writes of each user's usage days by this connection (see {@link listUsage}). */
  private readonly usageRevisions = new Map<string, number>();
  private readonly usageAnswers = new Map<string, { revision: string; answer: UsageInRange }>();

  constructor(private readonly db: SqliteDatabase) {}

  /** Writes every head's usage by day (a file from before it was kept). */
  fillUsageDays(): void {
    const heads = this.db.prepare("SELECT data FROM heads").all() as { data: string }[];
    this.db.transaction(() => {
      for (const row of heads) this.writeUsageDays(JSON.parse(row.data) as SessionHead);
    })();
  }

  /**
   * Writes a head's usage of `days` (all of its days when not given) again, in the caller's
   * transaction; a day the head no longer has is removed.
   */
  writeUsageDays(head: SessionHead, days?: readonly string[]): void {
    this.moved(head.userId);
    const usages = dayUsagesOf(head.summary);
    const remove = this.db.prepare("DELETE FROM usage_days WHERE user_id = ? AND day = ? AND session_id = ?");
    const put = this.db.prepare("INSERT INTO usage_days (user_id, day, session_id, data) VALUES (?, ?, ?, ?)");
    for (const day of days ?? usages.keys()) {
      remove.run(head.userId, day, head.sessionId);
      const usage = usages.get(day);
      if (usage !== undefined) put.run(head.userId, day, head.sessionId, usage);
    }
  }

  /** A user's usage days changed (a commit, a deletion): their kept answers are stale. */
  moved(userId: string): void {
    this.usageRevisions.set(userId, (this.usageRevisions.get(userId) ?? 0) + 1);
  }

  /**
   * The range's usage, read a few thousand days at a time with other requests let in between (a
   * year of a large library is a hundred thousand rows). The same object as last time when no
   * day of the user moved since, here or in another connection (callers may keep what they
   * made of it).
   */
  async listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    const key = `${userId}\u0000${range.from}\u0000${range.to}`;
    const revision = () =>
      `${this.usageRevisions.get(userId) ?? 0}/${(this.db.pragma("data_version", { simple: true }) as number) ?? 0}`;
    const at = revision();
    const kept = this.usageAnswers.get(key);
    if (kept?.revision === at) return kept.answer;
    // Keyset pages over the primary key (user, day, session): each page seeks, none rescans.
    const next = this.db.prepare(
      `SELECT day, session_id, data FROM usage_days WHERE user_id = ? AND (day, session_id) > (?, ?) AND day <= ?
       ORDER BY day, session_id LIMIT ?`,
    );
    const collector = new UsageCollector();
    for (const [from, to] of [
      [UNCOUNTED_DAY, UNCOUNTED_DAY],
      [range.from, range.to],
    ]) {
      for (let after: [string, string] = [from, ""]; ; ) {
        const rows = next.all(userId, ...after, to, USAGE_DAYS_AT_ONCE) as {
          day: string;
          session_id: string;
          data: string;
        }[];
        for (const row of rows) collector.add(row.day, row.session_id, JSON.parse(row.data));
        if (rows.length < USAGE_DAYS_AT_ONCE) break;
        const last = rows[rows.length - 1];
        after = [last.day, last.session_id];
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const answer = collector.result();
    // Read between two looks at the revision: kept only when nothing moved meanwhile.
    if (revision() === at) {
      this.usageAnswers.delete(key);
      this.usageAnswers.set(key, { revision: at, answer });
      if (this.usageAnswers.size > USAGE_ANSWERS_KEPT)
        this.usageAnswers.delete(this.usageAnswers.keys().next().value as string);
    }
    return answer;
  }
}
