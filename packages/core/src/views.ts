/** What the owner's API shows of a session: its view in the list and detail, and its tree's nodes. */
import type { Problem } from "@pisync/format";
import type { SessionHead } from "@pisync/store";
import { boundedSummary } from "./bounds.js";

export type { TreeNode } from "./tree-node.js";

/** A session as the list and the detail show it. */
export interface SessionView {
  id: string;
  generation: number;
  generations: number;
  bytes: number;
  entries: number;
  name?: string;
  cwd?: string;
  firstMessage?: string;
  tokens: number;
  cost: number;
  leafId: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  /** The time of the session's own last entry (its last backup's when no entry has one). */
  lastAt: string;
  problemCount: number;
  problems: Problem[];
}

/** The list's and detail's view of a session, from its head alone. */
export function viewOf(head: SessionHead): SessionView {
  // A summary stored before the bounds is cut here too.
  const s = boundedSummary(head.summary);
  return {
    id: head.sessionId,
    generation: head.current.generation,
    generations: head.generations,
    bytes: head.current.length,
    entries: s.entries,
    name: s.name,
    cwd: s.cwd,
    firstMessage: s.firstMessage,
    tokens: s.tokens,
    cost: s.cost,
    leafId: s.leafId,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    startedAt: s.startedAt,
    lastAt: (s.lastEntryAt ?? head.updatedAt).slice(0, 64),
    problemCount: s.problemCount,
    problems: s.problems,
  };
}
