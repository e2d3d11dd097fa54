/**
 * Runs under Bun (oh-my-pi's runtime): reads one JSON request on stdin, writes a session with
 * oh-my-pi's own `SessionManager` and prints `{ file }`. Not imported by the tests: spawned by
 * `omp.ts`. HOME is the caller's, so omp's blob store (`~/.omp/agent/blobs`) lands there.
 */
import { readFileSync } from "node:fs";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

type Op =
  | { kind: "user"; text: string; image?: { mimeType: string; data: string } }
  | { kind: "assistant"; text: string }
  | { kind: "rename"; title: string }
  | { kind: "custom"; customType: string; content: string };

interface Request {
  /** An existing file to open, else a new session in `sessionDir` for `cwd`. */
  file?: string;
  sessionDir: string;
  cwd: string;
  ops: Op[];
}

const usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
};

const request = JSON.parse(readFileSync(0, "utf8")) as Request;
const manager = request.file
  ? await SessionManager.open(request.file, request.sessionDir)
  : SessionManager.create(request.cwd, request.sessionDir);
for (const op of request.ops) {
  const timestamp = Date.now();
  if (op.kind === "user") {
    const content = op.image
      ? [
          { type: "text", text: op.text },
          { type: "image", ...op.image },
        ]
      : op.text;
    // biome-ignore lint/suspicious/noExplicitAny: omp's message union, written as omp's agent would
    manager.appendMessage({ role: "user", content, timestamp } as any);
  } else if (op.kind === "assistant") {
    manager.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: op.text }],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage,
      stopReason: "stop",
      timestamp,
      // biome-ignore lint/suspicious/noExplicitAny: see above
    } as any);
  } else if (op.kind === "rename") {
    await manager.setSessionName(op.title, "user");
  } else if (op.kind === "custom") {
    manager.appendCustomMessageEntry(op.customType, op.content, true);
  }
  await manager.flush();
}
await manager.flush();
const file = manager.getSessionFile();
await manager.close();
process.stdout.write(JSON.stringify({ file }));
