/**
 * The heavy work of a share: rendering entries (Markdown, highlighting) and masking
 * credentials. `inlineWork` runs it on the caller's thread (Lambda: one request per instance
 * at a time); the Node server hands it to a worker pool (worker-pool.ts) so that one large
 * page never holds up the other requests.
 */
import { type EntriesInput, maskLines, maskTexts, type PageInput, renderEntries, renderPage } from "@pisync/viewer";

export interface ShareWork {
  renderPage(input: PageInput): Promise<string>;
  renderEntries(input: EntriesInput): Promise<string>;
  maskLines(lines: string[]): Promise<{ lines: string[]; count: number }>;
  maskTexts(texts: string[]): Promise<string[]>;
}

/** The work done where it is asked for. */
export const inlineWork: ShareWork = {
  renderPage: async (input) => renderPage(input),
  renderEntries: async (input) => renderEntries(input),
  maskLines,
  maskTexts,
};
