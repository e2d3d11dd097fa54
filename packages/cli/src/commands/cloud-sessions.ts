/** The account's session list, as the commands read it (apart from `ls`/`pull`, which load on use). */
import type { SessionList, SessionSummary } from "@pisync/protocol";
import type { Api } from "../api.js";

/** Every session of the user in the cloud, newest first (read 100 a page). */
export async function cloudSessions(client: Api): Promise<SessionSummary[]> {
  const sessions: SessionSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.json<SessionList>(
      `/v1/sessions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    sessions.push(...page.sessions);
    cursor = page.cursor;
  } while (cursor);
  return sessions;
}
