/** What commands share: argument parsing with zod, the login, the output. */
import { type ParseArgsConfig, parseArgs } from "node:util";
import * as z from "zod/mini";
import { Api } from "../api.js";
import { CliError, EXIT } from "../cli-error.js";
import { loadLogin } from "../config.js";

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  isTTY: boolean;
}

export const defaultIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  isTTY: Boolean(process.stderr.isTTY),
};

/** Parses a command's arguments, then validates them with `schema`; usage errors exit 2. */
export function parse<T extends z.ZodMiniType>(
  argv: string[],
  options: ParseArgsConfig["options"],
  schema: T,
  usage: string,
): z.infer<T> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
    }) as typeof parsed;
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${usage}`, EXIT.usage);
  }
  if (parsed.values.help) throw new CliError(usage, EXIT.ok);
  const result = schema.safeParse({ ...parsed.values, positionals: parsed.positionals });
  if (!result.success) throw new CliError(`${z.prettifyError(result.error)}\n${usage}`, EXIT.usage);
  return result.data;
}

/** The API client for the saved login; exits 3 when there is none. */
export function api(io: Io): Api {
  const login = loadLogin(io.env);
  if (!login) {
    throw new CliError(
      "not logged in: run `pisync login --endpoint URL --token TOKEN` (or set PISYNC_ENDPOINT and PISYNC_TOKEN)",
      EXIT.auth,
    );
  }
  return new Api(login);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
