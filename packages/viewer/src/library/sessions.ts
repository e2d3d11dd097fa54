/**
 * The sessions page (`/`): the owner's sessions newest first, filters (folder, model, dates), a
 * search box whose results (hits grouped by session, highlighted snippets) link to the session
 * page at the entry. Readable without the script; the script adds live results as you type.
 */
import { escapeHtml } from "../escape.js";
import { grouped } from "../numbers.js";
import { count, dollars, oneLine, query, time } from "./format.js";
import { type LibraryChrome, renderLibraryPage } from "./layout.js";

/** A session in the list (the store's card). */
export interface SessionRow {
  sessionId: string;
  name?: string;
  cwd?: string;
  firstMessage?: string;
  models: string[];
  lastAt: string;
  entries: number;
  tokens: number;
  cost: number;
}

/** One part of a snippet; `hit` parts are what matched. */
export interface SnippetPart {
  text: string;
  hit: boolean;
}

/** A session that matched a search, with its best entries. */
export interface SessionHitRow {
  sessionId: string;
  name?: string;
  cwd?: string;
  entries: { entryId: string; kind: string; time: number; snippet: SnippetPart[] }[];
}

/** What the list is narrowed to (as given in the address). */
export interface SessionsFilter {
  q?: string;
  cwd?: string;
  model?: string;
  from?: string;
  to?: string;
}

/** Everything the sessions page shows. */
export interface SessionsPageInput {
  filter: SessionsFilter;
  /** The list (when there is no search). */
  list?: { sessions: SessionRow[]; cursor?: string; folders: string[]; models: string[] };
  /** Search results (when `q` is given). */
  search?: { sessions: SessionHitRow[]; cursor?: string };
  /** Why the search could not run (a malformed query), said to the reader. */
  error?: string;
  /** Whether search is available on this server. */
  searchable: boolean;
}

function options(values: string[], selected: string | undefined, none: string): string {
  const all = selected && !values.includes(selected) ? [selected, ...values] : values;
  return `<option value="">${escapeHtml(none)}</option>${all
    .map(
      (v) =>
        `<option value="${escapeHtml(v)}"${v === selected ? " selected" : ""}>${escapeHtml(oneLine(v, 60))}</option>`,
    )
    .join("")}`;
}

/** The search and filter form (a GET form: the address holds the whole state). */
function renderForm(input: SessionsPageInput): string {
  const f = input.filter;
  const list = input.list;
  const search = input.searchable
    ? `<label class="search"><span class="visually-hidden">Search</span><input type="search" name="q" id="library-q" value="${escapeHtml(f.q ?? "")}" placeholder='Search: words, "phrases", -not, role:user, since:7d' autocomplete="off" data-live="/library/search"></label>`
    : "";
  return `<form class="filters" method="get" action="/" role="search">
${search}
<div class="filter-row">
<label>Folder <select name="cwd">${options(list?.folders ?? [], f.cwd, "All folders")}</select></label>
<label>Model <select name="model">${options(list?.models ?? [], f.model, "All models")}</select></label>
<label>From <input type="date" name="from" value="${escapeHtml(f.from ?? "")}"></label>
<label>To <input type="date" name="to" value="${escapeHtml(f.to ?? "")}"></label>
<button type="submit">Apply</button> <a href="/" class="clear">Clear</a>
</div>
</form>
<section id="live-results" aria-live="polite" hidden></section>`;
}

/** A snippet with its matches marked. */
export function renderSnippet(parts: SnippetPart[]): string {
  return parts.map((p) => (p.hit ? `<mark>${escapeHtml(p.text)}</mark>` : escapeHtml(p.text))).join("");
}

/** Where a hit opens: the session page at the entry (the branch that holds it). */
export function hitHref(sessionId: string, entryId: string): string {
  const id = encodeURIComponent(entryId);
  return `/sessions/${encodeURIComponent(sessionId)}?targetId=${id}#e-${id}`;
}

function renderHits(input: SessionsPageInput): string {
  if (input.error) return `<p class="notice-line error" role="alert">${escapeHtml(input.error)}</p>`;
  const hits = input.search?.sessions ?? [];
  if (!hits.length) return `<p class="empty">Nothing matches this search.</p>`;
  const items = hits
    .map(
      (s) => `<article class="hit">
<h2><a href="/sessions/${escapeHtml(encodeURIComponent(s.sessionId))}">${escapeHtml(oneLine(s.name || s.sessionId, 120))}</a></h2>
${s.cwd ? `<p class="cwd">${escapeHtml(s.cwd)}</p>` : ""}<ol class="snippets">${s.entries
        .map(
          (e) =>
            `<li><a href="${escapeHtml(hitHref(s.sessionId, e.entryId))}">${renderSnippet(e.snippet)}</a> <span class="kind">${escapeHtml(e.kind)}</span> ${time(e.time ? new Date(e.time).toISOString() : undefined)}</li>`,
        )
        .join("")}</ol>
</article>`,
    )
    .join("\n");
  const next = input.search?.cursor
    ? `<p class="more"><a rel="next" href="/${escapeHtml(query({ q: input.filter.q, cursor: input.search.cursor }))}">More results</a></p>`
    : "";
  return `<section class="hits">${items}</section>${next}`;
}

function titleOf(row: SessionRow): string {
  return oneLine(row.name || row.firstMessage || row.sessionId, 120);
}

function renderList(input: SessionsPageInput): string {
  const list = input.list;
  const f = input.filter;
  const next = list?.cursor
    ? `<p class="more"><a rel="next" href="/${escapeHtml(query({ cwd: f.cwd, model: f.model, from: f.from, to: f.to, cursor: list.cursor }))}">Older sessions</a></p>`
    : "";
  if (list?.cursor && !list.sessions.length) {
    // A filter that matches little: each page looks through a bounded stretch of the list.
    return `<p class="empty">No session matches these filters in this stretch of the list.</p>${next}`;
  }
  if (!list?.sessions.length) {
    const filtered = Object.values(input.filter).some(Boolean);
    return `<p class="empty">${filtered ? "No session matches these filters." : "No sessions yet: run <code>pisync push</code> or <code>pisync watch</code> on a machine with pi sessions."}</p>`;
  }
  const rows = list.sessions
    .map(
      (s) => `<li class="session">
<a class="title" href="/sessions/${escapeHtml(encodeURIComponent(s.sessionId))}">${escapeHtml(titleOf(s))}</a>
<p class="meta">${[
        s.cwd ? `<span class="cwd">${escapeHtml(s.cwd)}</span>` : "",
        s.models.length ? `<span class="models">${escapeHtml(s.models.slice(0, 3).join(", "))}</span>` : "",
        `<span>${time(s.lastAt)}</span>`,
        `<span>${count(s.entries, "entry", "entries")}</span>`,
        `<span>${grouped(s.tokens)} tokens · ${dollars(s.cost)}</span>`,
      ]
        .filter(Boolean)
        .join(" · ")}</p>
</li>`,
    )
    .join("\n");
  return `<p class="muted">Latest conversation first</p>
<ul class="sessions">${rows}</ul>${next}`;
}

/** The whole sessions page. */
export function renderSessionsPage(chrome: Omit<LibraryChrome, "title" | "section">, input: SessionsPageInput): string {
  const body = `${renderForm(input)}
<div id="static-results">${input.filter.q ? renderHits(input) : renderList(input)}</div>`;
  return renderLibraryPage({ ...chrome, title: "Sessions", section: "sessions" }, body);
}
