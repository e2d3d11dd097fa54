/** What commands share: argument parsing with zod and human messages, the login, the output. */
import { type ParseArgsConfig, parseArgs } from "node:util";
import type * as z from "zod/mini";
import { Api, ApiError, type ApiOptions } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { requestTimeoutMs, resolveLogin } from "../config.js";
import { describeWait } from "../retry.js";
import { sanitize } from "../sanitize.js";
import { closest } from "../suggest.js";

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  isTTY: boolean;
  /** The terminal's width in columns, when stderr is one. */
  columns?: number;
  /** Standard input: whether it is a terminal, and all of it read (at most `maxBytes`). */
  stdin?: {
    isTTY: boolean;
    read(maxBytes: number): Promise<string>;
    /** Asks a question on the terminal; the line typed in answer. */
    ask?(question: string): Promise<string>;
  };
}

/** One line typed at the terminal in answer to `question` (on stderr). */
async function ask(question: string): Promise<string> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/** Reads standard input to its end, keeping at most `maxBytes` (a token, not a file). */
async function readStdin(maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    if (size < maxBytes) chunks.push((chunk as Buffer).subarray(0, maxBytes - size));
    size += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks).toString("utf8");
}

export const defaultIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  isTTY: Boolean(process.stderr.isTTY),
  get columns() {
    return process.stderr.columns;
  },
  stdin: {
    get isTTY() {
      return Boolean(process.stdin.isTTY);
    },
    read: readStdin,
    ask,
  },
};

/** A command's words for people: its synopsis, its arguments by name, and its `--help`. */
export interface CommandHelp {
  /** `pisync pull ID|LINK [--cwd DIR] …` */
  usage: string;
  /** The positional arguments' names in order (for messages); a trailing `...` marks a list. */
  args: string[];
  /** What it does, each option, and examples (shown by `--help`). */
  help: string;
}

/** `--name` for an option key, the argument's name for a positional. */
function argumentName(path: PropertyKey[], command: CommandHelp): string {
  if (path[0] !== "positionals") return `--${String(path[0])}`;
  const index = Number(path[1]);
  return command.args[Math.min(index, command.args.length - 1)]?.replace(/\.\.\.$/, "") ?? `argument ${index + 1}`;
}

/** One line per problem, naming the argument, saying what is allowed (the schema's messages give examples). */
function describeIssues(issues: z.core.$ZodIssue[], values: Record<string, unknown>, command: CommandHelp): string[] {
  return issues.map((issue) => {
    const name = argumentName(issue.path, command);
    if (issue.path[0] === "positionals" && issue.path.length === 1) {
      const wanted = command.args.filter((a) => !a.endsWith("..."));
      if (wanted.length === 0) return "takes no arguments";
      return `expects ${wanted.length === 1 ? "one argument" : `${wanted.length} arguments`}: ${wanted.join(" ")}`;
    }
    if (issue.path[0] !== "positionals" && values[String(issue.path[0])] === undefined) {
      return `${name} is required: ${issue.message}`;
    }
    return `${name}: ${issue.message}`;
  });
}

/** Node's parseArgs messages, said shortly; an unknown option with the one it likely meant. */
function describeParseError(error: Error & { code?: string }, known: string[]): string {
  const option = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const meant = option?.startsWith("--") ? closest(option.slice(2).split("=")[0], known) : undefined;
    return `unknown option ${option}${meant ? ` (did you mean --${meant}?)` : ""}`;
  }
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return /does not take/.test(error.message) ? `${option} takes no value` : `${option} needs a value`;
  }
  return error.message;
}

/** A usage error (exit 2): what is wrong, the synopsis, where the help is. */
export function usageError(command: CommandHelp, problems: string[]): CliError {
  const name = command.usage.split(" ").slice(0, 2).join(" ");
  return new CliError(
    `${name}: ${problems.join(`\n${name}: `)}\nusage: ${command.usage}\n(${name} --help for the options and examples)`,
    EXIT.usage,
  );
}

/** Parses a command's arguments, then validates them with `schema`; usage errors exit 2, `--help` prints the help. */
export function parse<T extends z.ZodMiniType>(
  argv: string[],
  options: ParseArgsConfig["options"],
  schema: T,
  command: CommandHelp,
): z.infer<T> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
    }) as typeof parsed;
  } catch (error) {
    if (argv.includes("--help") || argv.includes("-h")) throw new CliError(helpText(command), EXIT.ok);
    throw usageError(command, [describeParseError(error as Error, [...Object.keys(options ?? {}), "help"])]);
  }
  if (parsed.values.help) throw new CliError(helpText(command), EXIT.ok);
  const result = schema.safeParse({ ...parsed.values, positionals: parsed.positionals });
  if (!result.success) throw usageError(command, describeIssues(result.error.issues, parsed.values, command));
  return result.data;
}

/** The full help of a command. */
export function helpText(command: CommandHelp): string {
  return `usage: ${command.usage}\n\n${command.help.trim()}`;
}

/**
 * The API client for the login in effect; exits 3 when there is none (or it is malformed).
 * Its requests end by the deadline PISYNC_TIMEOUT (or `--timeout`) sets; a wait on a busy
 * server is said on stderr unless `options.onWait` says it elsewhere.
 */
export function api(io: Io, options?: ApiOptions): Api {
  const resolved = resolveLogin(io.env);
  if ("problem" in resolved) throw new CliError(resolved.problem, EXIT.auth);
  return new Api(resolved.login, {
    timeoutMs: requestTimeoutMs(io.env),
    onWait: (wait) => io.err(`${sanitize(describeWait(wait))}\n`),
    ...options,
  });
}

/** The message for a token the server refused (exit 3). */
export function refusedToken(endpoint: string): CliError {
  return new CliError(
    `the server at ${endpoint} refused the token (mistyped, revoked or for another server): run \`pisync login --endpoint URL --token TOKEN\``,
    EXIT.auth,
  );
}

/** Asks the server whether it accepts the token (one cheap read); a refusal exits 3. */
export async function checkToken(client: Api): Promise<void> {
  try {
    await client.json("/v1/sessions?limit=1");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw refusedToken(client.login.endpoint);
    throw error;
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
