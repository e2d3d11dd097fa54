/**
 * Writes the pi 1.x corpus (fixtures/pi-1.6.0/ of this package) with pi 1.6.0's own SessionManager, persisted
 * as pi writes its files. Run it again only to change the corpus; the files are committed and the
 * test asks pi for its answers live.
 *
 *   node --import tsx packages/testing/src/pi1/generate-corpus.ts
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Op, piWrite } from "./pi1.js";

const out = fileURLToPath(new URL("../../fixtures/pi-1.6.0/", import.meta.url));

const PREAMBLE =
  "You are an expert coding assistant. You help users by reading files, executing commands and writing code.";
const sections = {
  preamble: "<preamble>\nBe concise. Show file paths clearly.\n</preamble>",
  tools: "<tools>\n- read: read a file\n- bash: run a command\n- edit: edit a file\n</tools>",
  cwd: "<cwd>/home/dev/project</cwd>",
};
const fullSystem: Op = { kind: "system", content: PREAMBLE, sections, toolsAdded: [0, 2, 3] };
const user = (text: string, as?: string): Op => ({ kind: "user", text, as });
const assistant = (text: string, as?: string, extra: Record<string, unknown> = {}): Op => ({
  kind: "assistant",
  text,
  model: 0,
  as,
  ...extra,
});

/** Each corpus file: what it exercises, and the program pi runs to write it. */
const programs: Record<string, Op[]> = {
  // System messages: the whole prompt first, then patches; usage entries; 1.x message fields; null content.
  "system-prompts": [
    { ...fullSystem, as: "sys" },
    user("List the files in src/", "u1"),
    assistant("Running ls.", "a1", { thinkingLevel: "medium", durationMs: 1840 }),
    { kind: "tool", text: "index.ts\nutil.ts", nested: true, durationMs: 35, as: "t1" },
    assistant("There are two files.", "a2", { thinkingLevel: "medium", durationMs: 920 }),
    { kind: "usage", usageKind: "cache_warm", model: 0, n: 5000 },
    {
      kind: "system",
      content: "",
      sections: { skills: "<skills>\n- refactor: split large modules\n</skills>", cwd: null },
      toolsAdded: [4],
      toolsRemoved: [2],
      as: "sys2",
    },
    user("Now grep for TODO", "u2"),
    assistant("Found three.", "a3", { durationMs: 400 }),
    { kind: "usage", usageKind: "rerank", model: 1, n: 120, note: "an unknown kind is ordinary usage" },
    { kind: "user", text: "", nullContent: true, as: "u3" },
    assistant("Your message was empty.", "a4"),
    { kind: "thinking", level: "high" },
    { kind: "model", model: 1 },
  ],
  // Context edits: removal and replacement, the latest on the branch wins, edits on another branch,
  // of entries that give no content, of an entry that is not in the file.
  "context-edits": [
    { ...fullSystem, as: "sys" },
    user("Read config.json", "u1"),
    assistant("Reading it.", "a1"),
    { kind: "tool", text: '{"secret":"sk-live-123"}', as: "t1" },
    assistant("It holds a key.", "a2"),
    { kind: "customMessage", text: "extension note", display: true, as: "cm" },
    { kind: "edit", ref: "t1", replacement: null, as: "e1" },
    { kind: "edit", ref: "a2", replacement: "It holds a key (redacted).", as: "e2" },
    { kind: "edit", ref: "u1", replacement: "array", as: "e3" },
    { kind: "edit", ref: "u1", replacement: "Read the config file", as: "e4" },
    { kind: "edit", ref: "cm", replacement: [{ type: "text", text: "edited note" }] },
    user("Thanks", "u2"),
    assistant("You are welcome.", "a3"),
    // Back before the edits: the original contents again.
    { kind: "branch", ref: "a2" },
    user("Show it again", "u3"),
    assistant("Here it is.", "a4"),
    // Edits pi's API refuses, written by another hand: an entry on the other branch, a system
    // message (no editable content), an id not in the file.
    { kind: "edit", ref: "a3", replacement: null },
    { kind: "edit", ref: "u1", replacement: null, as: "e5" },
    { kind: "edit", ref: "sys", replacement: "a new prompt" },
    { kind: "edit", ref: "cm", replacement: "replaced on this branch" },
    { kind: "edit", targetOffFile: true, replacement: null },
    user("And the system prompt?", "u4"),
    assistant("It stays.", "a5"),
  ],
  // Compactions: with systemMessage (system messages on the path) and without (a new root that has
  // none), one that keeps nothing, system messages inside the kept range, edits around them.
  compactions: [
    { ...fullSystem, as: "sys" },
    user("Start the refactor", "u1"),
    assistant("Starting.", "a1"),
    user("Split util.ts", "u2"),
    assistant("Split into three.", "a2"),
    { kind: "system", content: "Be brief from now on.", sections: { style: "<style>terse</style>" }, as: "sys2" },
    user("Run the tests", "u3"),
    { kind: "edit", ref: "a1", replacement: null },
    assistant("All green.", "a3"),
    { kind: "compaction", ref: "u2", summary: "Refactor started; util.ts split.", as: "c1" },
    { kind: "edit", ref: "u3", replacement: "Run the unit tests" },
    { kind: "edit", ref: "u1", replacement: null },
    user("Commit it", "u4"),
    assistant("Committed.", "a4"),
    { kind: "compaction", keep: "none", summary: "Refactor committed.", as: "c2" },
    user("What next?", "u5"),
    assistant("Docs.", "a5"),
    // An edit of the compaction itself: pi's API refuses it; pi's reader drops the checkpoint.
    { kind: "branch", ref: "a4" },
    { kind: "compaction", ref: "a4", summary: "Kept the last answer.", as: "c3" },
    { kind: "edit", ref: "c3", replacement: null },
    user("Summarize", "u6"),
    assistant("Done.", "a6"),
    // A new root without system messages: its compaction has no systemMessage.
    { kind: "reset" },
    user("Fresh start", "r1"),
    assistant("Hello again.", "r2"),
    user("More", "r3"),
    assistant("Sure.", "r4"),
    { kind: "compaction", ref: "r3", summary: "A fresh start.", as: "c4" },
    user("Continue", "r5"),
    assistant("Continuing.", "r6"),
    { kind: "compaction", keep: "offPath", summary: "The kept id is not on the path." },
    user("Last one", "r7"),
  ],
  // Branches, branch summaries, labels, a name, custom entries, thinking and model changes.
  branches: [
    fullSystem,
    { kind: "thinking", level: "low" },
    user("Plan the feature", "u1"),
    assistant("Plan A or B.", "a1"),
    user("Try A", "u2"),
    assistant("A done.", "a2", { thinkingLevel: "low", durationMs: 1200 }),
    { kind: "label", ref: "a2", label: "plan-a" },
    { kind: "branchSummary", ref: "a1", summary: "Tried plan A: too slow." },
    { kind: "system", content: "", toolsAdded: [1], sections: { plan: "<plan>B</plan>" } },
    user("Try B", "u3"),
    { kind: "custom", data: 7 },
    { kind: "customMessage", text: "B is the one", display: false },
    assistant("B done.", "a3", { model: 2 }),
    { kind: "name", name: "Feature plans" },
    { kind: "branchSummary", ref: "u1", summary: "" },
    assistant("Back at the start.", "a4"),
  ],
};

mkdirSync(out, { recursive: true });
const names = Object.keys(programs);
const written = piWrite(Object.values(programs), { persist: true });
written.forEach(({ text }, i) => {
  writeFileSync(join(out, `${names[i]}.jsonl`), text);
  console.log(`${names[i]}.jsonl: ${text.split("\n").length - 1} lines`);
});
