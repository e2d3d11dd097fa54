/**
 * A share link's card: what its page's `<head>` tells clients beside the page. The Markdown of
 * the branch (`rel="alternate"`, for agents), and the Open Graph and Twitter tags chat apps and
 * issue trackers unfurl a pasted link with: the title, the first user message and the facts,
 * all from the masked view, and the preview image.
 */
import { escapeHtml } from "./escape.js";
import { plainText } from "./markdown.js";
import { grouped, shownNumber } from "./numbers.js";
import type { LinkCard, SessionFacts, SessionPageView } from "./view.js";

/** Characters of a card's title and description (unfurlers cut longer ones anyway). */
const TITLE_MAX = 90;
const DESCRIPTION_MAX = 280;

/** One line of plain text, cut with "…". */
export function cardLine(value: string, max: number): string {
  const line = value.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A cost as a card shows it. */
export function cardMoney(cost: number): string {
  return shownNumber(cost, (c) => (c > 0 && c < 0.01 ? `$${c.toFixed(4)}` : `$${c.toFixed(2)}`));
}

/** The facts of a view in one line: "claude-sonnet-4-5 · 12 messages · 5 tool calls · $0.12". */
export function factsLine(facts: SessionFacts): string {
  const model = facts.models.at(-1)?.split("/").at(-1);
  return [
    model,
    `${facts.messages.toLocaleString("en-US")} message${facts.messages === 1 ? "" : "s"}`,
    `${facts.toolCalls.toLocaleString("en-US")} tool call${facts.toolCalls === 1 ? "" : "s"}`,
    `${grouped(facts.tokens)} tokens`,
    cardMoney(facts.cost),
  ]
    .filter(Boolean)
    .join(" · ");
}

/** The card's title and description (plain text, from the masked facts). */
export function cardText(facts: SessionFacts): { title: string; description: string } {
  const title = cardLine(plainText(facts.title), TITLE_MAX) || "A pi session";
  const first = facts.firstMessage ? cardLine(plainText(facts.firstMessage), DESCRIPTION_MAX) : "";
  const lead = first && first !== title ? `${first} — ` : "";
  return { title, description: cardLine(`${lead}${factsLine(facts)}`, DESCRIPTION_MAX) };
}

/** The `<head>` tags of a card: the Markdown link, Open Graph and Twitter tags, all escaped. */
export function cardTags(text: { title: string; description: string; alt: string }, card: LinkCard): string {
  const meta = (attr: "property" | "name", key: string, value: string) =>
    `<meta ${attr}="${key}" content="${escapeHtml(value)}">`;
  return `${[
    `<link rel="alternate" type="text/markdown" href="${escapeHtml(card.markdown)}" title="This conversation as Markdown">`,
    meta("property", "og:type", "article"),
    meta("property", "og:site_name", "pisync"),
    meta("property", "og:title", text.title),
    meta("property", "og:description", text.description),
    meta("property", "og:url", card.url),
    meta("property", "og:image", card.image),
    meta("property", "og:image:type", "image/png"),
    meta("property", "og:image:width", "1200"),
    meta("property", "og:image:height", "630"),
    meta("property", "og:image:alt", text.alt),
    meta("name", "twitter:card", "summary_large_image"),
    meta("name", "twitter:title", text.title),
    meta("name", "twitter:description", text.description),
    meta("name", "twitter:image", card.image),
  ].join("\n")}\n`;
}

/** The `<head>` tags of a view's card ("" without one). */
export function cardHead(view: SessionPageView): string {
  if (!view.card) return "";
  const { title, description } = cardText(view.facts);
  return cardTags({ title, description, alt: `${title}: ${factsLine(view.facts)}` }, view.card);
}
