/**
 * Writes a large, realistic session with pi's own SessionManager (a devDependency): user turns,
 * assistant turns with thinking and tool calls, tool results up to 300 KB, PNG-sized images,
 * branches, branch summaries, compactions, labels and model changes. Seeded: the same
 * arguments give the same file.
 *
 * The pi 1.x flavor is written by pi 1.6.0's SessionManager (in Node 22: this file runs there as
 * a child) and carries what 1.x sessions carry: the whole system prompt and tool definitions
 * first, system messages that patch them, compactions with their system checkpoint, `usage`
 * entries, context edits, and timing fields on messages.
 *
 * Usage: tsx scripts/bench/generate-session.ts OUT_DIR [entries=20000] [megabytes=40]
 *        node22 scripts/bench/generate-session.ts OUT_DIR ENTRIES MEGABYTES --pi1
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";

/** The SessionManager calls the generator makes (pi 1.x adds the optional ones). */
interface Writer {
  appendMessage(message: Record<string, unknown>): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number): string;
  branch(id: string): void;
  branchWithSummary(id: string, summary: string): string;
  appendLabelChange(id: string, label: string): string;
  appendModelChange(provider: string, modelId: string): string;
  appendUsage?(kind: string, provider: string, model: string, usage: unknown): { id: string };
  appendContextEdit?(targetId: string, replacement: { content: unknown } | null): string;
  getSessionFile(): string | undefined;
}

/** A small seeded random generator (mulberry32): the same corpus on every run. */
export function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the session tree branch compaction model tool result file line byte cloud sync pull share leaf path context".split(
    " ",
  );

/** Generates a session file; returns its path. `pi1`: the pi 1.x flavor (needs pi 1.x's `SessionManager`). */
export function generateSession(
  outDir: string,
  entries = 20_000,
  megabytes = 40,
  seed = 7,
  pi1?: { create(cwd: string, dir: string): Writer },
): string {
  mkdirSync(outDir, { recursive: true });
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const prose = (bytes: number) => {
    const words: string[] = [];
    let size = 0;
    while (size < bytes) {
      const w = pick(WORDS);
      words.push(w);
      size += w.length + 1;
    }
    return words.join(" ");
  };
  const base64 = (bytes: number) => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let out = "";
    for (let i = 0; i < (bytes * 4) / 3; i++) out += alphabet[Math.floor(random() * 64)];
    return out;
  };
  // Average bytes per entry, tuned so that the file lands near the requested size.
  const budget = (megabytes * 1024 * 1024) / entries;
  const sm: Writer = (pi1 ?? (SessionManager as unknown as { create(cwd: string, dir: string): Writer })).create(
    "/home/dev/projects/big-app",
    outDir,
  );
  let clock = Date.UTC(2026, 0, 1);
  const usage = () => ({
    input: 1000,
    output: 200,
    cacheRead: 500,
    cacheWrite: 0,
    totalTokens: 1700,
    cost: { input: 0.003, output: 0.003, cacheRead: 0.0002, cacheWrite: 0, total: 0.0062 },
  });
  let count = 0;
  const ids: string[] = [];
  const add = (id: string) => {
    ids.push(id);
    count++;
  };
  // pi 1.x: a real system prompt is 10–30 KB of sections and tool definitions, written first.
  const tool = (name: string) => ({
    name,
    description: prose(600),
    parameters: { type: "object", properties: { path: { type: "string", description: prose(120) } } },
  });
  const system = (sections: Record<string, string | null>, toolsAdded: string[], toolsRemoved: string[] = []) =>
    sm.appendMessage({
      role: "system",
      content: count === 0 ? prose(2000) : "",
      sections,
      ...(toolsAdded.length ? { toolsAdded: toolsAdded.map(tool) } : {}),
      ...(toolsRemoved.length ? { toolsRemoved: toolsRemoved.map((name) => ({ name })) } : {}),
      timestamp: clock,
    });
  const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "web_fetch", "todo", "ask"];
  if (pi1) add(system({ preamble: prose(6000), guidelines: prose(8000), skills: prose(4000) }, TOOLS));
  while (count < entries) {
    clock += 5000;
    add(sm.appendMessage({ role: "user", content: prose(budget * 0.2), timestamp: clock }));
    const calls = 1 + Math.floor(random() * 3);
    add(
      sm.appendMessage({
        role: "assistant",
        content: [
          { type: "thinking", thinking: prose(budget * 0.3) },
          { type: "text", text: prose(budget * 0.3) },
          ...Array.from({ length: calls }, (_, k) => ({
            type: "toolCall" as const,
            id: `call_${count}_${k}`,
            name: "bash",
            arguments: { command: `ls ${pick(WORDS)}` },
          })),
        ],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage: usage(),
        stopReason: "toolUse",
        timestamp: clock,
        ...(pi1 ? { thinkingLevel: "medium", durationMs: 1000 + Math.floor(random() * 9000) } : {}),
      }),
    );
    for (let k = 0; k < calls && count < entries; k++) {
      const big = random() < 0.002;
      const image = random() < 0.005;
      add(
        sm.appendMessage({
          role: "toolResult",
          toolCallId: `call_${count}_${k}`,
          toolName: "bash",
          content: image
            ? [{ type: "image", data: base64(60_000), mimeType: "image/png" }]
            : [{ type: "text", text: prose(big ? 300_000 : budget * 0.95) }],
          isError: false,
          timestamp: clock,
          ...(pi1 ? { durationMs: Math.floor(random() * 3000) } : {}),
        }),
      );
    }
    if (sm.appendUsage && sm.appendContextEdit) {
      const r1 = random();
      if (r1 < 0.02) {
        const scratch = r1 < 0.01 ? null : prose(500);
        add(system({ skills: prose(3000), scratch }, [`tool_${count}`], ["ask"]));
      } else if (r1 < 0.04) add(sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage()).id);
      else if (r1 < 0.05) add(sm.appendContextEdit(ids[ids.length - 1], r1 < 0.045 ? null : { content: prose(200) }));
    }
    const r = random();
    if (r < 0.01 && ids.length > 20) sm.branch(ids[ids.length - 1 - Math.floor(random() * 10)]);
    else if (r < 0.015 && ids.length > 20) {
      add(sm.branchWithSummary(ids[ids.length - 5], prose(400)));
    } else if (r < 0.018 && ids.length > 40) {
      add(sm.appendCompaction(prose(2000), ids[ids.length - 8], 150_000));
    } else if (r < 0.021) add(sm.appendLabelChange(ids[ids.length - 1], `checkpoint ${count}`));
    else if (r < 0.023) add(sm.appendModelChange("openai", "gpt-5"));
  }
  const file = sm.getSessionFile();
  if (!file) throw new Error("pi did not write the session file");
  return file;
}

/**
 * Returns a cached generated session in `dir`, generating it once. With `flavor`, pi 1.x writes it,
 * in a child process under `flavor.node22` (the Node 22 binary).
 */
export function cachedSession(
  dir: string,
  entries = 20_000,
  megabytes = 40,
  flavor?: { pi1: true; node22: string },
): string {
  const name = join(dir, `bench-${flavor ? "pi1-" : ""}${entries}-${megabytes}mb.jsonl`);
  try {
    if (statSync(name).size > 0) return name;
  } catch {}
  const tmp = join(dir, `gen-${process.pid}`);
  const file = flavor
    ? execFileSync(flavor.node22, [import.meta.filename, tmp, String(entries), String(megabytes), "--pi1"], {
        encoding: "utf8",
      }).trim()
    : generateSession(tmp, entries, megabytes);
  renameSync(file, name);
  for (const f of readdirSync(tmp)) renameSync(join(tmp, f), join(tmp, `${f}.old`));
  return name;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out = ".bench", entries = "20000", mb = "40", flag] = process.argv.slice(2);
  const pi1 = flag === "--pi1" ? (await import("@earendil-works/pi-coding-agent")).SessionManager : undefined;
  console.log(
    generateSession(
      out,
      Number(entries),
      Number(mb),
      7,
      pi1 as { create(cwd: string, dir: string): Writer } | undefined,
    ),
  );
}
