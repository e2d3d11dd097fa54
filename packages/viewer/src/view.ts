/**
 * What the viewer renders: a session view, plain data with nothing of shares or storage in it.
 * Whoever shows a session (a share link, the owner's library) builds one and masks it first:
 * every string here is shown as it is (escaped, never trusted).
 */

/** One entry of the shown path, as stored. */
export interface PageEntry {
  id: string;
  type: string;
  timestamp?: string;
  entry: Record<string, unknown>;
  /**
   * Set when the entry is shown as its text instead (`entry` is then empty): a line nested too
   * deep or too large to render. `text` is the entry's JSON, `cut` when it is only its start.
   */
  asText?: { why: string; text: string; cut: boolean };
}

/** The facts shown at the top of the page. */
export interface SessionFacts {
  title: string;
  /** A preview of the first user message (of the shown path, or of a whole session). */
  firstMessage?: string;
  cwd?: string;
  /** Every `provider/model` the shown path's assistant messages and model changes name, first first. */
  models: string[];
  thinkingLevel?: string;
  /** Timestamps of the shown path's first and last entries (not the backup's times). */
  firstAt?: string;
  lastAt?: string;
  /** Messages (user, assistant, tool results, …) and tool calls (counted by their results) on the path. */
  messages: number;
  toolCalls: number;
  tokens: number;
  cost: number;
  /** What the totals cover, e.g. "this session" or "this branch". */
  totalsOf: string;
}

/** The compact tree a navigator draws: parallel arrays, one slot per entry, in file order. */
export interface CompactTree {
  ids: string[];
  /** Index of each entry's parent in these arrays; -1 for a root (or a parent that is missing). */
  parents: number[];
  /**
   * One letter per entry: u user, a assistant, t tool result, b bash, s system, c compaction or
   * branch summary, m custom message, l label, i session info, e context edit, o other.
   */
  kinds: string;
  /** A short preview of each entry's text ("" when it has none). */
  previews: string[];
  /** The label set on each entry (null when none). */
  labels: (string | null)[];
  /** Seconds since the epoch of each entry's timestamp (0 when it has none). */
  times: number[];
  /** Index of the entry shown (the leaf), -1 when none. */
  leaf: number;
  /**
   * The owner's view only, when more than one device wrote the session: the device (its name)
   * that wrote each branch tip, as `[index, device]`. A share never carries it.
   */
  devices?: [index: number, device: string][];
}

/** The part of the path the page shows: entries [start, end) of `total`. */
export interface PathWindow {
  start: number;
  end: number;
  total: number;
}

/** A session view: everything a page of it shows. */
export interface SessionPageView {
  /** Where the page lives (links are built from it: `<base>?leaf=…`, `<base>/raw`, …). */
  base: string;
  /** Where this origin serves the session's blobs (see `EntriesInput.blobs`); absent: blob images are named, not loaded. */
  blobs?: string;
  facts: SessionFacts;
  /** Entries of the shown window of the path, root first. */
  entries: PageEntry[];
  window: PathWindow;
  /** The leaf shown; null when the session has no entry. */
  leafId: string | null;
  /** Whether the reader may switch branches (then `leaves` lists tips and the tree is offered). */
  branches: boolean;
  /** Tips of the tree, newest first (the list readers without the script use). */
  leaves?: {
    id: string;
    preview: string;
    timestamp?: string;
    /** The owner's page only, when several devices wrote the session: the device that wrote this tip. */
    device?: string;
  }[];
  labels: Map<string, string>;
  /** Entries changed by a later `context_edit` on the path: target id → the edit's id. */
  edits: Map<string, string>;
  /** Sentences about the view (what is masked, how long the link lives, …), shown under the facts. */
  notes: string[];
  /** A sentence saying why nothing is shown, when the path is empty or the asked entry is unknown. */
  empty?: string;
  /** Lines of the file that could not be read, said in one sentence. */
  problems?: string;
  /** Whether the page follows the session as it grows. */
  live: boolean;
  /**
   * What the page's host adds (the owner's library: its stylesheet, script, actions), as HTML it
   * built with `escapeHtml`; a share link has none.
   */
  host?: { head: string; toolbar: string };
  /**
   * What a share link tells clients in its `<head>`: where its Markdown is, and the preview
   * card (Open Graph, Twitter) link unfurlers read. Absolute URLs.
   */
  card?: LinkCard;
}

/** A share link's card: its URL, its Markdown and its preview image (all with the link's token). */
export interface LinkCard {
  url: string;
  markdown: string;
  image: string;
}
