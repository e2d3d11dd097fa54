/**
 * The heavy work of a share: rendering entries (Markdown, highlighting), masking credentials
 * and drawing preview images. `inlineWork` runs it on the caller's thread (Lambda: one request
 * per instance at a time); the Node server hands it to a worker pool (worker-pool.ts) so that
 * one large page or image never holds up the other requests.
 */
import type { EntriesInput, PageInput } from "@pisync/viewer";
import { type PreviewCard, previewRenderer } from "./preview/card.js";
import { loadViewer } from "./viewer.js";

export interface ShareWork {
  renderPage(input: PageInput): Promise<string>;
  renderEntries(input: EntriesInput): Promise<string>;
  maskLines(lines: string[]): Promise<{ lines: string[]; count: number }>;
  maskTexts(texts: string[]): Promise<string[]>;
  /** A link's preview image (satori and resvg: hundreds of ms of CPU each). */
  renderPreview(card: PreviewCard): Promise<Uint8Array>;
}

/** The work done where it is asked for (the viewer loaded on the first share asked for). */
export const inlineWork: ShareWork = {
  renderPage: async (input) => (await loadViewer()).renderPage(input),
  renderEntries: async (input) => (await loadViewer()).renderEntries(input),
  maskLines: async (lines) => (await loadViewer()).maskLines(lines),
  maskTexts: async (texts) => (await loadViewer()).maskTexts(texts),
  renderPreview: (card) => previewRenderer(card),
};
