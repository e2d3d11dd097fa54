/**
 * The devices page: the device tokens and signed-in browsers of a user, with their last use,
 * a revoke form for each, and "Sign out everywhere".
 */
import { escapeHtml } from "../escape.js";
import { csrfField, renderLibraryPage } from "./layout.js";

/** One token or browser session as the page shows it. */
export interface DeviceRow {
  kind: "token" | "browser";
  /** Its public id (never a secret). */
  id: string;
  /** The token's name, or the browser's label. */
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  /** Whether the page is being seen through it. */
  current: boolean;
}

/** A token just made on this page: its secret is shown this once. */
export interface MintedToken {
  id: string;
  name: string;
  token: string;
}

/** What the devices page shows. */
export interface DevicesPage {
  /** A token made by the request that drew the page, shown once. */
  minted?: MintedToken;
  devices: DeviceRow[];
  /** The browser session's CSRF token, for the forms (absent when seen with a bearer token). */
  csrfToken?: string;
  /** The address of the next page of devices, when there is one. */
  next?: string;
}

/** `2026-03-01T10:04:05.000Z` as `2026-03-01 10:04 UTC`, in a `<time>`. */
function time(iso: string | undefined): string {
  if (!iso) return `<span class="muted">never</span>`;
  const shown = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`;
}

function row(device: DeviceRow, csrfToken: string | undefined): string {
  const action = `/devices/${device.kind === "token" ? "tokens" : "sessions"}/${encodeURIComponent(device.id)}/revoke`;
  const label = device.kind === "token" ? "Revoke" : "Sign out";
  const current = device.current
    ? ` <strong class="current">${device.kind === "token" ? "this token" : "this browser"}</strong>`
    : "";
  const rename =
    // Its submit is an input, so the row's one button stays its revoke.
    device.kind === "token"
      ? `<details class="rename"><summary>Rename</summary><form method="post" action="/devices/tokens/${encodeURIComponent(device.id)}/rename">${csrfField(csrfToken)}<input name="name" maxlength="100" required value="${escapeHtml(device.name)}" aria-label="New name"><input type="submit" value="Save name"></form></details>`
      : "";
  return `<tr data-kind="${device.kind}" data-id="${escapeHtml(device.id)}"${device.current ? ' aria-current="true"' : ""}>
<td data-label="Name"><span class="device-name">${escapeHtml(device.name)}</span>${current}${rename}</td>
<td data-label="Created">${time(device.createdAt)}</td>
<td data-label="Last used">${time(device.lastUsedAt)}</td>
<td><form method="post" action="${escapeHtml(action)}">${csrfField(csrfToken)}<button type="submit">${label}</button></form></td>
</tr>`;
}

function table(caption: string, devices: DeviceRow[], csrfToken: string | undefined, empty: string): string {
  if (devices.length === 0) return `<h2>${escapeHtml(caption)}</h2><p class="muted">${escapeHtml(empty)}</p>`;
  return `<h2>${escapeHtml(caption)}</h2>
<table class="devices">
<thead><tr><th>Name</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody>
${devices.map((device) => row(device, csrfToken)).join("\n")}
</tbody>
</table>`;
}

/** A token just made: shown once, with how to use it without leaving it in the shell's history. */
function minted(token: MintedToken | undefined): string {
  if (!token) return "";
  return `<section class="minted" role="status"><h2>New token: ${escapeHtml(token.name)}</h2>
<p>Copy it now: it is shown this once (the server keeps only its hash).</p>
<p><input class="minted-token" readonly value="${escapeHtml(token.token)}" aria-label="The new token" spellcheck="false"></p>
<p class="muted">On that machine: <code>pisync login --endpoint URL --token -</code>, then paste it.</p></section>`;
}

/** The devices page, whole. */
export function renderDevicesPage(page: DevicesPage): string {
  const browsers = page.devices.filter((d) => d.kind === "browser");
  const tokens = page.devices.filter((d) => d.kind === "token");
  const body = `${table("Browsers", browsers, page.csrfToken, "No browser is signed in.")}
<form method="post" action="/logout-all" class="sign-out-all">${csrfField(page.csrfToken)}<button type="submit">Sign out everywhere</button></form>
<p class="muted">Signs out every browser, this one included. Tokens keep working: revoke each below.</p>
${minted(page.minted)}
${table("Tokens", tokens, page.csrfToken, "No tokens.")}
<p class="muted">A token lets <code>pisync</code> back up and read your sessions from one machine. Revoking it stops that machine at its next request.
Signing a machine in is simplest from the machine: <code>pisync login --endpoint URL</code> shows a code to approve on <a href="/device">this server's page</a>.</p>
<form method="post" action="/devices/tokens" class="new-token">${csrfField(page.csrfToken)}<label>New token for <input name="name" maxlength="100" required placeholder="the machine's name"></label><button type="submit">Make a token</button></form>${
    page.next ? `\n<p class="more"><a rel="next" href="${escapeHtml(page.next)}">More devices</a></p>` : ""
  }`;
  return renderLibraryPage({ title: "Devices", section: "devices", csrfToken: page.csrfToken, signedIn: true }, body);
}
