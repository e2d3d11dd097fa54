/**
 * The owner's library: the list of their sessions (newest conversation first, filtered by
 * folder, model and dates, a cursor per page) and one session read through the share viewer's
 * rules as a whole, unmasked, never-expiring view (it is the owner's own).
 */
import { bounded, FIELD_LIMITS } from "@pisync/protocol";
import type { MetaStore, SessionCard, SessionHead, ShareRecord } from "@pisync/store";
import type { CompactTree, SessionPageView } from "@pisync/viewer";
import { boundedCard } from "./bounds.js";
import { BadRequest } from "./errors.js";
import { checkSessionId } from "./keys.js";
import type { Reader } from "./reader.js";
import type { PageRequest, ShareReading } from "./share-reading.js";
import { namedWriters } from "./writers.js";

/** What the list may be narrowed to; every field is optional and they combine (and). */
export interface LibraryFilter {
  /** The session's folder is this one, or inside it. */
  cwd?: string;
  /** One of the models the session used (`provider/model`, or the model alone). */
  model?: string;
  /** Sessions whose last entry is on or after this day (`YYYY-MM-DD`, UTC). */
  from?: string;
  /** Sessions whose last entry is on or before this day (`YYYY-MM-DD`, UTC). */
  to?: string;
}

/** One page of the list, with what the filters can offer. */
export interface LibraryPage {
  sessions: SessionCard[];
  /** Pass back for the next page; absent on the last one. */
  cursor?: string;
  /** How many sessions match the filter (all pages). */
  matching: number;
  /** Every folder and model of the user's sessions, most used first (the filters' choices). */
  folders: string[];
  models: string[];
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The list's order: latest conversation first, then by id (a total order the cursor can name). */
function newestFirst(a: SessionCard, b: SessionCard): number {
  return a.lastAt === b.lastAt ? (a.sessionId < b.sessionId ? 1 : -1) : a.lastAt < b.lastAt ? 1 : -1;
}

/** Values most used first (then by name), at most `limit`. */
function mostUsed(values: Iterable<string>, limit: number): string[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([v]) => v);
}

function encodeCursor(card: SessionCard): string {
  return Buffer.from(JSON.stringify([card.lastAt, card.sessionId])).toString("base64url");
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string")) {
      return value as [string, string];
    }
  } catch {
    // Falls through to the error below.
  }
  throw new BadRequest("the cursor is not one this list gave", "bad_request");
}

/** Whether a card passes a filter. */
export function matches(card: SessionCard, filter: LibraryFilter): boolean {
  if (filter.cwd) {
    const cwd = card.cwd ?? "";
    const folder = filter.cwd.replace(/\/+$/, "");
    if (cwd !== filter.cwd && !cwd.startsWith(`${folder}/`)) return false;
  }
  if (filter.model && !card.models.some((m) => m === filter.model || m.endsWith(`/${filter.model}`))) return false;
  const day = card.lastAt.slice(0, 10);
  if (filter.from && day < filter.from) return false;
  if (filter.to && day > filter.to) return false;
  return true;
}

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

/** The library's use cases, over the metadata port, the reader and the share viewer's rules. */
export class Library {
  constructor(
    private readonly meta: MetaStore,
    private readonly reader: Reader,
    private readonly reading: ShareReading,
  ) {}

  /**
   * A page of the user's sessions matching `filter`, latest conversation first. The whole list
   * is one query of small cards (thousands of sessions cost milliseconds), filtered here.
   * @throws BadRequest for a malformed filter date or cursor
   */
  async list(userId: string, filter: LibraryFilter, page: { limit: number; cursor?: string }): Promise<LibraryPage> {
    checkFilter(filter);
    const after = page.cursor ? decodeCursor(page.cursor) : undefined;
    const cards = await this.meta.listCards(userId);
    const matching = cards.filter((card) => matches(card, filter)).sort(newestFirst);
    const start = after
      ? matching.findIndex((c) => c.lastAt < after[0] || (c.lastAt === after[0] && c.sessionId < after[1]))
      : 0;
    const from = start < 0 ? matching.length : start;
    const sessions = matching.slice(from, from + page.limit);
    const more = from + page.limit < matching.length;
    return {
      sessions: sessions.map(boundedCard),
      ...(more ? { cursor: encodeCursor(sessions[sessions.length - 1]) } : {}),
      matching: matching.length,
      folders: mostUsed(
        cards.map((c) => c.cwd).filter((c) => c !== undefined),
        200,
      ).map((f) => bounded(f, FIELD_LIMITS.cwd)),
      models: mostUsed(
        cards.flatMap((c) => c.models),
        100,
      ).map((m) => bounded(m, FIELD_LIMITS.model)),
    };
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
