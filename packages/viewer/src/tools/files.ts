/**
 * `read` and `write`: the file's path, then the excerpt read (with the line range asked for and
 * pi's continuation note as a mark) or the content written, highlighted in the file's language.
 */
import { escapeHtml } from "../escape.js";
import { durationHtml, imagesHtml, mark, marksRow, nameHtml, output, pathHtml, toolBlock } from "./block.js";
import { count, linesOf, num, resultImages, resultText, sizeOf, splitEnd, str } from "./fields.js";
import { languageOf } from "./language.js";
import type { ToolInput } from "./types.js";

/** pi's note after an excerpt: "[5 more lines in file. Use offset=5 to continue.]", "[Showing lines …]". */
const READ_NOTE = /(?:^|\n\n)\[([^\n]*(?:more lines in file|Showing |offset=)[^\n]*)\]$/;

/** The range a read asked for, 1-based as pi counts: "lines 2–4", "from line 40", "first 10 lines". */
function rangeOf(offset: number | undefined, limit: number | undefined): string {
  if (offset !== undefined && limit !== undefined) return `lines ${offset}–${offset + limit - 1}`;
  if (offset !== undefined) return `from line ${offset}`;
  if (limit !== undefined) return `first ${count(limit, "line")}`;
  return "";
}

/** The error text of a failed call, shown as the output. */
const errorOutput = (text: string) => (text ? output(text, { kind: "error-text" }) : "");

/** Renders a `read` call and its result. */
export function renderRead(input: ToolInput): string {
  const { name, args, result } = input;
  const path = str(args.path) ?? str(args.file_path);
  const range = rangeOf(num(args.offset), num(args.limit));
  const head = `${nameHtml(name)} ${pathHtml(path)}${range ? ` <span class="tool-meta">${escapeHtml(range)}</span>` : ""}${durationHtml(num(result?.durationMs))}`;
  const parts: string[] = [];
  const error = result?.isError === true;
  if (result) {
    const images = resultImages(result);
    if (error) parts.push(errorOutput(resultText(result)));
    else {
      const { rest: text, match: note } = splitEnd(resultText(result), READ_NOTE);
      // An image read says so in a line of text beside the image: the image is what to show.
      const onlyImageNote = images.length > 0 && /^Read image file \[[^\]\n]*\][^\n]*$/.test(text.trim());
      if (text && !onlyImageNote) parts.push(output(text, { lang: languageOf(path), kind: "file", noun: "excerpt" }));
      parts.push(imagesHtml(images), marksRow(note ? [mark("info", note[1])] : []));
    }
  }
  return toolBlock(input, head, parts, error);
}

/** Renders a `write` call and its result. */
export function renderWrite(input: ToolInput): string {
  const { name, args, result } = input;
  const path = str(args.path) ?? str(args.file_path);
  const content = str(args.content);
  const size = content === undefined ? "" : `${count(linesOf(content).length, "line")} · ${sizeOf(content)}`;
  const head = `${nameHtml(name)} ${pathHtml(path)}${size ? ` <span class="tool-meta">${escapeHtml(size)}</span>` : ""}${durationHtml(num(result?.durationMs))}`;
  const error = result?.isError === true;
  const parts = [
    content === undefined
      ? marksRow([mark("missing", "(no content)")])
      : output(content, { lang: languageOf(path), kind: "file", noun: "file" }),
  ];
  if (error) parts.push(errorOutput(resultText(result)));
  return toolBlock(input, head, parts, error);
}
