/**
 * Insights' usage by day on the metadata table (see {@link UsageStore}): the day items each
 * commit marks and settles (see `usage-day-items.ts`), read by the days of a report's range.
 */
import type { UsageInRange, UsageStore } from "../ports-usage.js";
import type { UsageDayItems } from "./usage-day-items.js";

/** The usage port on the metadata table. */
export class DynamoUsageStore implements UsageStore {
  constructor(private readonly days: UsageDayItems) {}

  listUsage(userId: string, range: { from: string; to: string }): Promise<UsageInRange> {
    return this.days.read(userId, range);
  }
}
