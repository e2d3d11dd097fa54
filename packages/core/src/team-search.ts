/**
 * Search over a team's sessions. A team is a tenant of its own in an index of its own: the
 * team's sessions are indexed again under the team (as `<owner>:<session>`), so its vocabulary
 * (prefix completions), its ranking statistics and the bounds of a query's work depend on the
 * team's sessions alone, exactly as a user's search depends on that user's sessions alone. No
 * session outside the team is ever in the team's tenant: a member's other sessions cannot show
 * through a hit, a snippet, a completion or a rank.
 */
import type { LineSource, SearchIndex, SearchPage, SearchQuery } from "@pisync/search";
import type { MetaStore, SessionHead, Stores, TeamStore } from "@pisync/store";
import { SearchIndexer, storedLines } from "./search-indexer.js";

/** A team session's id in the team's tenant. */
export const teamRef = (owner: string, sessionId: string) => `${owner}:${sessionId}`;

/** The owner and session of a team tenant's id (user ids hold no `:`). */
export function parseTeamRef(ref: string): { owner: string; sessionId: string } | undefined {
  const colon = ref.indexOf(":");
  return colon > 0 ? { owner: ref.slice(0, colon), sessionId: ref.slice(colon + 1) } : undefined;
}

/**
 * The stores as the team tenant's indexer reads them: a team's "sessions" are the heads of the
 * sessions in it now (one taken out of the team has none, so the indexer removes it).
 */
export function teamStores(stores: Stores, teams: TeamStore): Stores {
  const getHead = async (teamId: string, ref: string): Promise<SessionHead | undefined> => {
    const at = parseTeamRef(ref);
    if (!at || (await teams.sessionTeam(at.owner, at.sessionId)) !== teamId) return undefined;
    return stores.meta.getHead(at.owner, at.sessionId);
  };
  const listHeads: MetaStore["listHeads"] = async (teamId) => {
    const heads = await Promise.all(
      (await teams.teamSessions(teamId)).map(async (r) => {
        const head = await stores.meta.getHead(r.owner, r.sessionId);
        return head ? { ...head, sessionId: teamRef(r.owner, r.sessionId) } : undefined;
      }),
    );
    return { heads: heads.filter((h) => h !== undefined) };
  };
  // Only what the indexer and the snippets' line source read of the metadata port.
  const meta = { getHead, listHeads } as Partial<MetaStore> as MetaStore;
  return { blobs: stores.blobs, meta };
}

/** The line source of a team index (its snippets read the owners' stored lines). */
export function teamLines(stores: Stores, teams: TeamStore): LineSource {
  return storedLines(teamStores(stores, teams));
}

/** What feeds a team's index: `SearchIndexer`'s calls, a team id in place of a user id. */
export type TeamIndexer = Pick<SearchIndexer, "markDirty" | "catchUp" | "flush" | "stop">;

/** A team's search: its own index, fed by its own indexer as team sessions change. */
export class TeamSearch {
  /** The team tenant's indexer (its `flush` waits for what was marked). */
  readonly indexer: TeamIndexer;
  /** Told of each write's team lookup (see {@link written}), if anyone waits for them. */
  private readonly track?: (work: Promise<void>) => void;

  /**
   * @param index the teams' index, a team id in place of a user id
   * @param options.indexer what feeds it (default: an indexer of its own, over the teams' sessions);
   *   `track` is given each write's lookup of its team (on Lambda the answer waits for the marks it leaves)
   */
  constructor(
    stores: Stores,
    private readonly teams: TeamStore,
    private readonly index: SearchIndex,
    options: {
      log?: (line: string) => void;
      indexer?: TeamIndexer;
      track?: (work: Promise<void>) => void;
    } = {},
  ) {
    this.indexer =
      options.indexer ??
      new SearchIndexer(teamStores(stores, teams), index, {
        users: async () => [],
        log: options.log,
      });
    this.track = options.track;
  }

  /** A team session changed teams (added, taken back, its owner removed): its team indexes or forgets it. */
  moved(teamId: string, owner: string, sessionId: string): void {
    this.indexer.markDirty(teamId, teamRef(owner, sessionId));
  }

  /**
   * A session was written: if it is in a team, that team's index follows it. Answers at once
   * (the team's lookup and the indexing run after); a miss is made good by {@link catchUp}. The
   * lookup follows the write's commit: a session put in a team meanwhile is found in it (a
   * lookup made before the commit could miss it, and the team's index the write).
   */
  written(owner: string, sessionId: string): void {
    const work = this.teams.sessionTeam(owner, sessionId).then((teamId) => {
      if (teamId) this.moved(teamId, owner, sessionId);
    });
    if (this.track) this.track(work);
    else work.catch(() => {});
  }

  /** Brings teams' indexes up to their sessions (every team the index holds, and `teamIds`). */
  catchUp(teamIds: readonly string[] = []): Promise<void> {
    return this.indexer.catchUp(teamIds);
  }

  /**
   * Runs a query over a team's tenant. Hits are named by their owner and session; a session no
   * longer in the team (a change the indexer has not caught up with) is left out.
   */
  async search(
    teamId: string,
    query: SearchQuery,
    page: { limit: number; cursor?: string },
  ): Promise<Omit<SearchPage, "sessions"> & { sessions: Array<SearchPage["sessions"][number] & { owner: string }> }> {
    const found = await this.index.search(teamId, query, page);
    // Each hit's team, one read per hit of the page (bounded by its limit), never the whole team's.
    const checked = await Promise.all(
      found.sessions.map(async (hit) => {
        const at = parseTeamRef(hit.sessionId);
        return at && (await this.teams.sessionTeam(at.owner, at.sessionId)) === teamId
          ? [{ ...hit, sessionId: at.sessionId, owner: at.owner }]
          : [];
      }),
    );
    const sessions = checked.flat();
    return { ...found, sessions };
  }
}
