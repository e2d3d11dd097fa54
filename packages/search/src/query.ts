/**
 * The search query language, parsed into an AST. The engine never sees the user's text as
 * syntax: adapters build their own query (for FTS5, {@link ftsMatch}) from the AST, quoting
 * every term.
 *
 * Grammar (terms are separated by white space):
 * - `word` — an entry containing the word; `word*` — a word starting with it (at least two
 *   letters or digits in each of its words: `foo-ba*` is the phrase "foo ba*");
 * - `"exact phrase"` — the words in that order;
 * - `-word`, `-"phrase"`, `-word*` — entries without it (needs at least one positive term);
 * - filters `cwd:TEXT`, `role:user|assistant|tool`, `since:7d` (or `12h`, `2w`, or a date),
 *   `before:2026-01-01`, `model:TEXT`, `label:TEXT` (a filter value may be quoted);
 * - `file:PATH` — entries whose tool calls name the path (or a path ending in `/PATH`); `*`
 *   matches any characters (`file:*.ts`); a trailing `/` is a folder and everything under it.
 *
 * The budget ({@link MAX_TERMS} words in all, a phrase counting each of its words, `file:` one,
 * and at most {@link MAX_PREFIXES} prefixes, a `file:` with `*` one) bounds what a query costs
 * before it runs.
 */
import * as z from "zod/mini";

/** A word, a prefix or a phrase; `exclude` for the `-` form. */
export interface Term {
  kind: "word" | "prefix" | "phrase";
  text: string;
  exclude: boolean;
}

/** Which kind of message an entry is, for `role:`. Tool calls, tool results and bash runs are `tool`. */
export type Role = "user" | "assistant" | "tool";

/** A parsed query. Times are epoch milliseconds. */
export interface SearchQuery {
  terms: Term[];
  cwd?: string;
  role?: Role;
  since?: number;
  before?: number;
  model?: string;
  label?: string;
  /** A path, a glob (`*`) or a folder (a trailing `/`): see {@link filePatterns}. */
  file?: string;
}

/** A query that cannot be run: `code` is machine-readable, `message` says what is wrong. */
export class QueryError extends Error {
  readonly code = "bad_query";
  constructor(message: string) {
    super(message);
    this.name = "QueryError";
  }
}

/**
 * A search that could not answer within its time limit (it ran, or waited for a free search
 * thread, too long): nothing is wrong with the query as such; answer 503 and let the client
 * try again, or narrow it.
 */
export class SearchTimeout extends Error {
  readonly code = "search_timeout";
  constructor(message: string) {
    super(message);
    this.name = "SearchTimeout";
  }
}

/** Bounds on the work one query can cause: its length, its words in all (a phrase counts each of its words), its prefixes. */
export const MAX_QUERY_LENGTH = 1000;
export const MAX_TERMS = 32;
export const MAX_PREFIXES = 4;

/** The raw query text: a bounded, non-empty string. */
export const QueryText = z.string().check(
  z.maxLength(MAX_QUERY_LENGTH, `the query is longer than ${MAX_QUERY_LENGTH} characters`),
  z.refine((s) => s.trim() !== "", "the query is empty"),
);

const FILTERS = new Set(["cwd", "role", "since", "before", "model", "label", "file"]);
const ROLES = new Set<Role>(["user", "assistant", "tool"]);
const UNITS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
/** Text the tokenizer keeps: a term without any letter or digit would match nothing. */
const HAS_WORD = /[\p{L}\p{N}]/u;
/** The words of a term as the tokenizer splits it (runs of letters and digits). */
const WORDS = /[\p{L}\p{N}]+/gu;
/** Letters or digits a prefix needs: a shorter one stands for a large part of the vocabulary. */
export const MIN_PREFIX = 2;

/** One white-space-separated token: an optional `-`, an optional `key:`, a bare or quoted value. */
interface Token {
  exclude: boolean;
  key?: string;
  value: string;
  quoted: boolean;
  at: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/u.test(text[i])) {
      i++;
      continue;
    }
    const at = i;
    let exclude = false;
    if (text[i] === "-" && i + 1 < text.length && !/\s/u.test(text[i + 1])) {
      exclude = true;
      i++;
    }
    let key: string | undefined;
    const keyMatch = /^([a-z]+):/u.exec(text.slice(i));
    if (keyMatch && FILTERS.has(keyMatch[1])) {
      key = keyMatch[1];
      i += keyMatch[0].length;
    }
    if (text[i] === '"') {
      const close = text.indexOf('"', i + 1);
      if (close < 0) throw new QueryError(`unclosed quote at character ${i + 1}`);
      tokens.push({ exclude, key, value: text.slice(i + 1, close), quoted: true, at });
      i = close + 1;
      if (i < text.length && !/\s/u.test(text[i]) && text[i] !== "*") {
        throw new QueryError(`a closing quote must be followed by a space (character ${i + 1})`);
      }
      if (text[i] === "*") throw new QueryError(`a phrase cannot be a prefix (character ${i + 1})`);
      continue;
    }
    let end = i;
    while (end < text.length && !/\s/u.test(text[end])) end++;
    const value = text.slice(i, end);
    if (value.includes('"')) throw new QueryError(`a quote inside a word at character ${at + 1}`);
    tokens.push({ exclude, key, value, quoted: false, at });
    i = end;
  }
  return tokens;
}

function parseTime(key: string, value: string, now: number): number {
  const relative = /^(\d{1,5})([hdw])$/u.exec(value);
  if (relative && key === "since") return now - Number(relative[1]) * UNITS[relative[2]];
  if (/^\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?$/u.test(value)) {
    const time = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
    if (Number.isFinite(time)) return time;
  }
  const forms = key === "since" ? "7d, 12h, 2w or a date (2026-01-01)" : "a date (2026-01-01)";
  throw new QueryError(`${key}: takes ${forms}, not "${value}"`);
}

/**
 * Parses a query. `now` anchors relative times (`since:7d`).
 * @throws QueryError for anything malformed, with a message that says what.
 */
export function parseQuery(input: unknown, now: number = Date.now()): SearchQuery {
  const checked = QueryText.safeParse(input);
  if (!checked.success) throw new QueryError(checked.error.issues[0]?.message ?? "the query is not valid");
  const query: SearchQuery = { terms: [] };
  const cost = { words: 0, prefixes: 0 };
  for (const token of tokenize(checked.data)) {
    if (token.key) {
      if (token.exclude) throw new QueryError(`a filter cannot be excluded: -${token.key}:`);
      const key = token.key as keyof Omit<SearchQuery, "terms">;
      if (query[key] !== undefined) throw new QueryError(`${key}: is given twice`);
      const value = token.value.trim();
      if (value === "") throw new QueryError(`${key}: needs a value`);
      if (key === "role") {
        if (!ROLES.has(value as Role)) throw new QueryError(`role: is user, assistant or tool, not "${value}"`);
        query.role = value as Role;
      } else if (key === "since" || key === "before") query[key] = parseTime(key, value, now);
      else query[key] = value;
      if (key === "file") {
        // Matched against every path of the user's entries: it costs a word, a glob a prefix.
        cost.words++;
        if (value.includes("*")) cost.prefixes++;
      }
      continue;
    }
    const prefix = !token.quoted && token.value.endsWith("*");
    const text = prefix ? token.value.slice(0, -1) : token.value;
    if (text.includes("*")) throw new QueryError(`"*" may only end a word (character ${token.at + 1})`);
    if (!HAS_WORD.test(text)) {
      if (token.quoted || prefix) throw new QueryError(`"${token.value}" has no letters or digits to search for`);
      continue; // lone punctuation between words
    }
    const words = wordsOf(text);
    // Each word of `x-a*` is searched; a one-letter word stands for a large part of the vocabulary.
    if (prefix && words.some((word) => Array.from(word).length < MIN_PREFIX)) {
      throw new QueryError(
        words.length === 1
          ? `"${token.value}": a prefix needs at least ${MIN_PREFIX} letters or digits`
          : `"${token.value}": every word of a prefix needs at least ${MIN_PREFIX} letters or digits`,
      );
    }
    cost.words += words.length;
    if (prefix) cost.prefixes++;
    query.terms.push({ kind: token.quoted ? "phrase" : prefix ? "prefix" : "word", text, exclude: token.exclude });
  }
  if (cost.words > MAX_TERMS) {
    throw new QueryError(
      `the query has ${cost.words} words: at most ${MAX_TERMS} in all (a phrase counts each of its words)`,
    );
  }
  if (cost.prefixes > MAX_PREFIXES) {
    throw new QueryError(`the query has more than ${MAX_PREFIXES} prefixes (word* or file: with *)`);
  }
  const positive = query.terms.some((t) => !t.exclude);
  if (!positive && query.terms.length > 0)
    throw new QueryError("exclusions need at least one word or phrase to search for");
  const filtered = Object.keys(query).length > 1;
  if (!positive && !filtered) throw new QueryError("the query has no words, phrases or filters");
  if (query.since !== undefined && query.before !== undefined && query.since >= query.before) {
    throw new QueryError("since: is not before before:");
  }
  return query;
}

/** The words of a term's text, as the index's tokenizer splits it. */
export function wordsOf(text: string): string[] {
  return text.match(WORDS) ?? [];
}

/** A term as an FTS5 string: in double quotes, inner quotes doubled, so no operator can slip in. */
function quote(term: Term): string {
  const quoted = `"${term.text.replaceAll('"', '""')}"`;
  return term.kind === "prefix" ? `${quoted}*` : quoted;
}

/**
 * The words a prefix stands for in one query (an adapter's bound on the work of `word*`), or
 * `undefined` to search the prefix as it is.
 */
export type PrefixExpansion = (prefix: string) => readonly string[] | undefined;

/**
 * The FTS5 MATCH expression of a query's terms, or `undefined` when it has none (filters only).
 * Every term is quoted: the user's text is never FTS5 syntax. `expand` may replace a prefix
 * (`("word1" OR "word2")`), looked for or excluded alike: an excluded prefix costs what a
 * positive one does, and excludes the completions the same prefix would find.
 */
export function ftsMatch(query: SearchQuery, expand?: PrefixExpansion): string | undefined {
  const expression = (term: Term): string => {
    if (term.kind !== "prefix" || !expand) return quote(term);
    // A prefix of several words (`foo-ba*`) is the phrase "foo ba*": its last word is expanded.
    const words = wordsOf(term.text);
    const last = words.pop();
    const completions = last === undefined ? undefined : expand(last);
    if (completions === undefined) return quote(term);
    if (completions.length === 0) return quote({ ...term, kind: "word" }); // no completion: nothing matches
    const phrase = (word: string) => quote({ kind: "word", text: [...words, word].join(" "), exclude: false });
    return `(${completions.map(phrase).join(" OR ")})`;
  };
  const positive = query.terms.filter((t) => !t.exclude).map(expression);
  if (positive.length === 0) return undefined;
  const negative = query.terms.filter((t) => t.exclude).map(expression);
  const base = positive.join(" AND ");
  return negative.length === 0 ? base : `(${base}) NOT (${negative.join(" OR ")})`;
}

/** `[`, `?` and `*` taken literally in a SQLite GLOB. */
function globLiteral(text: string): string {
  return text.replace(/[[?*]/gu, (c) => `[${c}]`);
}

/**
 * The SQLite GLOB patterns a `file:` value matches a stored path with (any of them): the path
 * itself or its tail after a `/` (`lib/util.ts` finds `src/lib/util.ts`), where `*` matches any
 * characters; a value ending in `/` is that folder and every path under it. Everything else in
 * the value is literal, and the match is case-sensitive, as paths are; `./` and repeated
 * slashes are dropped, as from stored paths.
 */
export function filePatterns(written: string): string[] {
  // As stored paths are normalised (files.ts): no leading `./`, no repeated slashes.
  const value = written.replace(/\/{2,}/gu, "/").replace(/^(\.\/)+/u, "");
  const folder = value.endsWith("/") && value.replace(/\/+$/u, "") !== "";
  const base = folder ? value.replace(/\/+$/u, "") : value;
  const glob = base.split("*").map(globLiteral).join("*");
  const heads = base.startsWith("/") || base.startsWith("*") ? [glob] : [glob, `*/${glob}`];
  return folder ? heads.flatMap((head) => [head, `${head}/*`]) : heads;
}
