/**
 * pisync inside pi. Registers `/cloud`:
 * - `/cloud share [--expires 7d] [--live]`: shares the branch pi is on right now (the leaf pi
 *   holds in memory, which no file records: after /tree the file's last line is elsewhere);
 *   `--live` shares the whole session, following it as it grows;
 * - `/cloud status`: whether this session is backed up, what is pending, the last error, and
 *   what `pisync status` says of it (in sync, merged with another machine's copy, diverged and why);
 * - `/cloud pull <id|link> [--generation N]`: brings a session here (or a shared link, as a
 *   fork in the project pi is open in; its `parentSession` names the share, never the link),
 *   says when it was already here, and offers to switch to it;
 * - `/cloud open [QUERY] [--print]`: this session (or a search) in the browser, signed in by a
 *   one-time link (printed instead with `--print`).
 * The current session is backed up while pi runs, by the same code as `pisync watch` (the
 * server's offset protocol makes running both safe: the second sender's bytes are retries).
 * A copy of the session continued on another machine is merged by entry id as `pisync watch`
 * merges it (unless PISYNC_MERGE=off): the other machine's lines are appended to this file
 * only between pi's writes (see `backUp`).
 * It uses the CLI's login (`pisync login`, or PISYNC_ENDPOINT / PISYNC_TOKEN).
 */
import { statSync } from "node:fs";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import {
  Api,
  type ApiOptions,
  CliError,
  type Confirmed,
  completeLengthOf,
  confirmedState,
  createLogger,
  describeSyncStatus,
  describeWait,
  EXIT,
  expiryLimitMessage,
  lastKnownState,
  libraryLink,
  loadLogin,
  mergeEnabled,
  openUrl,
  type Pulled,
  parseDuration,
  parsePullArgs,
  pullSession,
  requestTimeoutMs,
  resolveLogin,
  sanitize,
  sessionSyncStatus,
  syncFile,
} from "@pisync/cli";

/** How long one request of the package may wait out a busy server before it reports the failure. */
const MAX_BUSY_WAIT_MS = 2 * 60_000;

/** The deadline PISYNC_TIMEOUT sets, or the client's default when it is unset or malformed. */
function timeoutMs(): number | undefined {
  try {
    return requestTimeoutMs(process.env);
  } catch {
    return undefined;
  }
}

export default function cloud(pi: ExtensionAPI) {
  let lastError: string | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  /**
   * The client's options: a busy server is waited out, and pi's status line says so while it
   * lasts (cleared when the request that waited is done).
   */
  const apiOptions = (ctx: ExtensionContext, options: ApiOptions = {}): ApiOptions => ({
    maxBusyWaitMs: MAX_BUSY_WAIT_MS,
    timeoutMs: timeoutMs(),
    onWait: (wait) => {
      ctx.ui.setStatus?.("pisync", sanitize(`pisync: ${describeWait(wait)}`));
      setTimeout(() => ctx.ui.setStatus?.("pisync", undefined), wait.ms).unref();
    },
    ...options,
  });

  /**
   * Backs up the current session file; one run at a time, a change during a run runs again.
   * A merge may append the cloud's lines to the file pi is writing. That is safe here because
   * pi writes whole lines synchronously (`appendFileSync`) on this same thread, and the CLI's
   * local append is synchronous too and writes only while the file is still exactly the
   * complete length it read (else it waits for the next run): between its check and its write
   * no line of pi's can start, so a merge never lands inside a line pi is writing.
   */
  async function backUp(ctx: ExtensionContext): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        const file = ctx.sessionManager.getSessionFile();
        const login = loadLogin();
        if (!file || !login) return;
        const api = new Api(login, apiOptions(ctx, { attempts: 3 }));
        let state: Confirmed["state"] | undefined;
        try {
          // What this server's data and this account confirmed (never another's at this address).
          state = (await confirmedState(api)).state;
          await syncFile(file, {
            api,
            state,
            log: createLogger(false, () => {}),
            merge: mergeEnabled(process.env),
          });
          lastError = undefined;
        } catch (error) {
          lastError = (error as Error).message;
        } finally {
          state?.flush();
        }
      } while (again);
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  const report = (
    ctx: ExtensionContext,
    command: string,
    result: Record<string, unknown>,
    message: string,
    level: "info" | "error" = "info",
  ) => {
    pi.events.emit("pisync:cloud", { command, ...result });
    // Links, errors and paths carry a server's or a session's words: made inert before pi shows them.
    ctx.ui.notify(sanitize(message), level);
  };

  // Back up as pi writes: when a session opens, after each turn, after /tree and compactions.
  pi.on("session_start", async (_event, ctx) => void backUp(ctx));
  pi.on("turn_end", async (_event, ctx) => void backUp(ctx));
  pi.on("agent_end", async (_event, ctx) => void backUp(ctx));
  pi.on("session_tree", async (_event, ctx) => void backUp(ctx));
  pi.on("session_compact", async (_event, ctx) => void backUp(ctx));

  pi.registerCommand("cloud", {
    description:
      "pisync: /cloud share [--expires 7d] [--live] · /cloud status · /cloud pull <id|link> · /cloud open [QUERY] [--print]",
    handler: async (args, ctx) => {
      const [sub, ...rest] = args.trim().split(/\s+/).filter(Boolean);
      // The CLI's login; without one, the CLI's words for why (what to run in a terminal).
      const resolved = resolveLogin();
      const login = "login" in resolved ? resolved.login : undefined;
      if (sub !== "pull" && "problem" in resolved) {
        const problem = `pisync: ${resolved.problem}`;
        return report(ctx, sub ?? "", { error: problem }, problem, "error");
      }
      if (sub === "share") {
        const live = rest.includes("--live");
        const at = rest.indexOf("--expires");
        const expiresIn = at >= 0 ? parseDuration(rest[at + 1] ?? "") : undefined;
        if (at >= 0 && !expiresIn)
          return report(ctx, sub, { error: "bad --expires" }, "--expires takes 7d, 12h, 30m or seconds", "error");
        await backUp(ctx);
        const leafId = ctx.sessionManager.getLeafId();
        try {
          const share = await new Api(login as NonNullable<typeof login>, apiOptions(ctx)).postJson<{
            url: string;
            expiresAt: string;
          }>(`/v1/sessions/${encodeURIComponent(ctx.sessionManager.getSessionId())}/shares`, {
            leafId: live || !leafId ? undefined : leafId,
            expiresIn,
          });
          return report(
            ctx,
            sub,
            { url: share.url, leafId: live ? null : leafId },
            `Shared (until ${share.expiresAt}): ${share.url}`,
          );
        } catch (error) {
          const message = expiryLimitMessage(error) ?? (error as Error).message;
          return report(ctx, sub, { error: message }, `Sharing failed: ${message}`, "error");
        }
      }
      if (sub === "open") {
        // The CLI's engine: this session (backed up first) unless words to search for are given.
        const print = rest.includes("--print");
        const query = rest.filter((a) => a !== "--print").join(" ");
        if (!query) await backUp(ctx);
        try {
          const link = await libraryLink(
            new Api(login as NonNullable<typeof login>, apiOptions(ctx)),
            query || ctx.sessionManager.getSessionId(),
          );
          const opened = !print && (await openUrl(link.url, process.env));
          // The link is a secret: reported only when asked for (--print) or when no browser opened it.
          return opened
            ? report(ctx, sub, { next: link.next, opened }, `Opened ${link.next} in your browser`)
            : report(
                ctx,
                sub,
                { next: link.next, opened, url: link.url },
                `Sign-in link (once, within 60 s): ${link.url}`,
              );
        } catch (error) {
          const message = (error as Error).message;
          return report(ctx, sub, { error: message }, `Opening the library failed: ${message}`, "error");
        }
      }
      if (sub === "status") {
        const file = ctx.sessionManager.getSessionFile();
        if (!file)
          return report(ctx, sub, { backedUp: false }, "This session is not saved to a file: nothing to back up.");
        await backUp(ctx);
        // Asked of the server: what it and this account confirmed; unreachable, what this machine last knew.
        let confirmed: Confirmed;
        let offline: string | undefined;
        const endpoint = (login as NonNullable<typeof login>).endpoint;
        try {
          const client = new Api(login as NonNullable<typeof login>, apiOptions(ctx, { attempts: 2 }));
          confirmed = await confirmedState(client, process.env, { remember: false });
        } catch (error) {
          // Unreachable or refused: what this machine last knew, said as such.
          offline = (error as Error).message;
          confirmed = lastKnownState(endpoint);
        }
        const state = confirmed.state.get(file);
        const size = statSync(file, { throwIfNoEntry: false })?.size;
        // Complete lines only, as `pisync status` counts them: a line pi is writing is not pending yet.
        const complete = size === undefined ? undefined : completeLengthOf(file, size);
        const pending = Math.max(0, (complete ?? 0) - (state?.sent ?? 0));
        const sync = sessionSyncStatus(state, complete);
        const result = {
          backedUp: !!state && pending === 0,
          stored: state?.sent ?? 0,
          pending,
          generation: state?.generation ?? null,
          lastError: lastError ?? state?.lastError ?? null,
          sync,
          lastKnown: offline !== undefined,
          server: confirmed.identity ? { id: confirmed.identity.server.id, user: confirmed.identity.user } : null,
        };
        const said = offline
          ? `Could not reach ${endpoint} (${offline}); what this machine last knew, not what the server holds now: `
          : "";
        const message =
          said +
          (state
            ? `Backed up ${result.stored} bytes (generation ${result.generation})${pending ? `, ${pending} pending` : ""}; ${describeSyncStatus(sync)}${result.lastError ? `; last error: ${result.lastError}` : ""}`
            : `Not backed up to this server and account yet${result.lastError ? `: ${result.lastError}` : ""}`);
        return report(ctx, sub, result, message);
      }
      if (sub === "pull" && rest[0]) {
        // A shared link becomes a fork in the project pi is open in (unless --cwd says otherwise).
        const here = /^https?:\/\//.test(rest[0]) && !rest.includes("--cwd") ? ["--cwd", ctx.cwd] : [];
        let pulled: Pulled;
        try {
          // The CLI's own engine and argument rules; its progress words are not needed here.
          const io = { out: () => {}, err: () => {}, env: process.env, isTTY: false };
          pulled = await pullSession(parsePullArgs([...rest, ...here]), io);
        } catch (error) {
          const message = (error as Error).message;
          if (error instanceof CliError && error.code === EXIT.ok) return report(ctx, sub, { help: message }, message);
          return report(ctx, sub, { error: message }, message || "pull failed", "error");
        }
        report(ctx, sub, { ...pulled }, pulled.already ? `Already here: ${pulled.path}` : `Pulled into ${pulled.path}`);
        if (pulled.path === ctx.sessionManager.getSessionFile()) return;
        if (ctx.hasUI && (await ctx.ui.confirm("pisync", "Switch to the pulled session?"))) {
          await (ctx as unknown as { switchSession(path: string): Promise<unknown> }).switchSession(pulled.path);
        }
        return;
      }
      report(
        ctx,
        sub ?? "",
        { error: "usage" },
        "usage: /cloud share [--expires 7d] [--live] · /cloud status · /cloud pull <id|link> · /cloud open [QUERY] [--print]",
        "error",
      );
    },
  });
}
