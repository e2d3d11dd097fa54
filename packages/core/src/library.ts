/**
 * The owner's library: the list of their sessions (newest conversation first, filtered by
 * folder, model and dates, a cursor per page) and one session read through the share viewer's
 * rules as a whole, unmasked, never-expiring view (it is the owner's own).
 */
import { bounded, FIELD_LIMITS, SHARE_ID } from "@pisync/protocol";
import {
  type CardFilter,
  type CardPage,
  cardMatches,
  encodeListCursor,
  InvalidCursorError,
  type MetaStore,
  type SessionCard,
  type SessionHead,
  type ShareRecord,
} from "@pisync/store";
import type { CompactTree, SessionPageView } from "@pisync/viewer";
import { boundedCard } from "./bounds.js";
import { BadRequest } from "./errors.js";
import { checkSessionId } from "./keys.js";
import type { Reader } from "./reader.js";
import type { PageRequest, ShareReading } from "./share-reading.js";
import { namedWriters } from "./writers.js";

/** What the list may be narrowed to; every field is optional and they combine (and). */
export type LibraryFilter = CardFilter;

/** One page of the list, with what the filters can offer. */
export interface LibraryPage {
  sessions: SessionCard[];
  /**
   * Pass back for the next page; absent on the last one. A filter that matches little may give
   * a short (even empty) page with a cursor: each page looks through a bounded stretch of the list.
   */
  cursor?: string;
  /** The folders and models of the user's latest sessions, most used first (the filters' choices). */
  folders: string[];
  models: string[];
}

/** One page of the user's share links, newest first, with the titles of their sessions. */
export interface SharesPage {
  shares: ShareRecord[];
  /** The title of each listed share's session that still exists, by session id. */
  titles: Map<string, string>;
  cursor?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** How many of the latest sessions the filters' choices are drawn from (one bounded read). */
export const CHOICES_FROM = 200;

/** Values most used first (then by name), at most `limit`. */
function mostUsed(values: Iterable<string>, limit: number): string[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([v]) => v);
}

/** A card's title: its name, its first message, or its id. */
export const titleOf = (card: SessionCard) => card.name || card.firstMessage || card.sessionId;

/** Whether a card passes a filter. */
export const matches = cardMatches;

/** Checks a filter's dates (a precise 400 for a malformed one). */
export function checkFilter(filter: LibraryFilter): LibraryFilter {
  for (const key of ["from", "to"] as const) {
    const value = filter[key];
    if (value !== undefined && (!DAY.test(value) || Number.isNaN(Date.parse(value)))) {
      throw new BadRequest(`${key} must be a day, like 2026-01-31`, "bad_request");
    }
  }
  return filter;
}

/** A store's refusal of a cursor, as the 400 it is. */
async function withCursor<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof InvalidCursorError) throw new BadRequest(error.message, "bad_request");
    throw error;
  }
}

/** The library's use cases, over the metadata port, the reader and the share viewer's rules. */
export class Library {
  constructor(
    private readonly meta: MetaStore,
    private readonly reader: Reader,
    private readonly reading: ShareReading,
  ) {}

  /**
   * A page of the user's sessions matching `filter`, latest conversation first, read from the
   * store's ordered list a page at a time (never the whole list); the filters' choices come from
   * the latest {@link CHOICES_FROM} sessions.
   * @throws BadRequest for a malformed filter date or cursor (another user's included)
   */
  async list(userId: string, filter: LibraryFilter, page: { limit: number; cursor?: string }): Promise<LibraryPage> {
    checkFilter(filter);
    const [found, latest] = await this.pageAndLatest(userId, filter, page);
    return {
      sessions: found.cards.map(boundedCard),
      ...(found.cursor ? { cursor: found.cursor } : {}),
      folders: mostUsed(
        latest.cards.map((c) => c.cwd).filter((c) => c !== undefined),
        200,
      ).map((f) => bounded(f, FIELD_LIMITS.cwd)),
      models: mostUsed(
        latest.cards.flatMap((c) => c.models),
        100,
      ).map((m) => bounded(m, FIELD_LIMITS.model)),
    };
  }

  /**
   * A page of the list and the latest sessions the filters' choices come from. The unfiltered
   * first page is the start of the latest sessions: one read gives both.
   */
  private async pageAndLatest(
    userId: string,
    filter: LibraryFilter,
    page: { limit: number; cursor?: string },
  ): Promise<[CardPage, CardPage]> {
    if (!page.cursor && !Object.values(filter).some(Boolean) && page.limit < CHOICES_FROM) {
      const latest = await this.meta.listCardPage(userId, { limit: CHOICES_FROM });
      const cards = latest.cards.slice(0, page.limit);
      const last = cards[cards.length - 1];
      const more = latest.cards.length > page.limit || latest.cursor !== undefined;
      return [{ cards, ...(more ? { cursor: encodeListCursor(userId, [last.lastAt, last.sessionId]) } : {}) }, latest];
    }
    return Promise.all([
      withCursor(this.meta.listCardPage(userId, { limit: page.limit, cursor: page.cursor, filter })),
      this.meta.listCardPage(userId, { limit: CHOICES_FROM }),
    ]);
  }

  /** The user's latest sessions (at most `limit`), newest conversation first: the share form's choices. */
  async latest(userId: string, limit: number): Promise<SessionCard[]> {
    return (await this.meta.listCardPage(userId, { limit })).cards.map(boundedCard);
  }

  /** One of the user's share links by id; `undefined` for an unknown one or another user's. */
  async share(userId: string, shareId: string): Promise<ShareRecord | undefined> {
    const share = SHARE_ID.test(shareId) ? await this.meta.getShare(shareId) : undefined;
    return share?.userId === userId ? share : undefined;
  }

  /** A page of the user's share links, newest first, with their sessions' titles. @throws BadRequest for a bad cursor */
  async shares(userId: string, page: { limit: number; cursor?: string }): Promise<SharesPage> {
    const found = await withCursor(this.meta.listSharePage(userId, page));
    const cards = await this.meta.getCards(
      userId,
      found.shares.map((s) => s.sessionId),
    );
    const titles = new Map(cards.map((card) => [card.sessionId, titleOf(boundedCard(card))]));
    return { shares: found.shares, titles, ...(found.cursor ? { cursor: found.cursor } : {}) };
  }

  /**
   * A session of the user and the view the share viewer reads it through: the whole session,
   * unmasked, never expiring. @throws NotFound for a missing session, or another user's
   */
  async open(userId: string, sessionId: string): Promise<{ share: ShareRecord; head: SessionHead }> {
    return ownerView(this.reader, userId, sessionId);
  }

  /** The compact tree of the owner's session, each branch tip labelled with the device that wrote it. */
  async tree(userId: string, sessionId: string, leafId?: string): Promise<CompactTree> {
    const { share, head } = await this.open(userId, sessionId);
    const writers = await namedWriters(head.current.writers, () => this.meta.listTokens(userId));
    return this.reading.tree(share, head, leafId, writers);
  }

  /** Labels the page's branch tips (the list readers without the script use) with their devices. */
  private async labelTips(
    userId: string,
    share: ShareRecord,
    head: SessionHead,
    leaves: NonNullable<SessionPageView["leaves"]>,
  ): Promise<void> {
    const writers = await namedWriters(head.current.writers, () => this.meta.listTokens(userId));
    if (!writers) return;
    const tree = await this.reading.tree(share, head, undefined, writers);
    const deviceOf = new Map((tree.devices ?? []).map(([i, device]) => [tree.ids[i], device]));
    for (const leaf of leaves) leaf.device = deviceOf.get(leaf.id);
  }

  /** The session's page as the owner sees it: the viewer's view, with the owner's notes. */
  async page(userId: string, sessionId: string, base: string, request: PageRequest): Promise<SessionPageView> {
    const { share, head } = await this.open(userId, sessionId);
    const view = await this.reading.page(share, head, base, request);
    if (view.leaves && view.leaves.length > 1) await this.labelTips(userId, share, head, view.leaves);
    const generations = head.generations;
    view.notes = [
      "your session, unmasked: only you see this page",
      `generation ${head.current.generation}${generations > 1 ? ` of ${generations}` : ""}`,
      `backed up ${head.updatedAt.slice(0, 16).replace("T", " ")} UTC`,
    ];
    return view;
  }
}

/**
 * A session of the user and the view the share viewer reads it through: the whole session,
 * unmasked, never expiring. @throws NotFound for a missing session, or another user's
 */
export async function ownerView(
  reader: Reader,
  userId: string,
  sessionId: string,
): Promise<{ share: ShareRecord; head: SessionHead }> {
  checkSessionId(sessionId);
  const head = await reader.head(userId, sessionId);
  const share: ShareRecord = {
    id: `owner:${sessionId}`,
    userId,
    sessionId,
    sessionCreatedAt: head.createdAt,
    createdAt: head.createdAt,
    expiresAt: "9999-12-31T23:59:59.999Z",
    maskSecrets: false,
  };
  return { share, head };
}

/** A filter's value as a query-language filter value (quoted; quotes inside dropped). */
const quoted = (value: string) => `"${value.replace(/"/g, "")}"`;

/**
 * The search query the sessions page runs: the words typed, narrowed by the page's filters in
 * the query language (`cwd:`, `model:`, `since:`, `before:`). The text is never given to the
 * engine as syntax: the search package parses it.
 */
export function searchText(q: string, filter: LibraryFilter): string {
  checkFilter(filter);
  const parts = [q.trim()];
  if (filter.cwd) parts.push(`cwd:${quoted(filter.cwd)}`);
  if (filter.model) parts.push(`model:${quoted(filter.model)}`);
  if (filter.from) parts.push(`since:${filter.from}`);
  if (filter.to) {
    // `before:` excludes its day: the page's "to" includes it.
    parts.push(`before:${new Date(Date.parse(filter.to) + 86_400_000).toISOString().slice(0, 10)}`);
  }
  return parts.join(" ");
}
