/** A session of many lines for the persisted index's tests, appended a run of lines at a time. */
import type { Stores } from "@pisync/store";
import { Appender } from "../src/index.js";

const enc = (text: string) => new TextEncoder().encode(text);

/** Lines `from` to `to` (exclusive) of a session: user turns, a branch every 97, a label every 301. */
export function lines(sessionId: string, tag: string, from: number, to: number): string {
  const out: string[] = [];
  if (from === 0) {
    out.push(
      JSON.stringify({ type: "session", version: 3, id: sessionId, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }),
    );
  }
  for (let i = Math.max(from, 1); i < to; i++) {
    const parentId = i === 1 ? null : i % 97 === 0 ? `e${i - 5}` : `e${i - 1}`;
    const timestamp = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    if (i % 301 === 0) {
      out.push(
        JSON.stringify({
          type: "label",
          id: `e${i}`,
          parentId,
          timestamp,
          targetId: `e${i - 2}`,
          label: `${tag}-${i}`,
        }),
      );
    } else {
      const message = { role: "user", content: `${tag} turn ${i}`, timestamp: Date.parse(timestamp) };
      out.push(JSON.stringify({ type: "message", id: `e${i}`, parentId, timestamp, message }));
    }
  }
  return `${out.join("\n")}\n`;
}

/** Appends lines [from, to) at the session's end. */
export async function append(stores: Stores, userId: string, sessionId: string, tag: string, from: number, to: number) {
  const head = await stores.meta.getHead(userId, sessionId);
  const body = enc(lines(sessionId, tag, from, to));
  await new Appender(stores).append({ userId, sessionId, offset: head?.current.length ?? 0, body });
}
