/**
 * `bash` and the user's own `!command` (a `bashExecution` message) as a terminal block: the
 * command, its output (the tail previewed when long, as pi keeps the tail), and marks for the
 * exit code, a timeout, a cancel and truncation. pi's tool result carries no exit code field: a
 * failure is the last paragraph of its text ("Command exited with code 3"), read back here.
 */
import stripAnsi from "strip-ansi";
import { escapeHtml } from "../escape.js";
import { renderCode } from "../markdown.js";
import { durationHtml, imagesHtml, mark, marksRow, nameHtml, output, toolBlock } from "./block.js";
import { count, num, obj, resultImages, resultText, splitEnd, str } from "./fields.js";
import type { ToolInput } from "./types.js";

/** The status paragraph pi appends to a failed command's output. */
const STATUS =
  /(?:^|\n\n)(Command (?:exited with code (-?\d+)|timed out after [^\n]*|aborted|terminated without an exit code)[^\n]*)$/;
/** The truncation note pi appends to a cut output ("[Showing lines 102-2101 of 2101. Full output: …]"). */
const NOTE = /(?:^|\n\n)\[(Showing [^\n]*?)(?:\. Full output: ([^\n]*))?\]$/;

/** How a command ended, as marks. */
interface Ending {
  text: string;
  marks: string[];
  error: boolean;
}

/** Splits pi's status and truncation paragraphs off a bash result's text. */
function readEnding(text: string, details: Record<string, unknown>, isError: boolean): Ending {
  const marks: string[] = [];
  let rest = text;
  let error = isError;
  const { rest: beforeStatus, match: status } = splitEnd(rest, STATUS);
  if (status) {
    rest = beforeStatus;
    const [, sentence, code] = status;
    if (code !== undefined) marks.push(mark("err", `exit ${code}`, sentence));
    else if (sentence.startsWith("Command aborted")) marks.push(mark("warn", "cancelled", sentence));
    else if (sentence.startsWith("Command timed out")) marks.push(mark("err", "timed out", sentence));
    else marks.push(mark("err", "killed", sentence));
    error = true;
  } else if (!isError) {
    marks.push(mark("ok", "exit 0"));
  }
  const { rest: beforeNote, match: note } = splitEnd(rest, NOTE);
  rest = beforeNote;
  const truncation = obj(details.truncation);
  const total = num(truncation.totalLines);
  const shown = num(truncation.outputLines);
  if (truncation.truncated === true && total !== undefined && shown !== undefined) {
    marks.push(mark("warn", `truncated: last ${count(shown, "line")} of ${total.toLocaleString("en-US")}`));
  } else if (note) {
    marks.push(mark("warn", "truncated", note[1]));
  }
  const saved = str(details.fullOutputPath) ?? note?.[2];
  if (saved) marks.push(mark("info", `full output: ${saved}`));
  return { text: rest, marks, error };
}

/** The command line: a prompt and the command, highlighted as shell. */
function commandHtml(command: string | undefined): string {
  if (command === undefined) return `<div class="command">${mark("missing", "(no command)")}</div>`;
  return `<div class="command"><span class="prompt" aria-hidden="true">$</span>${renderCode(command, "bash")}</div>`;
}

/** The terminal's output part (or a line saying there was none). */
function terminal(text: string): string {
  // Terminal control sequences (colours, cursor moves, links) shown as text are noise.
  const plain = stripAnsi(text);
  return plain.trim() === ""
    ? '<div class="output terminal"><p class="muted none">(no output)</p></div>'
    : output(plain, { kind: "terminal", preview: "tail" });
}

/** Renders a `bash` call and its result. */
export function renderBash(input: ToolInput): string {
  const { name, args, result } = input;
  const timeout = num(args.timeout);
  const head = `${nameHtml(name)}${timeout !== undefined ? `<span class="tool-meta">timeout ${escapeHtml(timeout)} s</span>` : ""}${durationHtml(num(result?.durationMs))}`;
  const parts = [commandHtml(str(args.command))];
  let error = false;
  if (result) {
    const ending = readEnding(resultText(result), obj(result.details), result.isError === true);
    error = ending.error;
    parts.push(terminal(ending.text), imagesHtml(resultImages(result)), marksRow(ending.marks));
  }
  return toolBlock(input, head, parts, error, "term");
}

/** A `bashExecution` message (the user's own `!command`) as a terminal block. */
export function renderBashExecution(message: Record<string, unknown>): string {
  const exitCode = num(message.exitCode);
  const cancelled = message.cancelled === true;
  const marks: string[] = [];
  if (cancelled) marks.push(mark("warn", "cancelled"));
  else if (exitCode !== undefined) marks.push(mark(exitCode === 0 ? "ok" : "err", `exit ${exitCode}`));
  else if (message.exitCode === null) marks.push(mark("err", "killed", "the command ended without an exit code"));
  if (message.truncated === true) marks.push(mark("warn", "truncated"));
  const saved = str(message.fullOutputPath);
  if (saved) marks.push(mark("info", `full output: ${saved}`));
  if (message.excludeFromContext === true) marks.push(mark("info", "not sent to the model", "run with !!"));
  const error = cancelled || (exitCode !== undefined && exitCode !== 0) || message.exitCode === null;
  const head = `${nameHtml("bash")} <span class="tool-meta">run by the user</span>`;
  const output = str(message.output) ?? "";
  return toolBlock(
    { name: "bash", hasCall: true, result: message },
    head,
    [commandHtml(str(message.command)), terminal(output), marksRow(marks)],
    error,
    "term user-bash",
  );
}
