/**
 * A branch as a Markdown answer (`/s/<token>/md`, the share page to `Accept: text/markdown`,
 * the owner's `/v1/sessions/:id/md`): core's reading gives the masked entries a window at a
 * time, the viewer's `branchMarkdown` writes them; the text is streamed, so memory does not
 * grow with the session.
 */
import type { BranchDocument } from "@pisync/core";
import type { Context } from "hono";
import { started, textStream } from "./stream.js";
import { loadViewer } from "./viewer.js";

/** The document: its head, the entries, and what was masked in it. */
async function* markdownText(
  doc: BranchDocument,
  notes: string[],
  masking: boolean,
  blobs: string | undefined,
): AsyncGenerator<string> {
  const { branchMarkdown } = await loadViewer();
  yield* branchMarkdown(doc, notes, masking, blobs);
}

/** Whether a client asks for Markdown before HTML (`Accept: text/markdown`). */
export function wantsMarkdown(c: Context): boolean {
  return /\btext\/markdown\b/.test(c.req.header("Accept") ?? "");
}

/**
 * A Markdown answer, streamed (what fails before the first byte is still an HTTP error).
 * `notes` are the server's sentences about the view; `masking` whether it masks credentials.
 * `blobs`: the absolute URL prefix this origin serves the session's blob images under.
 */
export async function markdownResponse(
  c: Context,
  doc: BranchDocument,
  notes: string[],
  masking: boolean,
  blobs?: string,
): Promise<Response> {
  const pieces = await started(markdownText(doc, notes, masking, blobs));
  c.header("Content-Type", "text/markdown; charset=utf-8");
  c.header("Vary", "Accept");
  return c.body(textStream(pieces));
}
