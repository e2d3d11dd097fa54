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
export const inRepoCorpus = join(here, "fixtures");
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
