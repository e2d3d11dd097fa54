/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4 } as const;

/** An error that ends the command with a message and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number = EXIT.failed,
  ) {
    super(message);
  }
}
