/**
 * A session's sync status as `pisync status` and the pi package's `/cloud status` show it,
 * computed from what the watcher recorded (`FileState`) and the file's complete length.
 */
import type { FileState } from "./state.js";

/**
 * - `in-sync`: the cloud holds every complete line of the file, byte for byte.
 * - `pending`: complete lines wait to be sent (or the file was never sent).
 * - `merged`: the file and the cloud hold the same entries in another order: `fromCloud`
 *   entries were appended here from the cloud, `toCloud` sent from here; `devices` are the
 *   other machines' names when the server said who wrote them.
 * - `diverged`: a new generation was made; `reason` says why.
 */
export interface SessionSyncStatus {
  state: "in-sync" | "pending" | "merged" | "diverged";
  reason?: string;
  fromCloud?: number;
  toCloud?: number;
  devices?: string[];
}

/**
 * The sync status of one file from its recorded state and its complete length now (bytes up
 * to its last newline; undefined when unknown, e.g. the file was deleted). A diverged
 * generation outranks pending bytes, which outrank a merge: the most useful news first.
 */
export function sessionSyncStatus(state: FileState | undefined, complete?: number): SessionSyncStatus {
  if (!state) return { state: "pending" };
  const merged = state.merged && (state.merged.fromCloud > 0 || state.merged.toCloud > 0) ? state.merged : undefined;
  const counts = merged
    ? {
        fromCloud: merged.fromCloud,
        toCloud: merged.toCloud,
        ...(merged.devices?.length ? { devices: [...merged.devices] } : {}),
      }
    : {};
  if (state.diverged) return { state: "diverged", reason: state.reason ?? "rewritten", ...counts };
  if (complete !== undefined && complete > state.sent) return { state: "pending", ...counts };
  if (merged) return { state: "merged", ...counts };
  return { state: "in-sync" };
}

/** One line for people: "in sync", "merged: 2 entries from the cloud (laptop), 1 sent", "diverged: rewritten". */
export function describeSyncStatus(status: SessionSyncStatus): string {
  const entries = (n: number) => `${n} ${n === 1 ? "entry" : "entries"}`;
  const merged =
    status.fromCloud !== undefined
      ? `${entries(status.fromCloud)} from the cloud${status.devices?.length ? ` (${status.devices.join(", ")})` : ""}, ${entries(status.toCloud ?? 0)} sent from here`
      : "";
  switch (status.state) {
    case "in-sync":
      return "in sync";
    case "pending":
      return merged ? `pending (merged: ${merged})` : "pending";
    case "merged":
      return `merged: ${merged}`;
    case "diverged":
      return `diverged: ${status.reason ?? "rewritten"}; a new generation was made`;
  }
}
