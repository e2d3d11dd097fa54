/** The library's small view of a session, made from its head (adapters store it beside the head). */
import type { SessionCard, SessionHead } from "./ports.js";

/** The {@link SessionCard} of a head. */
export function cardOf(head: SessionHead): SessionCard {
  const s = head.summary;
  return {
    sessionId: head.sessionId,
    name: s.name,
    cwd: s.cwd,
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
  };
}
