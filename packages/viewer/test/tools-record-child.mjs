/**
 * Runs pi's built-in tools (the pi package named by argv[2]) on a scratch project and prints each
 * call with the result pi would store, as JSON. Spawned by tools-record.ts under the Node each pi needs.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pi = await import(process.argv[2]);
const dir = mkdtempSync(join(tmpdir(), "pisync-tools-"));
mkdirSync(join(dir, "src"));
writeFileSync(
  join(dir, "src", "app.ts"),
  'export function add(a: number, b: number) {\n  return a + b;\n}\n\nconst x = 1;\nconst y = 2;\nconsole.log(add(x, y), "<b>");\n',
);
writeFileSync(
  join(dir, "logo.png"),
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    "base64",
  ),
);
// What pi 1.x's tools read from the agent's context (the session id for bash's environment).
const ctx = {
  cwd: dir,
  sessionManager: { getSessionId: () => "session-1", getSessionFile: () => undefined },
  model: undefined,
};
const calls = [];
async function run(name, args) {
  const tool = pi[`create${name[0].toUpperCase()}${name.slice(1)}Tool`](dir);
  const id = `call_${calls.length}`;
  let result;
  try {
    const r = await tool.execute(id, args, undefined, undefined, ctx);
    // pi 1.x's agent loop stores content, details and isError; structuredContent is not stored.
    result = {
      role: "toolResult",
      toolCallId: id,
      toolName: name,
      content: r.content,
      details: r.details,
      isError: r.isError === true,
    };
  } catch (e) {
    // As pi's agent loop stores a tool that throws.
    result = {
      role: "toolResult",
      toolCallId: id,
      toolName: name,
      content: [{ type: "text", text: e.message }],
      details: {},
      isError: true,
    };
  }
  result.timestamp = 1767225600000;
  calls.push({ call: { type: "toolCall", id, name, arguments: args }, result });
}
await run("edit", {
  path: "src/app.ts",
  edits: [
    { oldText: "  return a + b;", newText: "  // the sum\n  return a + b;" },
    { oldText: "const y = 2;", newText: "const y = 3;" },
  ],
});
await run("edit", { path: "src/app.ts", edits: [{ oldText: "not in the file", newText: "x" }] });
await run("write", { path: "src/hello.py", content: "def hello():\n    print('<hi>')\n" });
await run("read", { path: "src/app.ts", offset: 2, limit: 3 });
await run("read", { path: "logo.png" });
await run("read", { path: "missing.ts" });
await run("bash", { command: "echo hello; echo warn >&2" });
await run("bash", { command: "echo partial; exit 3" });
await run("bash", { command: "seq 1 2100" });
await run("bash", { command: "sleep 5", timeout: 1 });
await run("ls", { path: "." });
rmSync(dir, { recursive: true, force: true });
// No path of the recording machine in the recorded shapes.
const text = JSON.stringify(calls)
  .replaceAll(dir, "/home/dev/project")
  .replace(/[^"\s]*pi-bash-[0-9a-f]+\.log/g, "/home/dev/.cache/pi-bash-1.log");
process.stdout.write(text);
