/**
 * What the context rules read a path through ({@link PathReader}) and what they answer
 * ({@link SessionContext}): below both the rules (`context.ts`) and the light index, which
 * gives a reader of its own entries.
 */
import type { AgentMessage } from "./schema.js";

/** What pi sends the model for a leaf. */
export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

/** How the context rules read the entries of a path: index records, entry objects as pi holds them, or light-index entries. */
export interface PathReader<N> {
  type(node: N): unknown;
  id(node: N): unknown;
  /** The thinking level of a `thinking_level_change`. */
  thinkingLevel(node: N): unknown;
  /** The model a `model_change` sets. */
  modelChange(node: N): SessionContext["model"];
  /** The model an assistant message sets, or undefined when the node is not one. */
  assistantModel(node: N): SessionContext["model"] | undefined;
  /** The role of a `message` entry's message (undefined when it has none). */
  role(node: N): unknown;
  entry(node: N): Record<string, unknown>;
  /** Told the nodes whose entries are about to be read (a reader from disk reads them in one go). */
  prefetch?(nodes: readonly N[]): void;
  /** The node with this id, where ids are unique and it can be found without reading every node's id. */
  withId?(id: unknown): N | undefined;
}
