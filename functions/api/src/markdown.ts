/**
 * A branch as a Markdown answer (`/s/<token>/md`, the share page to `Accept: text/markdown`,
 * the owner's `/v1/sessions/:id/md`): core's reading gives the masked entries a window at a
 * time, the viewer writes them; the text is streamed, so memory does not grow with the session.
 */
import type { BranchDocument } from "@pisync/core";
import type { MarkdownSource } from "@pisync/viewer";
import type { Context } from "hono";
import { started, textStream } from "./stream.js";
import { loadViewer } from "./viewer.js";

/** The document: its head, the entries, and what was masked in it. */
async function* markdownText(
  doc: BranchDocument,
  source: MarkdownSource,
  masking: boolean,
  blobs: string | undefined,
): AsyncGenerator<string> {
  const { entriesMarkdown, markdownHead } = await loadViewer();
  yield markdownHead(doc.facts, source);
  for await (const entries of doc.windows) yield entriesMarkdown(entries, blobs);
  const masked = doc.masked();
  yield masking
    ? `---\n\n_${masked} credential${masked === 1 ? "" : "s"} masked in this document._\n`
    : "---\n\n_Not masked: credentials are shown as they are._\n";
}

/** Whether a client asks for Markdown before HTML (`Accept: text/markdown`). */
export function wantsMarkdown(c: Context): boolean {
  return /\btext\/markdown\b/.test(c.req.header("Accept") ?? "");
}

/**
 * A Markdown answer, streamed (what fails before the first byte is still an HTTP error).
 * `blobs`: the absolute URL prefix this origin serves the session's blob images under.
 */
export async function markdownResponse(
  c: Context,
  doc: BranchDocument,
  source: MarkdownSource,
  masking: boolean,
  blobs?: string,
): Promise<Response> {
  const pieces = await started(markdownText(doc, source, masking, blobs));
  c.header("Content-Type", "text/markdown; charset=utf-8");
  c.header("Vary", "Accept");
  return c.body(textStream(pieces));
}
