/** The shapes the tool blocks take in: as stored, so every field is unknown (hostile input). */

/** A toolCall part of an assistant message, as stored (fields may be missing or of the wrong type: hostile input). */
export interface ToolCallPart {
  type?: "toolCall";
  id?: unknown;
  name?: unknown;
  arguments?: unknown;
}

/** A toolResult message (entry.message with role "toolResult"), as stored. */
export type ToolResultMessage = Record<string, unknown>;

/** What each tool's renderer gets: the name and arguments read safely, the result as stored. */
export interface ToolInput {
  /** The tool's name (from the call, else from the result). */
  name: string;
  /** The call's arguments as an object (empty when missing or not an object). */
  args: Record<string, unknown>;
  /** The result, when it is on the shown path. */
  result: ToolResultMessage | undefined;
  /** Whether the call is on the shown path. */
  hasCall: boolean;
}
