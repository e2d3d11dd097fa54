/**
 * What a share's preview image shows, made from the masked view only: the card's title and
 * facts, and the first lines of the conversation (user and assistant text). The image renderer
 * is given this and nothing else; it is loaded on the first preview asked for ({@link previewRenderer}).
 */
import type { BranchDocument } from "@pisync/core";
import type { PageEntry } from "@pisync/viewer";
import type { PreviewCard } from "./render.js";

export type { PreviewCard };

/** Draws a card as a PNG. */
export type PreviewRenderer = (card: PreviewCard) => Promise<Uint8Array>;

/** Lines of the conversation an image shows. */
const LINES = 4;

/** The text parts of a message's content, joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p) => p && typeof p === "object" && p.type === "text" && typeof p.text === "string")
    .map((p) => p.text as string)
    .join(" ");
}

/** The first user and assistant texts of entries, at most {@link LINES}. */
export function conversationLines(entries: readonly PageEntry[]): PreviewCard["lines"] {
  const lines: PreviewCard["lines"] = [];
  for (const { entry } of entries) {
    if (lines.length >= LINES) break;
    const message = (entry as { message?: { role?: unknown; content?: unknown } }).message;
    if (entry.type !== "message" || !message) continue;
    if (message.role !== "user" && message.role !== "assistant") continue;
    const text = textOf(message.content).replace(/\s+/g, " ").trim().slice(0, 400);
    if (text) lines.push({ who: message.role, text });
  }
  return lines;
}

/**
 * The card of a branch: its facts (title and facts line as the card tags say them) and its
 * first lines, from the document's first window (masked as the page is).
 */
export async function previewCard(doc: BranchDocument, text: { title: string; facts: string }): Promise<PreviewCard> {
  const first = await doc.windows.next();
  await doc.windows.return(undefined);
  return { title: text.title, facts: text.facts, lines: conversationLines(first.done ? [] : first.value) };
}

let loaded: Promise<PreviewRenderer> | undefined;

/** The image renderer (satori and resvg), imported on the first preview asked for. */
export const previewRenderer: PreviewRenderer = async (card) => {
  loaded ??= import("./render.js").then((m) => m.renderPreview);
  loaded.catch(() => {
    loaded = undefined;
  });
  return (await loaded)(card);
};
