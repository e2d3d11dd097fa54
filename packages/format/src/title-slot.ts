/**
 * oh-my-pi's title slot: the first line of its files, `{"type":"title","v":1,"title":…,"pad":"   …"}`,
 * written at a fixed width (256 bytes with its newline) and overwritten in place on a rename (a
 * `title_change` entry is appended beside it). It is a mutable header, not history: it has no id,
 * is on no branch, and a change confined to it is a rename, never a rewrite of the session.
 */
import { isObject } from "./lines.js";

const NEWLINE = 0x0a;

/** What a title slot says. */
export interface TitleSlot {
  /** The current title ("" before the session has one). */
  title: string;
  /** When it was set (oh-my-pi's `updatedAt`); "" when absent. */
  updatedAt: string;
}

/** A parsed line's title slot: an object of type `title` without an id, with a string title. */
export function titleSlotOfValue(value: unknown): TitleSlot | undefined {
  if (!isObject(value) || value.type !== "title" || value.id !== undefined) return undefined;
  if (typeof value.title !== "string") return undefined;
  return { title: value.title, updatedAt: typeof value.updatedAt === "string" ? value.updatedAt : "" };
}

/**
 * The title slot that `line` (one line's bytes, with or without its `\n`) holds, if it is one.
 *
 * @example titleSlotOf(Buffer.from('{"type":"title","v":1,"title":"Fix CI","pad":"  "}\n'))?.title // "Fix CI"
 */
export function titleSlotOf(line: Uint8Array): TitleSlot | undefined {
  const end = line[line.length - 1] === NEWLINE ? line.length - 1 : line.length;
  if (line.subarray(0, end).indexOf(NEWLINE) >= 0) return undefined;
  try {
    return titleSlotOfValue(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(line.subarray(0, end))));
  } catch {
    return undefined;
  }
}

/**
 * The length (with its `\n`) of the first line of `bytes` when it is a title slot; undefined
 * when it is not one, or is not complete in `bytes`.
 */
export function titleSlotLength(bytes: Uint8Array): number | undefined {
  const at = bytes.indexOf(NEWLINE);
  if (at < 0) return undefined;
  return titleSlotOf(bytes.subarray(0, at + 1)) ? at + 1 : undefined;
}
