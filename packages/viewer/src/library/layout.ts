/**
 * The frame of every page of the signed-in library (sessions, one session, shares, devices):
 * document head, navigation, sign-out form. Pages hand it their body as HTML they built with
 * {@link escapeHtml}; nothing from a session reaches this module unescaped.
 */
import { escapeHtml } from "../escape.js";
import { documentHead } from "../head.js";

/** Which part of the library a page belongs to (its navigation link is marked current). */
export type LibrarySection = "sessions" | "insights" | "shares" | "teams" | "devices";

/** What the frame needs to know about the request. */
export interface LibraryChrome {
  /** The page title (plain text). */
  title: string;
  section?: LibrarySection;
  /**
   * The browser session's CSRF token, written into every form this frame draws (sign out); pages
   * put it in theirs with {@link csrfField}. Absent when the page is not seen through a browser
   * session (signed out, or a bearer token).
   */
  csrfToken?: string;
  /** Whether a user is signed in (the navigation is drawn only then). */
  signedIn: boolean;
}

/** Where the library's stylesheet and script are served (the CSP allows no inline code). */
export const LIBRARY_ASSETS = { css: "/assets/library.css", js: "/assets/library.js" } as const;

const SECTIONS: Array<[LibrarySection, string, string]> = [
  ["sessions", "/", "Sessions"],
  ["insights", "/insights", "Insights"],
  ["shares", "/shares", "Shares"],
  ["teams", "/teams", "Teams"],
  ["devices", "/devices", "Devices"],
];

/** A hidden form field carrying the CSRF token (empty string when there is none). */
export function csrfField(token: string | undefined): string {
  return token ? `<input type="hidden" name="csrf" value="${escapeHtml(token)}">` : "";
}

/** A whole library page: head, navigation, `bodyHtml` (already-escaped HTML), footer. */
export function renderLibraryPage(chrome: LibraryChrome, bodyHtml: string): string {
  const nav = chrome.signedIn
    ? `<nav class="library-nav">${SECTIONS.map(
        ([section, href, label]) =>
          `<a href="${href}"${section === chrome.section ? ' aria-current="page"' : ""}>${label}</a>`,
      ).join(
        "",
      )}<form method="post" action="/logout" class="sign-out">${csrfField(chrome.csrfToken)}<button type="submit">Sign out</button></form></nav>`
    : "";
  return `${documentHead(chrome.title, LIBRARY_ASSETS.css, `<script type="module" src="${LIBRARY_ASSETS.js}"></script>\n`)}
<body class="library">
<header>${nav}<h1>${escapeHtml(chrome.title)}</h1></header>
<main>
${bodyHtml}
</main>
<footer><p class="muted">pisync</p></footer>
</body>
</html>
`;
}
