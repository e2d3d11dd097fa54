/**
 * The pages a browser sees around signing in: the hint shown to a signed-out visitor (how to
 * get a sign-in link), and the answer to a sign-in link that no longer works.
 */
import { escapeHtml } from "../escape.js";
import { renderLibraryPage } from "./layout.js";

const HOW = `<p>pisync signs you in without a password. On a machine where <code>pisync login</code> was run:</p>
<ul class="commands">
<li><code>pisync open</code> — your sessions</li>
<li><code>pisync open SESSION_ID</code> — one session</li>
<li><code>pisync open 'retry S3'</code> — a search</li>
<li><code>pisync open --print</code> — print the link, to open it on another device</li>
</ul>
<p>The link works once, within 60 seconds, and signs this browser in until you sign out (or 30 days without use).</p>`;

/** The library for a visitor who is not signed in: how to sign in. */
export function renderSignInHint(): string {
  return renderLibraryPage({ title: "Sign in", signedIn: false }, `<section class="sign-in">${HOW}</section>`);
}

/** Why a sign-in link did not sign anyone in. */
export type RefusedLink = "expired" | "unknown";

/** The page for a sign-in link that expired, or was used already (or never existed). */
export function renderLinkRefused(reason: RefusedLink): string {
  const why =
    reason === "expired"
      ? "This sign-in link expired: links work for 60 seconds."
      : "This sign-in link was already used, or never existed: each link works once.";
  return renderLibraryPage(
    { title: "Sign-in link not valid", signedIn: false },
    `<section class="sign-in"><p class="refused">${escapeHtml(why)} Nothing was changed. Ask for a new one:</p>${HOW}</section>`,
  );
}

/**
 * The page a sign-in link answers when it was opened from another site's page: it signs
 * nothing in by itself (another site could otherwise sign this browser into its owner's
 * account) and asks the person to confirm with a POST from this page. `action` is the link's
 * own path.
 */
export function renderConfirmSignIn(action: string): string {
  return renderLibraryPage(
    { title: "Sign in to pisync?", signedIn: false },
    `<section class="sign-in"><p>This sign-in link was opened from another site. Continue only if you asked for it yourself, with <code>pisync open</code>, a moment ago: a link someone else made signs you in to their account.</p>
<form method="post" action="${escapeHtml(action)}"><button type="submit">Sign in</button></form></section>`,
  );
}
