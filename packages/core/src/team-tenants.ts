/**
 * Teams as tenants of the users' own search index (the AWS layout: one index of many tenants,
 * with its marks, its scheduled passes and its upkeep). A team's tenant is named `~<team>`,
 * which no user id can be (they start with a letter or digit), so a user's search never reads a
 * team's tenant and a team's never reads a user's: each keeps its own vocabulary, statistics
 * and bounds. The indexer that feeds users' tenants feeds teams' too, through stores whose heads
 * of a team's tenant are the sessions in the team now (see {@link teamStores}).
 */
import type { SearchIndex } from "@pisync/search";
import type { MetaStore, Stores, TeamStore } from "@pisync/store";
import { type TeamIndexer, teamStores } from "./team-search.js";

/** The first character of a team's tenant: never that of a user id (`SAFE_ID`). */
const TEAM_TENANT_MARK = "~";

/** A team's tenant in a shared index. */
export const teamTenant = (teamId: string) => `${TEAM_TENANT_MARK}${teamId}`;

/** The team a tenant is, if it is one. */
export function teamOfTenant(tenant: string): string | undefined {
  return tenant.startsWith(TEAM_TENANT_MARK) ? tenant.slice(TEAM_TENANT_MARK.length) : undefined;
}

/**
 * The stores as a shared index's indexer reads them: a team's tenant has the heads of the
 * sessions in the team now (named `<owner>:<session>`); every other tenant is its user.
 */
export function tenantStores(stores: Stores, teams: TeamStore): Stores {
  const team = teamStores(stores, teams).meta;
  const meta = new Proxy(stores.meta, {
    get(target, name) {
      if (name === "getHead") {
        return ((tenant, sessionId) => {
          const teamId = teamOfTenant(tenant);
          return teamId ? team.getHead(teamId, sessionId) : target.getHead(tenant, sessionId);
        }) satisfies MetaStore["getHead"];
      }
      if (name === "listHeads") {
        return ((tenant, options) => {
          const teamId = teamOfTenant(tenant);
          return teamId ? team.listHeads(teamId, options) : target.listHeads(tenant, options);
        }) satisfies MetaStore["listHeads"];
      }
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ...stores, meta };
}

/**
 * Teams' tenants of a shared index, addressed by team id (what `TeamSearch` reads). `before`
 * runs ahead of a team's search (on Lambda: the team's marks are indexed first).
 */
export function teamTenants(index: SearchIndex, before?: (tenant: string) => Promise<void>): SearchIndex {
  const t = teamTenant;
  return {
    state: (teamId, sessionId) => index.state(t(teamId), sessionId),
    states: (teamId, sessionIds) =>
      index.states
        ? index.states(t(teamId), sessionIds)
        : Promise.all(sessionIds.map((sessionId) => index.state(t(teamId), sessionId))),
    sessions: (teamId) => index.sessions(t(teamId)),
    users: async () => (await index.users()).flatMap((tenant) => teamOfTenant(tenant) ?? []),
    apply: (batch) => index.apply({ ...batch, userId: t(batch.userId) }),
    applyAll: (batches) => index.applyAll(batches.map((batch) => ({ ...batch, userId: t(batch.userId) }))),
    remove: (teamId, sessionId) => index.remove(t(teamId), sessionId),
    // Never every tenant: only teams' are this view's.
    clear: async (teamId) => {
      for (const id of teamId === undefined ? await teamTenants(index).users() : [teamId]) await index.clear(t(id));
    },
    files: (teamId, sessionId, limit) => index.files(t(teamId), sessionId, limit),
    async search(teamId, query, options) {
      await before?.(t(teamId));
      return index.search(t(teamId), query, options);
    },
  };
}

/** The shared index's indexer, as a team's search drives it (team ids named as their tenants). */
export function tenantIndexer(indexer: TeamIndexer): TeamIndexer {
  return {
    markDirty: (teamId, ref) => indexer.markDirty(teamTenant(teamId), ref),
    catchUp: (teamIds) => indexer.catchUp(teamIds?.map(teamTenant)),
    flush: () => indexer.flush(),
    stop: () => indexer.stop(),
  };
}
