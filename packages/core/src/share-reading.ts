/**
 * Reading a share: the session view its page shows (masked), the compact tree of a whole share,
 * windows of entries, its branch file and its context. The route only translates HTTP; the
 * rules of what a share may show live here. A pinned share shows only its path; a whole share
 * follows the session and lets the reader switch branches.
 */
import {
  contextSettings,
  decodeUtf8,
  type EntryRecord,
  isHeader,
  type LineRecord,
  labelsOf,
  pathTo,
  type SessionIndex,
  stringifyJson,
} from "@pisync/format";
import { bounded, FIELD_LIMITS } from "@pisync/protocol";
import type { SessionHead, ShareRecord } from "@pisync/store";
import type { CompactTree, PageEntry, SessionFacts, SessionPageView } from "@pisync/viewer";
import { searchableText } from "./entry-text.js";
import { NotFound } from "./errors.js";
import type { BuiltIndex } from "./index-cache.js";
import { isCutPreview } from "./ingest.js";
import { Memo } from "./memo.js";
import type { Reader } from "./reader.js";
import { pathFacts, pathTotals } from "./share-view.js";
import { shownEntry } from "./shown-entry.js";
import { tipDevices, type WriterView } from "./writers.js";

/** Entries shown at once: the latest ones first, earlier and later ones on demand. */
export const PAGE_ENTRIES = 150;

/** Matches of the tree's search answered at once (the rest on the next page). */
export const FIND_PAGE = 2000;

/** One page of the tree's search: positions in the compact tree's arrays, in file order. */
export interface TreeMatches {
  matches: number[];
  /** Where the next page starts (a position to pass as `from`); absent on the last page. */
  next?: number;
  /** Entries in the tree. */
  total: number;
}

/** What the Markdown of a branch is made from: the page's facts, then the path's entries a window at a time. */
export interface BranchDocument {
  facts: SessionFacts;
  leafId: string | null;
  /** Entries on the path. */
  total: number;
  /** The path's entries, root first, masked when the share masks. */
  windows: AsyncGenerator<PageEntry[]>;
  /** Credentials masked so far (all of them once `windows` is done). */
  masked(): number;
}

/** A branch read from a position on: its windows' entries carry their positions on the path. */
export interface PositionedBranch extends Omit<BranchDocument, "windows"> {
  windows: AsyncGenerator<{ at: number; entry: PageEntry }[]>;
}

/** The masking a share's text goes through (the API runs it off the main thread). */
export interface ShareMasker {
  maskLines(lines: string[]): Promise<{ lines: string[]; count: number }>;
  maskTexts(texts: string[]): Promise<string[]>;
  /** One text, synchronously (previews made again from entries). */
  maskText(text: string): string;
}

/** What a page request asks for: a branch, and a window of its path. */
export interface PageRequest {
  /** The leaf to show (a whole share only; a pinned share accepts its own). */
  leaf?: string;
  /** An entry to show: the window that holds it. */
  target?: string;
  /** Path positions: entries before `before`, or from `from` on. */
  before?: number;
  from?: number;
}

type Records = readonly EntryRecord[];

/** What a page of one branch shows beside its window of entries (masked when the share masks). */
interface BranchView {
  path: Records;
  facts: SessionFacts;
  /** Tips of the tree, newest first (whole shares). */
  leaves?: { id: string; preview: string; timestamp?: string }[];
  labels: Map<string, string>;
  edits: Map<string, string>;
}

const KIND_OF_ROLE: Record<string, string> = {
  user: "u",
  assistant: "a",
  toolResult: "t",
  bashExecution: "b",
  system: "s",
  custom: "m",
  branchSummary: "c",
  compactionSummary: "c",
};
const KIND_OF_TYPE: Record<string, string> = {
  compaction: "c",
  branch_summary: "c",
  custom_message: "m",
  label: "l",
  session_info: "i",
  context_edit: "e",
};

/** The one-letter kind of an entry in the compact tree. */
function kindOf(r: EntryRecord): string {
  if (r.type === "message") return KIND_OF_ROLE[r.role ?? ""] ?? "o";
  return KIND_OF_TYPE[r.type ?? ""] ?? "o";
}

/** A cut preview may end in half a credential the masker cannot recognise: its last word goes. */
function uncut(preview: string): string {
  return isCutPreview(preview) ? `${preview.slice(0, preview.lastIndexOf(" ") + 1)}…` : preview;
}

/** Where a window of `size` entries lies in a path of `total` for a request. */
function windowOf(total: number, request: PageRequest, targetAt: number): { start: number; end: number } {
  if (targetAt >= 0) {
    const start = Math.max(0, Math.min(targetAt - Math.floor(PAGE_ENTRIES / 3), total - PAGE_ENTRIES));
    return { start, end: Math.min(total, start + PAGE_ENTRIES) };
  }
  if (request.from !== undefined) {
    const start = Math.min(request.from, total);
    return { start, end: Math.min(total, start + PAGE_ENTRIES) };
  }
  const end = Math.min(request.before ?? total, total);
  return { start: Math.max(0, end - PAGE_ENTRIES), end };
}

/**
 * Models named on a path as `[provider, model]`, in order of first appearance (each part is
 * session text of its own: masked apart, as a credential may sit in either), and the last
 * thinking level set.
 */
function modelsOf(path: Records): { models: [string, string][]; thinkingLevel?: string } {
  const models = new Map<string, [string, string]>();
  const add = (provider: unknown, model: unknown) => {
    const pair: [string, string] = [String(provider ?? "?"), String(model ?? "?")];
    const key = JSON.stringify(pair);
    if (!models.has(key)) models.set(key, pair);
  };
  let thinkingLevel: string | undefined;
  for (const r of path) {
    if (r.type === "model_change") add(r.facts?.provider, r.facts?.modelId);
    if (r.type === "message" && r.role === "assistant" && r.facts?.messageModel) {
      add(r.facts.messageProvider, r.facts.messageModel);
    }
    if (r.type === "thinking_level_change") thinkingLevel = String(r.facts?.thinkingLevel ?? "off");
  }
  return { models: [...models.values()], thinkingLevel };
}

/** Message and tool-call counts of a path (a tool call is counted by its result). */
function countsOf(path: Records): { messages: number; toolCalls: number } {
  let messages = 0;
  let toolCalls = 0;
  for (const r of path) {
    if (r.type !== "message") continue;
    messages++;
    if (r.role === "toolResult") toolCalls++;
  }
  return { messages, toolCalls };
}

/** Entries changed by a `context_edit` on the path: target → the last edit's id. */
function editsOf(path: Records): Map<string, string> {
  const edits = new Map<string, string>();
  for (const r of path) {
    if (r.type === "context_edit" && typeof r.facts?.targetId === "string" && r.id) edits.set(r.facts.targetId, r.id);
  }
  return edits;
}

/** Whether a line is the session header (pi's rule: the first JSON value of type session). */
function isHeaderLine(line: string): boolean {
  try {
    return isHeader(JSON.parse(line));
  } catch {
    return false;
  }
}

/** The share reading use cases, over a {@link Reader} and a masker. */
export class ShareReading {
  constructor(
    private readonly reader: Reader,
    private readonly masker: ShareMasker,
  ) {}

  /**
   * What everything a share shows depends on beside the request: the share's record (its mask,
   * pin and expiry) and the session's version (it only grows: a new length is a new version).
   * Answers made for one key may be kept and served again under it.
   */
  versionKey(share: ShareRecord, head: SessionHead): string {
    const { generation, createdAt, length, renames } = head.current;
    const record = `${share.id}/${share.leafId ?? ""}/${share.maskSecrets ? "m" : "u"}/${share.expiresAt}`;
    // A rename changes the title (and the first line) at the same length.
    return `${record}/${head.createdAt}/${generation}/${createdAt}/${length}/${renames ?? 0}`;
  }

  /**
   * What a share's preview image depends on: the session's version and what of it the share
   * shows (its pin and mask), not which link asks (nor its expiry): every link to one version of
   * a session shares one image. Without `version`, the same for any version of the session.
   */
  imageKey(share: ShareRecord, head: SessionHead, version = true): string {
    const { generation, createdAt, length } = head.current;
    const shown = `${head.userId}/${head.sessionId}/${head.createdAt}/${share.leafId ?? ""}/${share.maskSecrets ? "m" : "u"}`;
    return version ? `${shown}/${generation}/${createdAt}/${length}` : shown;
  }

  /** The index of a share's session; a pinned share whose entry is gone looks like a missing link. */
  async index(share: ShareRecord, head: SessionHead) {
    const { index, previews } = await this.reader.index(head, head.current);
    if (share.leafId !== undefined && !index.byId(share.leafId)) throw new NotFound("no such link");
    return { index, previews };
  }

  /** The leaf a request may see: a pinned share's own; in a whole share, any entry (default: pi's leaf). */
  leafOf(share: ShareRecord, index: SessionIndex, asked?: string): EntryRecord | undefined {
    if (share.leafId !== undefined) {
      if (asked !== undefined && asked !== share.leafId) throw new NotFound("no such entry in this link");
      return index.byId(share.leafId);
    }
    if (asked !== undefined) {
      const leaf = index.byId(asked);
      if (!leaf) throw new NotFound("no such entry in this link");
      return leaf;
    }
    return index.defaultLeaf;
  }

  /** A line transform that masks (when the share masks) and counts what it masked. */
  private maskOf(share: ShareRecord) {
    let masked = 0;
    const transform = share.maskSecrets
      ? async (lines: string[]) => {
          const result = await this.masker.maskLines(lines);
          masked += result.count;
          return result.lines;
        }
      : undefined;
    return { transform, masked: () => masked };
  }

  /** Texts masked when the share masks. */
  private texts(share: ShareRecord, texts: string[]): Promise<string[]> {
    return share.maskSecrets && texts.length ? this.masker.maskTexts(texts) : Promise.resolve(texts);
  }

  /** The labels shown beside entries (a pinned share's: those set on its path), masked. */
  private async labels(share: ShareRecord, index: SessionIndex): Promise<Map<string, string>> {
    const leaf = share.leafId === undefined ? undefined : index.byId(share.leafId);
    const labels = leaf ? pathFacts(pathTo(index, leaf).records, {}).labels : labelsOf(index);
    const masked = await this.texts(share, [...labels.values()]);
    return new Map([...labels.keys()].map((id, i) => [id, bounded(masked[i], FIELD_LIMITS.label)]));
  }

  /** Loads (and masks) the entries of path records. */
  private async entries(share: ShareRecord, head: SessionHead, index: SessionIndex, records: Records) {
    const mask = this.maskOf(share);
    await this.reader.prime(head, index, records, mask.transform);
    const entries: PageEntry[] = [];
    for (const r of records) {
      if (r.id === undefined || r.type === undefined) continue;
      try {
        entries.push(shownEntry(r, index.entry(r)));
      } catch {
        // A line the mask made unreadable is left out.
      }
    }
    return { entries, masked: mask.masked() };
  }

  /**
   * Branches shown lately, by version and leaf: what a page shows beside its window. Their paths
   * hold index records (shared with a kept index, or alive only here): a few hundred thousand.
   */
  private readonly branches = new Memo<BranchView>(16, 200_000, (branch) => branch.path.length + 1);

  /** The branch to `leaf` as pages show it, masked; made once per version of the session. */
  private branch(share: ShareRecord, head: SessionHead, built: BuiltIndex, leaf: EntryRecord | undefined) {
    const key = `${this.versionKey(share, head)} ${leaf?.id ?? ""}`;
    return this.branches.get(key, () => this.makeBranch(share, head, built, leaf));
  }

  private async makeBranch(
    share: ShareRecord,
    head: SessionHead,
    { index, previews }: BuiltIndex,
    leaf: EntryRecord | undefined,
  ): Promise<BranchView> {
    const pinned = share.leafId !== undefined;
    const path = leaf ? pathTo(index, leaf).records : [];
    if (path.length > 50_000) await new Promise((resolve) => setImmediate(resolve));
    const leaves = pinned
      ? undefined
      : index
          .leafIds()
          .map((id) => index.byId(id))
          .filter((r) => r !== undefined)
          .sort((a, b) => b.index - a.index)
          .slice(0, 50)
          .map((r) => ({ id: r.id as string, timestamp: r.timestamp, preview: previews[r.line] ?? r.type ?? "" }));
    const summary = head.summary;
    // A pinned share's title and totals come from its path only.
    const onPath = pinned ? pathFacts(path, previews) : undefined;
    const totals = onPath ? await pathTotals(this.reader, head, path) : undefined;
    const named = onPath ? onPath.name : summary.name;
    let title = named ?? (onPath ? onPath.firstMessage : summary.firstMessage) ?? head.sessionId;
    let cwd = summary.cwd;
    const onPathModels = modelsOf(path);
    const models = onPathModels.models;
    let thinkingLevel = onPathModels.thinkingLevel;
    let shownModels = models.map(([provider, model]) => `${provider}/${model}`);
    // The first user message (of the path, or of a whole session), for link previews.
    const firstUser = (onPath ? path : index.records).find((r) => r.type === "message" && r.role === "user");
    let firstMessage = firstUser ? previews[firstUser.line] : undefined;
    if (share.maskSecrets) {
      // Title, folder, models and branch previews are session text too, masked before they are
      // cut (a stored preview was cut first: a cut one is made again from its entry).
      const first = named === undefined ? firstUser : undefined;
      const shown = [...(leaves ?? []).map((l) => index.byId(l.id)), firstUser].filter((r) => r !== undefined);
      const cut = shown.filter((r) => isCutPreview(previews[r.line] ?? ""));
      const remade = await this.reader.previews(head, cut, (text) => this.masker.maskText(text));
      const remadeOf = (r: LineRecord | undefined) => (r ? remade.get(r.line) : undefined);
      const texts = await this.masker.maskTexts([
        title,
        cwd ?? "",
        ...(leaves ?? []).map((l) => l.preview),
        ...models.flat(),
        thinkingLevel ?? "",
        firstMessage ?? "",
      ]);
      [title, cwd] = [remadeOf(first) ?? texts[0], cwd === undefined ? undefined : texts[1]];
      leaves?.forEach((l, i) => {
        l.preview = remadeOf(index.byId(l.id)) ?? texts[i + 2];
      });
      const modelsAt = 2 + (leaves?.length ?? 0);
      shownModels = models.map((_, i) => `${texts[modelsAt + 2 * i]}/${texts[modelsAt + 2 * i + 1]}`);
      thinkingLevel = thinkingLevel === undefined ? undefined : texts[modelsAt + 2 * models.length];
      firstMessage = firstMessage === undefined ? undefined : (remadeOf(firstUser) ?? texts[texts.length - 1]);
    }
    const facts: SessionFacts = {
      title: bounded(title, FIELD_LIMITS.name),
      firstMessage: firstMessage === undefined ? undefined : bounded(firstMessage, FIELD_LIMITS.preview),
      cwd: bounded(cwd, FIELD_LIMITS.cwd),
      models: shownModels.map((m) => bounded(m, FIELD_LIMITS.model)),
      thinkingLevel: bounded(thinkingLevel, FIELD_LIMITS.model),
      firstAt: path.find((r) => r.timestamp)?.timestamp,
      lastAt: path.findLast((r) => r.timestamp)?.timestamp,
      ...countsOf(path),
      tokens: totals ? totals.totalTokens : summary.tokens,
      cost: totals ? Math.round(totals.cost * 1e6) / 1e6 : summary.cost,
      totalsOf: pinned ? "this branch" : "the whole session",
    };
    return { path, facts, leaves, labels: await this.labels(share, index), edits: editsOf(path) };
  }

  /** The page of a share: its facts and one window of the asked branch, masked. */
  async page(share: ShareRecord, head: SessionHead, base: string, request: PageRequest): Promise<SessionPageView> {
    const built = await this.index(share, head);
    const { index } = built;
    const pinned = share.leafId !== undefined;
    // An unknown target of a whole share opens the branch that holds it; pinned: it must be on the path.
    let leafAsked = request.leaf;
    if (!pinned && leafAsked === undefined && request.target !== undefined && index.byId(request.target)) {
      leafAsked = request.target;
    }
    const leaf = this.leafOf(share, index, leafAsked);
    const { path, facts, leaves, labels, edits } = await this.branch(share, head, built, leaf);
    const targetAt = request.target === undefined ? -1 : path.findIndex((r) => r.id === request.target);
    const { start, end } = windowOf(path.length, request, targetAt);
    const { entries, masked } = await this.entries(share, head, index, path.slice(start, end));
    const notes = [
      share.maskSecrets
        ? `${masked} credential${masked === 1 ? "" : "s"} masked in what this link shows`
        : "credentials are not masked in this link",
      pinned ? "one branch, as of its last entry" : "",
      `link expires ${share.expiresAt.slice(0, 16).replace("T", " ")} UTC`,
    ].filter(Boolean);
    const unread = head.summary.problemCount;
    return {
      base,
      facts,
      entries,
      window: { start, end, total: path.length },
      leafId: leaf?.id ?? null,
      branches: !pinned,
      leaves,
      labels,
      edits,
      notes,
      empty: path.some((r) => r.id !== undefined)
        ? undefined
        : index.records.length
          ? "This session holds no entry with an id (a value without one is on no branch), so there is nothing to show on it. Its lines are in the JSONL download."
          : "This session has no entries yet: nothing was said in it.",
      problems: unread
        ? `${unread} line${unread === 1 ? "" : "s"} of this session could not be read (broken or cut JSON) and ${unread === 1 ? "is" : "are"} left out, as pi leaves ${unread === 1 ? "it" : "them"} out.`
        : undefined,
      live: !pinned && request.leaf === undefined && request.before === undefined && request.from === undefined,
    };
  }

  /** A window of the asked branch's path (live updates: the entries after `after`). */
  async window(share: ShareRecord, head: SessionHead, request: PageRequest & { after?: string }) {
    const built = await this.index(share, head);
    const { index } = built;
    const leaf = this.leafOf(share, index, request.leaf);
    const { path, labels, edits } = await this.branch(share, head, built, leaf);
    let records: Records;
    if (request.after !== undefined) {
      const at = path.findIndex((r) => r.id === request.after);
      records = (at >= 0 ? path.slice(at + 1) : path.slice(-PAGE_ENTRIES)).slice(0, PAGE_ENTRIES);
    } else {
      const { start, end } = windowOf(path.length, request, -1);
      records = path.slice(start, end);
    }
    const { entries } = await this.entries(share, head, index, records);
    return { entries, labels, edits };
  }

  /** Trees made lately, by version: a link opened by many is masked once per change. */
  private readonly trees = new Memo<{ tree: Omit<CompactTree, "leaf">; at: Map<string, number>; offsets: number[] }>(
    8,
    1_000_000,
    (made) => made.tree.ids.length + 1,
  );

  /**
   * The compact tree of a whole share, masked (a pinned share has none: 404). `writers` (the
   * owner's view only: device names are private) labels each branch tip with its device.
   */
  async tree(share: ShareRecord, head: SessionHead, leafId?: string, writers?: WriterView[]): Promise<CompactTree> {
    if (share.leafId !== undefined) throw new NotFound("a one-branch link has no tree");
    const { index, previews } = await this.index(share, head);
    const leaf = this.leafOf(share, index, leafId);
    const { tree, at, offsets } = await this.trees.get(this.versionKey(share, head), () =>
      this.makeTree(share, index, previews),
    );
    const devices = writers ? tipDevices(tree.parents, offsets, writers) : undefined;
    return { ...tree, leaf: leaf?.id === undefined ? -1 : (at.get(leaf.id) ?? -1), ...(devices ? { devices } : {}) };
  }

  private async makeTree(share: ShareRecord, index: SessionIndex, previews: Record<number, string>) {
    const records = index.records.filter((r) => r.id !== undefined);
    const at = new Map<string, number>();
    for (const [i, r] of records.entries()) at.set(r.id as string, i);
    const labels = labelsOf(index);
    const texts = await this.texts(
      share,
      records.map((r) => uncut(previews[r.line] ?? "")),
    );
    const labelTexts = await this.texts(share, [...labels.values()]);
    const labelOf = new Map([...labels.keys()].map((id, i) => [id, bounded(labelTexts[i], FIELD_LIMITS.label)]));
    let kinds = "";
    for (const r of records) kinds += kindOf(r);
    const tree = {
      ids: records.map((r) => r.id as string),
      parents: records.map((r) => (r.parentId === null ? -1 : (at.get(r.parentId) ?? -1))),
      kinds,
      previews: texts,
      labels: records.map((r) => labelOf.get(r.id as string) ?? null),
      times: records.map((r) => (r.timestamp ? Math.floor(Date.parse(r.timestamp) / 1000) || 0 : 0)),
    };
    return { tree, at, offsets: records.map((r) => r.offset) };
  }

  /**
   * The searchable text of every entry of a whole share (masked when the share masks), in the
   * compact tree's order: made once per version of the session, a batch of lines at a time.
   */
  private readonly searchTexts = new Memo<string[]>(
    2,
    64 * 1024 * 1024,
    (texts) => texts.reduce((sum, t) => sum + t.length, 0) + texts.length,
  );

  private async makeSearchTexts(share: ShareRecord, head: SessionHead, index: SessionIndex): Promise<string[]> {
    const records = index.records.filter((r) => r.id !== undefined);
    const texts = new Array<string>(records.length).fill("");
    const at = new Map(records.map((r, i) => [r.line, i]));
    for await (const batch of this.reader.batches(head, records)) {
      const lines = batch.map((b) => b.text);
      const shown = share.maskSecrets ? (await this.masker.maskLines(lines)).lines : lines;
      batch.forEach(({ record }, i) => {
        try {
          texts[at.get(record.line) as number] = searchableText(JSON.parse(shown[i]));
        } catch {
          // A line the mask made unreadable is found by nothing.
        }
      });
    }
    return texts;
  }

  /**
   * The tree's search over the whole text of every entry (masked), case-insensitive: positions
   * in the compact tree from `from` on, at most {@link FIND_PAGE}. A pinned share has no tree: 404.
   */
  async find(share: ShareRecord, head: SessionHead, query: string, from = 0): Promise<TreeMatches> {
    if (share.leafId !== undefined) throw new NotFound("a one-branch link has no tree");
    const { index } = await this.index(share, head);
    const texts = await this.searchTexts.get(this.versionKey(share, head), () =>
      this.makeSearchTexts(share, head, index),
    );
    const q = query.toLowerCase();
    const matches: number[] = [];
    let at = Math.max(0, from);
    for (; at < texts.length && matches.length < FIND_PAGE; at++) if (texts[at].includes(q)) matches.push(at);
    return { matches, ...(at < texts.length ? { next: at } : {}), total: texts.length };
  }

  /**
   * A branch for a document of its own (the Markdown): the page's facts, and the path's entries
   * read and masked a window at a time (memory does not grow with the session).
   */
  async document(share: ShareRecord, head: SessionHead, leafAsked?: string): Promise<BranchDocument> {
    const built = await this.index(share, head);
    const { index } = built;
    const leaf = this.leafOf(share, index, leafAsked);
    const { path, facts } = await this.branch(share, head, built, leaf);
    let masked = 0;
    const read = async (records: Records) => {
      const window = await this.entries(share, head, index, records);
      masked += window.masked;
      return window.entries;
    };
    async function* windows() {
      for (let start = 0; start < path.length; start += PAGE_ENTRIES) {
        yield await read(path.slice(start, start + PAGE_ENTRIES));
      }
    }
    return { facts, leafId: leaf?.id ?? null, total: path.length, windows: windows(), masked: () => masked };
  }

  /**
   * A branch from path position `from` on, `size` entries at a time, each with its position:
   * what a reader that pages through the Markdown (MCP's `read_session`) resumes from. Only the
   * windows asked for are read and masked.
   */
  async branchFrom(
    share: ShareRecord,
    head: SessionHead,
    leafAsked: string | undefined,
    from: number,
    size: number,
  ): Promise<PositionedBranch> {
    const built = await this.index(share, head);
    const leaf = this.leafOf(share, built.index, leafAsked);
    const { path, facts } = await this.branch(share, head, built, leaf);
    let masked = 0;
    const read = async (start: number) => {
      const records = path.slice(start, start + size);
      const window = await this.entries(share, head, built.index, records);
      masked += window.masked;
      const at = new Map(records.map((r, i) => [r.id, start + i]));
      return window.entries.map((entry) => ({ at: at.get(entry.id) ?? start, entry }));
    };
    async function* windows() {
      for (let start = Math.max(0, from); start < path.length; start += size) yield await read(start);
    }
    return { facts, leafId: leaf?.id ?? null, total: path.length, windows: windows(), masked: () => masked };
  }

  /** What a live page polls: changes as the session grows (a pinned share's never does). */
  async state(share: ShareRecord, head: SessionHead) {
    if (share.leafId === undefined) {
      return { generation: head.current.generation, bytes: head.current.length, leafId: head.summary.leafId };
    }
    const { index } = await this.index(share, head);
    const path = pathTo(index, index.byId(share.leafId) as EntryRecord).records;
    return { generation: head.current.generation, bytes: pathFacts(path, {}).bytes, leafId: share.leafId };
  }

  /**
   * What a live page's header shows, as it is now (a whole share's default branch): its message
   * and tool-call counts, its last entry's time, the session's tokens and cost. Read from the
   * index kept per version, so only a session that moved costs a read.
   */
  async liveFacts(
    share: ShareRecord,
    head: SessionHead,
  ): Promise<{ messages: number; toolCalls: number; lastAt?: string; tokens: number; cost: number }> {
    const { index } = await this.index(share, head);
    const leaf = this.leafOf(share, index);
    const path = leaf ? pathTo(index, leaf).records : [];
    const lastAt = path.findLast((r) => r.timestamp)?.timestamp;
    return {
      ...countsOf(path),
      ...(lastAt ? { lastAt } : {}),
      tokens: head.summary.tokens,
      cost: head.summary.cost,
    };
  }

  /**
   * The JSONL: the whole session, or (pinned) the header and the path's entries: a valid session
   * file. Masked a batch of lines at a time, so what is held does not grow with the session.
   */
  async *branchFile(share: ShareRecord, head: SessionHead): AsyncGenerator<string> {
    const mask = async (lines: string[]) => (share.maskSecrets ? (await this.masker.maskLines(lines)).lines : lines);
    const join = (lines: string[]) => lines.map((line) => `${line}\n`).join("");
    if (share.leafId === undefined) {
      // A whole share's download is the file's bytes: no index is needed (nor held) for it.
      for await (const lines of this.reader.rawLines(head.userId, head.sessionId, head.current.generation)) {
        yield join(await mask(lines));
      }
      return;
    }
    const { index } = await this.index(share, head);
    const path = pathTo(index, index.byId(share.leafId) as EntryRecord).records;
    const headerEnd = path.length ? path[0].offset : head.current.length;
    const { bytes } = await this.reader.raw(head.userId, head.sessionId, {
      start: 0,
      end: Math.min(headerEnd, 1024 * 1024),
    });
    const header = decodeUtf8(bytes)
      .split("\n")
      .find((line) => isHeaderLine(line));
    if (header) yield join(await mask([header]));
    for await (const batch of this.reader.batches(head, path)) {
      yield join(await mask(batch.map((b) => b.text).filter(Boolean)));
    }
  }

  /** The rebuilt context as JSON text, a batch of messages at a time, masked. */
  async *context(share: ShareRecord, head: SessionHead, leafAsked?: string): AsyncGenerator<string> {
    const { index } = await this.index(share, head);
    const leaf = this.leafOf(share, index, leafAsked);
    const mask = this.maskOf(share);
    const leafId = leaf?.id ?? index.defaultLeafId;
    yield '{"messages":[';
    let first = true;
    for await (const messages of this.reader.contextMessages(head, index, leaf?.id, mask.transform)) {
      if (!messages.length) continue;
      yield `${first ? "" : ","}${messages.map((m) => stringifyJson(m)).join(",")}`;
      first = false;
    }
    // The settings are session text too (a thinking level, a provider, a model id): masked as
    // one JSON line, like the messages, whatever their shape.
    const settings = await this.settings(contextSettings(index, leaf?.id), mask.transform);
    // The count is known only now: the rest of the object comes last.
    yield `],${JSON.stringify({ ...settings, leafId, masked: mask.masked() }).slice(1)}`;
  }

  /** A context's settings, masked when `transform` masks (unreadable once masked: pi's defaults). */
  private async settings(
    settings: ReturnType<typeof contextSettings>,
    transform: ((lines: string[]) => Promise<string[]>) | undefined,
  ): Promise<ReturnType<typeof contextSettings>> {
    const { thinkingLevel, model } = settings;
    if (!transform) return { thinkingLevel, model };
    const [line] = await transform([JSON.stringify({ thinkingLevel, model })]);
    try {
      return JSON.parse(line) as ReturnType<typeof contextSettings>;
    } catch {
      return { thinkingLevel: "off", model: null };
    }
  }
}
