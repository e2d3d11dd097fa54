/**
 * Session-line factories: pi's entries as its `SessionManager` writes them, small enough to
 * write a test's session inline.
 *
 * @example
 * ```ts
 * const text =
 *   line(sessionHeader("s1")) +
 *   line(entry("a1", null, 1, userMessage("hi"))) +
 *   line(entry("a2", "a1", 2, assistantMessage("hello")));
 * ```
 */

/** A session line: the entry as JSON and its `\n`. */
export const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** A timestamp `s` seconds after 2026-01-01T00:00:00Z (0 ≤ s < 60). */
export const ts = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;

/** A version-3 session header for `id` at second 0. */
export function sessionHeader(id: string, cwd = "/home/dev/app") {
  return { type: "session", version: 3, id, timestamp: ts(0), cwd };
}

/**
 * The token usage of an assistant message (or a pi 1.x `usage` entry): `tokens` input tokens,
 * `output` output tokens, and `cost` dollars in all.
 */
export function usage(tokens = 1, cost = 0, output = 1) {
  return {
    input: tokens,
    output,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: tokens + output,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
  };
}

/** A user message as pi stores it (`content` a string or content parts). */
export function userMessage(content: unknown, timestamp = 1) {
  return { role: "user" as const, content, timestamp };
}

/** A part of an assistant message's content. */
export type AssistantPart =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> };

/**
 * An assistant message as pi stores it: a text reply, or the given content parts (text,
 * thinking, tool calls).
 */
export function assistantMessage(
  content: string | AssistantPart[],
  options: { model?: string; timestamp?: number; usage?: ReturnType<typeof usage> } = {},
) {
  return {
    role: "assistant" as const,
    content: typeof content === "string" ? [{ type: "text", text: content } as AssistantPart] : content,
    api: "anthropic-messages",
    provider: "anthropic",
    model: options.model ?? "claude-sonnet-4-5",
    usage: options.usage ?? usage(),
    stopReason: "stop" as const,
    timestamp: options.timestamp ?? 1,
  };
}

/** A `message` entry holding `message`, at second `at`. */
export function entry(id: string, parentId: string | null, at: number, message: object) {
  return { type: "message", id, parentId, timestamp: ts(at), message };
}

/** The line of a user message entry at second `at`. */
export const userLine = (id: string, parentId: string | null, at: number, content: string): string =>
  line(entry(id, parentId, at, userMessage(content, at)));
