/**
 * The `/device` page: a person signs a machine in by typing the code `pisync login` printed
 * (or following its link, which carries it), checking the machine's name, and approving or
 * denying it. Every value shown is escaped here.
 */
import { escapeHtml } from "../escape.js";
import { csrfField, renderLibraryPage } from "./layout.js";

/** A pending code as the page shows it. */
export interface DeviceCodeRow {
  /** `BCDF-GHJK`. */
  userCode: string;
  /** The machine's name, as it gave it (its host name). */
  name: string;
  createdAt: string;
  expiresAt: string;
}

/** What the device page shows: the code form, a code to confirm, or the outcome. */
export type DevicePageInput = { csrfToken?: string } & (
  | { step: "enter"; typed?: string; problem?: string }
  | { step: "confirm" | "approved" | "denied"; code: DeviceCodeRow }
);

function utc(iso: string): string {
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`)}</time>`;
}

function enter(typed: string | undefined, problem: string | undefined): string {
  return `${problem ? `<p class="refused" role="alert">${escapeHtml(problem)}</p>` : ""}
<p>Type the code <code>pisync login</code> shows on the machine you are signing in.</p>
<form method="get" action="/device" class="device-code">
<label>Code <input name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="64" placeholder="BCDF-GHJK" value="${escapeHtml(typed ?? "")}" required autofocus></label>
<button type="submit">Continue</button>
</form>`;
}

function confirm(code: DeviceCodeRow, csrfToken: string | undefined): string {
  const field = `${csrfField(csrfToken)}<input type="hidden" name="code" value="${escapeHtml(code.userCode)}">`;
  return `<p>A machine asks to back up into your account and read it:</p>
<dl class="device-request">
<dt>Code</dt><dd><code class="user-code">${escapeHtml(code.userCode)}</code></dd>
<dt>Machine</dt><dd class="machine-name">${escapeHtml(code.name)}</dd>
<dt>Asked at</dt><dd>${utc(code.createdAt)}</dd>
</dl>
<p>Approve only if this is the code your terminal shows right now. Approving gives that machine a token of its own, which you can rename or revoke on <a href="/devices">Devices</a>.</p>
<div class="device-decision">
<form method="post" action="/device/approve">${field}<button type="submit" class="approve">Approve</button></form>
<form method="post" action="/device/deny">${field}<button type="submit" class="deny">Deny</button></form>
</div>`;
}

/** The device page, whole. */
export function renderDevicePage(page: DevicePageInput): string {
  let body: string;
  if (page.step === "enter") body = enter(page.typed, page.problem);
  else if (page.step === "confirm") body = confirm(page.code, page.csrfToken);
  else if (page.step === "approved") {
    body = `<p class="done" role="status">Approved: <strong class="machine-name">${escapeHtml(page.code.name)}</strong> is signed in. Go back to its terminal.</p>`;
  } else {
    body = `<p class="done" role="status">Denied: <strong class="machine-name">${escapeHtml(page.code.name)}</strong> was not signed in.</p>`;
  }
  return renderLibraryPage(
    { title: "Sign in a machine", section: "devices", csrfToken: page.csrfToken, signedIn: true },
    `<section class="device-flow">${body}</section>`,
  );
}
