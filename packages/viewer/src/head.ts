/** The start of every page this package draws, shares' and the library's alike. */
import { escapeHtml } from "./escape.js";

/** A page from `<!doctype html>` up to `</head>`: one stylesheet, and `extra` (the page's script, preloads). */
export function documentHead(title: string, stylesheet: string, extra = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · pisync</title>
<link rel="stylesheet" href="${stylesheet}">
${extra}</head>`;
}
