/** What can be wrong in a session file. The bytes are never changed; problems are reported. */
export type ProblemKind =
  /** A complete line that is not valid JSON (pi skips it). */
  | "invalid-json"
  /** An invalid line holding the start of another entry: a torn write with the next entry glued on. */
  | "torn-line"
  /** A line whose JSON is `null`, a number, a string, an array, or an object without a string `type` and `id`. */
  | "not-an-entry"
  /** The first JSON value of the file is not a session header. */
  | "missing-header"
  /** An oh-my-pi title slot line before the header (read past, as oh-my-pi does). */
  | "title-slot"
  /** A second `session` line after the header (ignored, as pi does). */
  | "extra-header"
  /** The last line has no `\n` yet: held back until it is complete. */
  | "unterminated-line"
  /** Two entries share an id: the later line wins, as in pi's index. */
  | "duplicate-id"
  /** An entry's `parentId` names no entry: its branch starts there. */
  | "missing-parent"
  /** Following `parentId` comes back to an entry already on the path (pi would loop forever). */
  | "parent-cycle"
  /** An entry that cannot take part in the context (a `message` entry without a message). */
  | "invalid-entry";

/** One problem found while reading a session. */
export interface Problem {
  kind: ProblemKind;
  /** 1-based line number, when the problem belongs to one line. */
  line?: number;
  /** Byte offset and length of that line. */
  offset?: number;
  length?: number;
  /** The entry id concerned, when there is one. */
  id?: string;
  message: string;
}
