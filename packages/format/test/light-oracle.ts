/**
 * The light index's oracle, the full reading: a file read by `parseSession` (light where it can)
 * and by `readSessionFile` (from disk) must answer exactly as `fullSession` does: header,
 * version, default leaf, labels, name, problems, every entry, and the context of its leaves with
 * what each build reported.
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { readSessionFile } from "../src/file.js";
import { buildSessionContext, type ParsedSession, type Problem, parseSession } from "../src/index.js";
import { LightIndex } from "../src/light-index.js";
import { fullSession } from "../src/parse.js";

/** A value with its long strings shortened to their start, length and digest (a failure prints small). */
export function short(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_, v) =>
      typeof v === "string" && v.length > 200
        ? `${v.slice(0, 20)}… (${v.length} chars, ${createHash("sha256").update(v).digest("hex").slice(0, 12)})`
        : v,
    ),
  );
}

/** What a reading answers, with the contexts of these leaves and what each build reported. */
function reading(session: ParsedSession, leaves: (string | undefined)[]) {
  return short({
    header: session.header,
    version: session.version,
    leafId: session.leafId,
    labels: [...session.labels],
    name: session.name,
    problems: session.problems,
    contexts: leaves.map((leaf) => {
      const problems: Problem[] = [];
      const context = buildSessionContext(session, leaf, { onProblem: (p) => problems.push(p) });
      return { leaf, context, problems };
    }),
    // What needs every entry comes from the full reading.
    entries: session.entries,
  });
}

/**
 * A check of files against the full reading (each written to `dir` for `readSessionFile`):
 * answers whether the light index read the file.
 */
export function lightOracle(dir: string): (bytes: Uint8Array) => boolean {
  let files = 0;
  return (bytes) => {
    const path = join(dir, `${files++}.jsonl`);
    writeFileSync(path, bytes);
    const full = fullSession(bytes);
    const ids = [...new Set(full.index.records.map((r) => r.id))];
    // Every leaf of a small file; of a large one, forty spread over it (a leaf's context walks its whole path).
    const step = Math.max(1, Math.ceil(ids.length / 40));
    const leaves = [...ids.filter((_, i) => i % step === 0 || i === ids.length - 1), undefined, "no-such-entry"];
    const want = reading(full, leaves);
    expect(reading(parseSession(bytes), leaves)).toEqual(want);
    expect(reading(readSessionFile(path), leaves)).toEqual(want);
    return LightIndex.of(bytes) !== undefined;
  };
}
