/**
 * The shares page (`/shares`): every link of the owner with its status, expiry, view and
 * download counts and last view, and the session it shows; a form to make one (its address shown once, after), a
 * revoke button per live link, and "revoke all". Every change is a POST carrying the CSRF field.
 */
import { escapeHtml } from "../escape.js";
import { count, oneLine, time } from "./format.js";
import { csrfField, type LibraryChrome, renderLibraryPage } from "./layout.js";

/** A share link as the page lists it. */
export interface ShareRow {
  id: string;
  sessionId: string;
  /** The session's title, when the session still exists. */
  sessionTitle?: string;
  leafId?: string;
  status: "active" | "expired" | "revoked";
  createdAt: string;
  expiresAt: string;
  revokedAt?: string;
  maskSecrets: boolean;
  views: number;
  lastViewedAt?: string;
  /** Downloads of its file or context. */
  downloads: number;
}

/** Everything the shares page shows. */
export interface SharesPageInput {
  shares: ShareRow[];
  /** The link just made (its address, shown this once). */
  created?: { url: string; sessionId: string };
  /** Sessions offered in the form (newest first): id and title. */
  sessions: { id: string; title: string }[];
  /** Pre-filled form values (a link from a session page). */
  form?: { session?: string; leaf?: string };
  /** Expiry choices, in days. */
  expiryDays: number[];
  /** A sentence about the last change (revoked, …). */
  message?: string;
  /** The address of the next (older) page of links, when there is one. */
  next?: string;
}

function renderCreated(created: SharesPageInput["created"]): string {
  if (!created) return "";
  return `<section class="created" role="status"><h2>Link made</h2><p>Anyone with this address can read the session <code>${escapeHtml(created.sessionId)}</code> until it expires or you revoke it. It is shown here once:</p>
<p class="copy-line"><input type="text" readonly value="${escapeHtml(created.url)}" aria-label="Share link" id="created-url"> <button type="button" data-copy="${escapeHtml(created.url)}">Copy</button></p></section>`;
}

function renderForm(input: SharesPageInput, csrf: string): string {
  const chosen = input.form?.session;
  const sessions = input.sessions
    .map(
      (s) =>
        `<option value="${escapeHtml(s.id)}"${s.id === chosen ? " selected" : ""}>${escapeHtml(oneLine(s.title, 70))}</option>`,
    )
    .join("");
  const known = !chosen || input.sessions.some((s) => s.id === chosen);
  const extra = known ? "" : `<option value="${escapeHtml(chosen)}" selected>${escapeHtml(chosen)}</option>`;
  return `<details class="new-share"${input.form?.session ? " open" : ""}><summary>New link</summary>
<form method="post" action="/shares" class="share-form">${csrf}
<label>Session <select name="session" required>${extra}${sessions}</select></label>
<label>Expires in <select name="expires">${input.expiryDays
    .map((d) => `<option value="${d}"${d === 7 ? " selected" : ""}>${count(d, "day")}</option>`)
    .join("")}</select></label>
<label>Pinned entry (optional) <input type="text" name="leaf" value="${escapeHtml(input.form?.leaf ?? "")}" placeholder="entry id: one branch only" pattern="[A-Za-z0-9._:-]{1,224}"></label>
<label class="check"><input type="checkbox" name="mask" value="1" checked> Mask credentials</label>
<button type="submit">Make link</button>
</form></details>`;
}

function renderRow(share: ShareRow, csrf: string): string {
  const session = `<a href="/sessions/${escapeHtml(encodeURIComponent(share.sessionId))}">${escapeHtml(oneLine(share.sessionTitle ?? share.sessionId, 80))}</a>`;
  const revoke =
    share.status === "active"
      ? `<form method="post" action="/shares/${escapeHtml(encodeURIComponent(share.id))}/revoke">${csrf}<button type="submit" class="danger">Revoke</button></form>`
      : "";
  const when =
    share.status === "revoked"
      ? `revoked ${time(share.revokedAt)}`
      : `${share.status === "expired" ? "expired" : "expires"} ${time(share.expiresAt)}`;
  return `<tr data-share="${escapeHtml(share.id)}" class="${share.status}">
<td>${session}${share.leafId ? ` <span class="muted">one branch</span>` : ""}${share.maskSecrets ? "" : ` <span class="muted">unmasked</span>`}</td>
<td><span class="status ${share.status}">${share.status}</span></td>
<td>${when}</td>
<td class="views" data-views="${share.views}">${count(share.views, "view")}</td>
<td class="downloads" data-downloads="${share.downloads}">${count(share.downloads, "download")}</td>
<td>${share.lastViewedAt ? time(share.lastViewedAt) : '<span class="muted">never</span>'}</td>
<td>${revoke}</td>
</tr>`;
}

/** The whole shares page. */
export function renderSharesPage(chrome: Omit<LibraryChrome, "title" | "section">, input: SharesPageInput): string {
  const csrf = csrfField(chrome.csrfToken);
  const active = input.shares.filter((s) => s.status === "active").length;
  const table = input.shares.length
    ? `<div class="table-wrap"><table class="shares">
<thead><tr><th>Session</th><th>Status</th><th>Expiry</th><th>Views</th><th>Downloads</th><th>Last viewed</th><th></th></tr></thead>
<tbody>${input.shares.map((s) => renderRow(s, csrf)).join("\n")}</tbody>
</table></div>`
    : `<p class="empty">No links yet.</p>`;
  const next = input.next ? `<p class="more"><a rel="next" href="${escapeHtml(input.next)}">Older links</a></p>` : "";
  // With more pages, this page's count is not all of them.
  const revokeAll =
    active || input.next
      ? `<form method="post" action="/shares/revoke-all" class="revoke-all">${csrf}<button type="submit" class="danger">Revoke all ${input.next ? "active links" : count(active, "active link")}</button></form>`
      : "";
  const body = `${input.message ? `<p class="notice-line" role="status">${escapeHtml(input.message)}</p>` : ""}${renderCreated(input.created)}
${renderForm(input, csrf)}
${table}${next}
${revokeAll}`;
  return renderLibraryPage({ ...chrome, title: "Shares", section: "shares" }, body);
}
