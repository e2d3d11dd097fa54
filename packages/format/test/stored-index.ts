/** The index a store rebuilds from its records alone, for tests of `recordsForContext`. */
import { type LineRecord, type ParsedSession, recordsForContext, SessionIndex } from "../src/index.js";

/**
 * An index made of a session's records (as a store keeps them), primed with only the entries
 * `recordsForContext` names for `leafId`: reading any other entry throws.
 */
export function storedIndexFor(session: ParsedSession, text: string, leafId: string | undefined): SessionIndex {
  const records = session.index.records.map(({ index: _i, v1: _v, ...r }) => structuredClone(r) as LineRecord);
  const index = new SessionIndex({
    header: session.header,
    version: session.version,
    records,
    problems: [],
    completeLength: text.length,
    load: (record) => {
      throw new Error(`line ${record.line} was not loaded`);
    },
  });
  const lines = text.split("\n");
  index.prime(recordsForContext(index, leafId).map((r) => [r.line, JSON.parse(lines[r.line - 1])]));
  return index;
}
