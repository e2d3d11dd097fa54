/**
 * What the owner's session page adds to the share viewer: the library's navigation, every
 * generation to download, the `pisync pull` command to copy, a share link to make, and delete
 * (behind a confirmation page that asks for the session's id).
 */
import { escapeHtml } from "../escape.js";
import { count, oneLine, time } from "./format.js";
import { csrfField, LIBRARY_ASSETS, type LibraryChrome, renderLibraryPage } from "./layout.js";
import { hitHref } from "./sessions.js";

/** A generation of the session, to download. */
export interface GenerationRow {
  generation: number;
  bytes: number;
  createdAt: string;
  reason?: string;
}

/** A file the session touched, with the first entry that touched it. */
export interface TouchedFile {
  path: string;
  entryId: string;
}

/** What the toolbar of a session page shows. */
export interface SessionToolbarInput {
  sessionId: string;
  generations: GenerationRow[];
  /** The files its tool calls named, as the search index lists them (none without search). */
  files?: TouchedFile[];
}

/** The files list: each path opens the session at the entry that first touched it. */
function renderFiles(sessionId: string, files: readonly TouchedFile[]): string {
  if (files.length === 0) return "";
  const items = files
    .map(
      (f) => `<li><a href="${escapeHtml(hitHref(sessionId, f.entryId))}"><code>${escapeHtml(f.path)}</code></a></li>`,
    )
    .join("");
  return `<details class="files"><summary>${count(files.length, "file")} touched</summary><ul>${items}</ul></details>`;
}

function size(bytes: number): string {
  if (bytes < 1024) return count(bytes, "byte");
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The head additions and the toolbar of the owner's session page (see `SessionPageView.host`). */
export function sessionPageHost(input: SessionToolbarInput): { head: string; toolbar: string } {
  const id = encodeURIComponent(input.sessionId);
  const pull = `pisync pull ${input.sessionId}`;
  const current = input.generations[input.generations.length - 1];
  const older = input.generations.slice(0, -1).reverse();
  const downloads = older.length
    ? `<details class="generations"><summary>${count(older.length, "earlier generation")}</summary><ul>${older
        .map(
          (g) =>
            `<li><a href="/sessions/${escapeHtml(id)}/raw?generation=${g.generation}">generation ${g.generation}</a> · ${size(g.bytes)} · ${time(g.createdAt)}${g.reason ? ` · ${escapeHtml(oneLine(g.reason, 80))}` : ""}</li>`,
        )
        .join("")}</ul></details>`
    : "";
  const toolbar = `<nav class="library-bar" aria-label="Library">
<a href="/">← Sessions</a>
<a href="/sessions/${escapeHtml(id)}/raw${current ? `?generation=${current.generation}` : ""}" class="download">Download JSONL${current ? ` (${size(current.bytes)})` : ""}</a>
<span class="copy-line"><code id="pull-command">${escapeHtml(pull)}</code> <button type="button" data-copy="${escapeHtml(pull)}">Copy</button></span>
<a href="/shares?session=${escapeHtml(id)}">Share…</a>
<a href="/sessions/${escapeHtml(id)}/delete" class="danger">Delete…</a>
</nav>${downloads}${renderFiles(input.sessionId, input.files ?? [])}`;
  return {
    head: `<link rel="stylesheet" href="${LIBRARY_ASSETS.css}">\n<script type="module" src="${LIBRARY_ASSETS.js}"></script>\n`,
    toolbar,
  };
}

/** What the delete confirmation page shows. */
export interface DeletePageInput {
  sessionId: string;
  title: string;
  entries: number;
  generations: number;
  /** Why the last attempt was refused (the typed id did not match). */
  error?: string;
}

/** The confirmation page: deleting needs the session's id typed, then a POST. */
export function renderDeletePage(chrome: Omit<LibraryChrome, "title" | "section">, input: DeletePageInput): string {
  const id = encodeURIComponent(input.sessionId);
  const body = `<section class="confirm">
<p>This deletes <strong>${escapeHtml(oneLine(input.title, 120))}</strong> (${count(input.entries, "entry", "entries")}, ${count(input.generations, "generation")}) from the cloud, with every generation, and revokes its share links. Copies on your machines stay.</p>
${input.error ? `<p class="notice-line error" role="alert">${escapeHtml(input.error)}</p>` : ""}
<form method="post" action="/sessions/${escapeHtml(id)}/delete">${csrfField(chrome.csrfToken)}
<label>Type the session's id, <code>${escapeHtml(input.sessionId)}</code>, to confirm <input type="text" name="confirm" required autocomplete="off" spellcheck="false"></label>
<button type="submit" class="danger">Delete this session</button> <a href="/sessions/${escapeHtml(id)}">Cancel</a>
</form>
</section>`;
  return renderLibraryPage({ ...chrome, title: "Delete a session", section: "sessions" }, body);
}
