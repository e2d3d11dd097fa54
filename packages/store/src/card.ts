/** The library's small view of a session, made from its head (adapters store it beside the head). */
import type { SessionCard } from "./ports-cards.js";
import type { SessionHead } from "./ports-sessions.js";

/**
 * The most a card keeps of a name or a folder (session text): a card is stored beside the
 * head, in the same DynamoDB item (400 KB at most), so it must not double a long one.
 */
const CARD_TEXT_MAX = 4096;

const cut = (text: string | undefined) => (text === undefined ? undefined : text.slice(0, CARD_TEXT_MAX));

/** The {@link SessionCard} of a head. */
export function cardOf(head: SessionHead): SessionCard {
  const s = head.summary;
  return {
    sessionId: head.sessionId,
    name: cut(s.name),
    cwd: cut(s.cwd),
    firstMessage: s.firstMessage,
    models: s.models ?? [],
    startedAt: s.startedAt,
    lastAt: s.lastEntryAt ?? head.updatedAt,
    updatedAt: head.updatedAt,
    entries: s.entries,
    bytes: head.current.length,
    tokens: s.tokens,
    cost: s.cost,
    generation: head.current.generation,
    generations: head.generations,
    usage: s.usage,
  };
}
