/**
 * The checks after every fault, through the API as a client sees it: every session's stored
 * bytes (`GET /v1/sessions/:id/raw`) equal to what the server acknowledged, readable, with no
 * torn and no duplicated line.
 */
import type { SessionModel } from "./model.js";

export interface SessionChecks {
  sessions: number;
  acknowledgedBytes: number;
  /** Acknowledged bytes the stored copy lacks or holds differently (all of an unreadable session's). */
  bytesLost: number;
  /** Sessions whose bytes could not be read (a 500, a 404, no answer) within the read deadline. */
  unreadable: number;
  /** Stored bytes past the acknowledged ones that no given-up append explains. */
  unacknowledgedBytes: number;
  /** Lines that are not complete JSON values. */
  tornLines: number;
  /** Lines whose entry id another line of the session has. */
  duplicatedLines: number;
  /** Sessions the writers stopped writing (the server went behind or ahead of its acknowledgements). */
  broken: number;
  /** What was wrong, one line per session (the first 20). */
  problems: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A session's current bytes, waiting out 429/503/507 and lost connections for up to
 * `deadlineMs`; a string says why it could not be read.
 */
async function readRaw(url: string, token: string, id: string, deadlineMs: number): Promise<Buffer | string> {
  const deadline = Date.now() + deadlineMs;
  let why = "no answer";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/v1/sessions/${id}/raw`, {
        headers: { Authorization: `Bearer ${token}`, "Accept-Encoding": "identity" },
        signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())),
      });
      const body = Buffer.from(await response.arrayBuffer());
      if (response.status === 200) return body;
      why = `${response.status} ${body.toString("utf8").slice(0, 120)}`;
      if (![429, 503, 507].includes(response.status)) return why;
    } catch (error) {
      why = (error as Error).message;
    }
    await sleep(250);
  }
  return why;
}

/** Torn and duplicated lines of `bytes`. */
export function lineFaults(bytes: Buffer): { torn: number; duplicated: number } {
  const lines = bytes.toString("utf8").split("\n");
  // The last piece is what follows the last newline: empty unless a line is torn.
  let torn = lines.pop() === "" ? 0 : 1;
  let duplicated = 0;
  const ids = new Set<string>();
  for (const text of lines) {
    let id: unknown;
    try {
      id = (JSON.parse(text) as { id?: unknown }).id;
    } catch {
      torn++;
      continue;
    }
    if (typeof id !== "string") continue;
    if (ids.has(id)) duplicated++;
    ids.add(id);
  }
  return { torn, duplicated };
}

/** Checks every session of `sessions` against the server at `url`. */
export async function checkSessions(
  url: string,
  token: string,
  sessions: readonly SessionModel[],
  readDeadlineMs: number,
): Promise<SessionChecks> {
  const result: SessionChecks = {
    sessions: sessions.length,
    acknowledgedBytes: 0,
    bytesLost: 0,
    unreadable: 0,
    unacknowledgedBytes: 0,
    tornLines: 0,
    duplicatedLines: 0,
    broken: 0,
    problems: [],
  };
  const problem = (text: string) => {
    if (result.problems.length < 20) result.problems.push(text);
  };
  for (const session of sessions) {
    result.acknowledgedBytes += session.end;
    if (session.broken) {
      result.broken++;
      problem(`${session.id}: ${session.broken}`);
    }
    if (session.end === 0 && !session.uncertain) continue;
    const stored = await readRaw(url, token, session.id, readDeadlineMs);
    if (typeof stored === "string") {
      result.unreadable++;
      result.bytesLost += session.end;
      problem(`${session.id}: unreadable (${stored})`);
      continue;
    }
    let lost = 0;
    for (const [offset, chunk] of session.chunks) {
      if (!stored.subarray(offset, offset + chunk.length).equals(chunk)) lost += chunk.length;
    }
    if (lost) problem(`${session.id}: ${lost} of ${session.end} acknowledged bytes lost (${stored.length} stored)`);
    result.bytesLost += lost;
    const extra = stored.subarray(session.end);
    const explained = session.uncertain?.offset === session.end && extra.equals(session.uncertain.bytes);
    if (extra.length && !explained) {
      result.unacknowledgedBytes += extra.length;
      problem(`${session.id}: ${extra.length} stored bytes past the ${session.end} acknowledged`);
    }
    const { torn, duplicated } = lineFaults(stored);
    if (torn || duplicated) problem(`${session.id}: ${torn} torn, ${duplicated} duplicated lines`);
    result.tornLines += torn;
    result.duplicatedLines += duplicated;
  }
  return result;
}
