/**
 * How long any text from session content may be in an answer: one table, used where the text
 * is made (the summary an append stores, the tree's previews) and again where it is answered
 * (a summary stored before these bounds). Bounds apply to what is shown, never to the bytes:
 * the JSONL backup keeps every line whole.
 */
export const FIELD_LIMITS = {
  /** A session's name (pi's `session_info`). */
  name: 200,
  /** The header's working folder. */
  cwd: 1024,
  /** The first user message's preview, and every tree preview. */
  preview: 120,
  /** A label set on an entry. */
  label: 200,
  /** A `provider/model` name. */
  model: 200,
  /** An entry id, a type or a role named in an answer (pi's ids are 8 hex). */
  token: 256,
  /** A timestamp as written in the file. */
  timestamp: 64,
  /** The text of a problem found in a line. */
  problem: 300,
  /** A search hit's snippet, its parts together. */
  snippet: 400,
  /**
   * What a stored summary keeps of a name, folder or time (beside the head, in one DynamoDB
   * item): more than any answer shows, so that a share masks a credential whole before the
   * shown cut, never half of one cut at ingest.
   */
  stored: 4096,
} as const;

/** What a page shows of a line as entries, and when it shows its text instead. */
export const RENDER_LIMITS = {
  /**
   * Arrays and objects nested deeper than this are shown as the line's text: structured
   * cloning, renderers and maskers walk values recursively and overflow the stack near 5,000.
   */
  depth: 64,
  /** A line longer than this (bytes) is shown as text too (the JSONL has it whole). */
  lineBytes: 8 * 1024 * 1024,
  /** The characters of such a line's text a page shows. */
  textChars: 64 * 1024,
} as const;

/**
 * What one user may hold at once, whatever their credentials: every token and browser session
 * of a user counts against the same bounds (docs/limits.md).
 */
export const USER_LIMITS = {
  /**
   * Large-line uploads open at once: tickets not yet taken by an append whose URL still works
   * or whose bytes are kept (a day at most). Past it: 429 `too_many_uploads`.
   */
  openUploads: 16,
  /** The bytes those open tickets declare together (4 lines of the largest size). */
  openUploadBytes: 256 * 1024 * 1024,
  /** Tokens not revoked. Past it `POST /v1/tokens` answers 429 `too_many_tokens`: revoke one first. */
  liveTokens: 50,
  /** Requests per minute across all of a user's tokens and browser sessions (`npm start`). */
  requestsPerMinute: 60_000,
} as const;

/**
 * `text` cut to `max` characters, the cut marked with `…` (never half a surrogate pair).
 * Non-strings pass as they are.
 */
export function bounded<T>(text: T, max: number): T {
  if (typeof text !== "string" || text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…` as T;
}
