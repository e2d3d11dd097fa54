/**
 * What people get in a browser: the share page's and the library's headers, and small HTML
 * pages for errors (API clients, which do not ask for HTML, keep JSON).
 */
import type { Context } from "hono";
import { loadViewer } from "./viewer.js";

/** Every answer under /s/ and every HTML page carries these (the token is in share URLs). */
export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src data: 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Robots-Tag": "noindex, nofollow",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cache-Control": "private, no-store",
};

/**
 * The library's pages: the share page's headers, except that their forms post to this origin
 * (`form-action 'self'`), and that the referrer is kept within it (`same-origin`): under
 * `no-referrer` a browser sends `Origin: null` with a form's POST, and the CSRF check needs
 * the real origin. Other sites still get no referrer.
 */
export const LIBRARY_SECURITY_HEADERS: Record<string, string> = {
  ...SECURITY_HEADERS,
  "Referrer-Policy": "same-origin",
  "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"].replace(
    "form-action 'none'",
    "form-action 'self'",
  ),
};

/** Whether the client is a browser asking for a page (by `Accept`). */
export function wantsHtml(c: Context): boolean {
  return /\btext\/html\b/.test(c.req.header("Accept") ?? "");
}

const TITLES: Record<number, string> = { 404: "Not found", 410: "This link is no longer available" };

/**
 * A small page in the share page's style, with its headers. The viewer is loaded on the first
 * page asked for: API requests (a Lambda's cold start) never load its Markdown and masking.
 */
export async function htmlNotice(
  c: Context,
  status: 200 | 404 | 410,
  title: string,
  message: string,
): Promise<Response> {
  const { renderNotice } = await loadViewer();
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  return c.html(renderNotice({ title, message }), status);
}

/** A 404 or 410 as a page for a browser. */
export function htmlError(c: Context, status: 404 | 410, message: string): Promise<Response> {
  return htmlNotice(c, status, TITLES[status], message);
}
