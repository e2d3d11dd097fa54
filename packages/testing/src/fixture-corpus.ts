/** Finds the fixture sessions: the set kept in this repo, and pi's full corpus when it sits beside the repo. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

export interface Fixture {
  name: string;
  jsonl: string;
  expected: Expected;
}

export interface Expected {
  notes?: string[];
  header?: Record<string, unknown>;
  sessionId?: string;
  sessionName?: string;
  entryCount?: number;
  defaultLeafId?: string | null;
  defaultLeafKey?: string;
  labels?: Record<string, string>;
  leafIds?: (string | null)[];
  pathLengths?: Record<string, number>;
  contexts?: Record<string, unknown>;
  fileRewrittenByOpen?: boolean;
  piThrows?: unknown;
  piHangs?: boolean;
  specDerived?: { contexts: Record<string, unknown[]> };
  tree?: { id?: string; parentId?: string | null; children: string[]; label?: string }[];
}

const here = new URL(".", import.meta.url).pathname;
export const inRepoCorpus = join(here, "../fixtures");
/** pi's full fixture corpus, present for developers and CI beside the repository. */
export const sharedCorpus = resolve(here, "../../../../shared/fixtures/pi-0.73.1");

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".jsonl") ? [join(dir, d.name)] : [],
  );
}

export function loadCorpus(root: string): Fixture[] {
  if (!existsSync(root)) return [];
  return walk(root)
    .filter((jsonl) => existsSync(jsonl.replace(/\.jsonl$/, ".expected.json")))
    .map((jsonl) => ({
      name: relative(root, jsonl),
      jsonl,
      expected: JSON.parse(readFileSync(jsonl.replace(/\.jsonl$/, ".expected.json"), "utf8")) as Expected,
    }));
}

/** Files pi cannot read at all (it overwrites them, hangs, or throws on open): no answer of pi's to compare. */
export const PI_HAS_NO_ANSWER = new Set([
  "bad-header.jsonl",
  "omp-title-slot.jsonl",
  "zero-byte.jsonl",
  "parent-cycle.jsonl",
  "null-line.jsonl",
]);

export function baseName(fixture: Fixture): string {
  return fixture.name.split("/").pop() ?? fixture.name;
}

/**
 * The one rule where pi 1.x answers differently for a file 0.73.1 could write: a user, assistant
 * or tool-result message with null content is read as `[]` (0.73.1 passed the null through).
 * Both write header version 3, so the file cannot say which rule its writer meant: the 1.x rule
 * applies. This turns 0.73.1's recorded answer into 1.x's; nothing else changes.
 */
export function withNullContentAsEmpty(context: unknown): unknown {
  const c = context as { messages?: { role?: unknown; content?: unknown }[] };
  if (!Array.isArray(c.messages)) return context;
  const roles = new Set(["user", "assistant", "toolResult"]);
  return {
    ...c,
    messages: c.messages.map((m) => (roles.has(m.role as string) && m.content === null ? { ...m, content: [] } : m)),
  };
}

/**
 * pi's recorded contexts that a faithful reader must reproduce, as [leaf, expected] pairs:
 * leaf `undefined` is the default leaf. Left out: leaves where pi threw, v1 leaves other than
 * the default (pi's v1 ids are random), and leaves after a compaction with retainedTail (the
 * newer spec answers there; `specDerived` holds that answer, used instead when present). pi
 * 0.73.1's null content is given as pi 1.x reads it (see {@link withNullContentAsEmpty}). Where
 * the file's last value has no id, the default leaf's expected context is pi's for the last
 * entry with an id (see {@link leafWherePiHasNone}).
 */
export function comparableContexts(
  fixture: Fixture,
  isV1: boolean,
  followsRetainedTail: (leafId: string) => boolean,
): [leafId: string | null | undefined, expected: unknown, compare: "context" | "messages"][] {
  const expected = fixture.expected;
  const out: [string | null | undefined, unknown, "context" | "messages"][] = [];
  const ruleLeaf = isV1 ? undefined : leafWherePiHasNone(readFileSync(fixture.jsonl, "utf8"));
  for (const [key, recorded] of Object.entries(expected.contexts ?? {})) {
    const isDefault = key === expected.defaultLeafKey;
    const want = ruleLeaf !== undefined && isDefault ? expected.contexts?.[ruleLeaf] : recorded;
    if (isV1 && !isDefault) continue;
    if ((want as { piThrows?: unknown }).piThrows) continue;
    const leafId = key === "null" ? null : key === "undefined" || (isV1 && isDefault) ? undefined : key;
    const spec = expected.specDerived?.contexts[key];
    if (spec) out.push([leafId, spec, "messages"]);
    else if (expected.specDerived && leafId && followsRetainedTail(leafId)) continue;
    else out.push([leafId, withNullContentAsEmpty(want), "context"]);
  }
  return out;
}

/**
 * The one documented difference from pi's default leaf (docs/format.md): when a file's last
 * value has no id (`{}`, `42`, a title slot), pi takes it as the leaf and answers an empty
 * context; pisync's leaf is the last entry with an id. Answers that entry's id in that case
 * (compare against pi's context for it), else undefined (pi's default leaf is pisync's).
 */
export function leafWherePiHasNone(text: string): string | undefined {
  const values: unknown[] = [];
  for (const line of text.split(/\r?\n/).slice(1)) {
    try {
      if (line.trim()) values.push(JSON.parse(line));
    } catch {}
  }
  const hasId = (v: unknown) => typeof v === "object" && v !== null && typeof (v as { id?: unknown }).id === "string";
  if (values.length === 0 || hasId(values.at(-1))) return undefined;
  const last = values.findLast(hasId) as { id: string } | undefined;
  return last?.id;
}
