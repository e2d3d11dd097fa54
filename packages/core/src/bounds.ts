/**
 * Session text cut to the bounds of `FIELD_LIMITS` (@pisync/protocol), wherever a summary, a
 * problem or a tree node is made or answered: one hostile name must not become megabytes in
 * every list. The bytes of the session are never cut; only what is shown of them.
 */
import type { Problem } from "@pisync/format";
import { bounded, FIELD_LIMITS } from "@pisync/protocol";
import type { SearchPage } from "@pisync/search";
import type { SessionCard, SessionSummary } from "@pisync/store";
import type { TreeNode } from "./tree-node.js";

const L = FIELD_LIMITS;

/** A problem with its message and id cut. */
export function boundedProblem(problem: Problem): Problem {
  const cut = { ...problem, message: bounded(problem.message, L.problem) };
  if (problem.id !== undefined) cut.id = bounded(problem.id, L.token);
  return cut;
}

/**
 * A summary with every text from the session cut: to what answers show, or (`stored`, the
 * summary an append keeps) to `FIELD_LIMITS.stored`, so that a share's masking still sees a
 * credential whole where the shown cut falls.
 */
export function boundedSummary(summary: SessionSummary, stored = false): SessionSummary {
  const long = (max: number) => (stored ? L.stored : max);
  return {
    ...summary,
    name: bounded(summary.name, long(L.name)),
    ...(summary.slotTitle !== undefined ? { slotTitle: bounded(summary.slotTitle, long(L.name)) } : {}),
    cwd: bounded(summary.cwd, long(L.cwd)),
    firstMessage: bounded(summary.firstMessage, L.preview),
    startedAt: bounded(summary.startedAt, long(L.timestamp)),
    leafId: bounded(summary.leafId, L.token),
    problems: summary.problems.map(boundedProblem),
    ...(summary.models ? { models: summary.models.map((m) => bounded(m, L.model)) } : {}),
  };
}

/** A tree node with every text cut. */
export function boundedNode(node: TreeNode): TreeNode {
  return {
    id: bounded(node.id, L.token),
    parentId: bounded(node.parentId, L.token),
    type: bounded(node.type, L.token),
    role: bounded(node.role, L.token),
    timestamp: bounded(node.timestamp, L.timestamp),
    label: bounded(node.label, L.label),
    preview: bounded(node.preview, L.preview),
  };
}

/** A search answer with its sessions' names and folders cut (the index keeps longer ones), and ids. */
export function boundedSearchPage(page: SearchPage): SearchPage {
  return {
    ...page,
    sessions: page.sessions.map((s) => ({
      ...s,
      name: bounded(s.name, L.name),
      cwd: bounded(s.cwd, L.cwd),
      entries: s.entries.map((e) => ({
        ...e,
        entryId: bounded(e.entryId, L.token),
        snippet: boundedSnippet(e.snippet),
      })),
    })),
  };
}

/** A snippet's parts, cut where their text together reaches `FIELD_LIMITS.snippet`. */
function boundedSnippet(parts: SearchPage["sessions"][number]["entries"][number]["snippet"]) {
  let left = L.snippet;
  const kept: typeof parts = [];
  for (const part of parts) {
    if (left <= 0) break;
    const text = bounded(part.text, left);
    kept.push({ ...part, text });
    left -= text.length;
  }
  return kept;
}

/** A library card with its texts cut to what pages show (a card keeps up to `FIELD_LIMITS.stored`). */
export function boundedCard(card: SessionCard): SessionCard {
  return {
    ...card,
    name: bounded(card.name, L.name),
    cwd: bounded(card.cwd, L.cwd),
    firstMessage: bounded(card.firstMessage, L.preview),
    startedAt: bounded(card.startedAt, L.timestamp),
    models: card.models.map((m) => bounded(m, L.model)),
  };
}
