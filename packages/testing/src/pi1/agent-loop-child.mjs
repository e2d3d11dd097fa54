// A session written by pi 1.6.0's own agent loop (`createAgentSession` and `prompt`), run under
// Node 22 by agent-loop.ts: pi's real tools (read, edit, bash, write) on a scratch project, a
// model switch, and a manual compaction. The model is pi-ai's faux provider, priced the way
// pi's real providers price an answer (`calculateCost` of the model's rates before `done`), so
// every assistant message and the compaction carry the usage and cost pi computed itself.
// Prints the session file pi wrote.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ai from "@earendil-works/pi-ai";
import * as pi from "@earendil-works/pi-coding-agent";

const dir = mkdtempSync(join(tmpdir(), "pisync-agent-loop-"));
try {
  const project = join(dir, "project");
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(join(project, "src", "cart.ts"), "export const total = 1;\n");
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir);

  const core = ai.createFauxCore({
    provider: "faux",
    models: [
      { id: "faux-large", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
      { id: "faux-small", cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
    ],
  });
  // As pi's providers do: the answer's cost from the model's rates, set before `done` is seen.
  const priced = (model, context, options) => {
    const stream = core.stream(model, context, options);
    const push = stream.push.bind(stream);
    stream.push = (event) => {
      if (event.type === "done") ai.calculateCost(model, event.message.usage);
      push(event);
    };
    return stream;
  };
  const provider = ai.createProvider({
    id: core.provider,
    auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
    models: core.models,
    api: {
      stream: priced,
      streamSimple: priced,
      fetchDeferred: core.fetchDeferred,
      cancelDeferred: core.cancelDeferred,
    },
  });
  const modelRuntime = await pi.ModelRuntime.create({
    authPath: join(agentDir, "auth.json"),
    modelsPath: null,
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(provider);
  await modelRuntime.setRuntimeApiKey("faux", "test-key");

  const sessionManager = pi.SessionManager.create(project, join(dir, "sessions"));
  const { session } = await pi.createAgentSession({
    cwd: project,
    agentDir,
    modelRuntime,
    model: core.getModel("faux-large"),
    sessionManager,
    // Small enough that a manual compaction has something to summarise.
    settingsManager: pi.SettingsManager.inMemory({
      compaction: { enabled: false, keepRecentTokens: 10, reserveTokens: 100 },
    }),
    tools: ["read", "bash", "edit", "write"],
  });
  const { fauxAssistantMessage: answer, fauxThinking: thinking, fauxToolCall: call } = ai;

  core.setResponses([
    answer([thinking("Read it first."), call("read", { path: "src/cart.ts" })], { stopReason: "toolUse" }),
    answer([call("edit", { path: "src/cart.ts", edits: [{ oldText: "1", newText: "2" }] })], { stopReason: "toolUse" }),
    answer([call("bash", { command: "cat src/cart.ts" })], { stopReason: "toolUse" }),
    answer("Done: the total is 2."),
  ]);
  await session.prompt("Make the total 2 in src/cart.ts");
  await session.setModel(core.getModel("faux-small"));
  core.setResponses([
    answer([call("write", { path: "notes.md", content: "# notes\n" })], { stopReason: "toolUse" }),
    answer("Wrote notes.md."),
  ]);
  await session.prompt("Write notes.md");
  // The compaction's two summaries (the history and the cut turn's prefix) are LLM work too.
  core.setResponses([answer("## Goal\nMake the total 2."), answer("## Turn\nWrote notes.md.")]);
  await session.compact();
  core.setResponses([answer("Nothing else to do.")]);
  await session.prompt("Anything else?");

  process.stdout.write(readFileSync(sessionManager.getSessionFile(), "utf8"));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
