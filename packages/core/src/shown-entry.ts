/**
 * What a page shows of one entry: the entry itself, or (nested too deep, or too large, to walk
 * safely) its text. Renderers, maskers and the worker hand-off (structured cloning) walk values
 * recursively: a line nested 5,000 deep, which `JSON.parse` reads, would overflow them all.
 */
import { deeperThan, type EntryRecord, stringifyJson } from "@pisync/format";
import { bounded, FIELD_LIMITS as L, RENDER_LIMITS } from "@pisync/protocol";
import type { PageEntry } from "@pisync/viewer";

/** The {@link PageEntry} of a record and its (masked) entry. */
export function shownEntry(record: EntryRecord, entry: Record<string, unknown>): PageEntry {
  const shown = { id: record.id as string, type: record.type as string, timestamp: record.timestamp };
  const why =
    record.length > RENDER_LIMITS.lineBytes
      ? `a line of ${record.length.toLocaleString("en-US")} bytes`
      : deeperThan(entry, RENDER_LIMITS.depth)
        ? `a line nested more than ${RENDER_LIMITS.depth} deep`
        : undefined;
  if (why === undefined) return { ...shown, entry: withNamesCut(entry) };
  const text = stringifyJson(entry, RENDER_LIMITS.textChars + 1) ?? "";
  const cut = text.length > RENDER_LIMITS.textChars;
  return { ...shown, entry: {}, asText: { why, text: cut ? text.slice(0, RENDER_LIMITS.textChars) : text, cut } };
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The entry with the names a page shows as facts (a session's name, a model, a thinking level,
 * a custom type) cut to their bounds; what it says (its content) is left to the renderer.
 */
function withNamesCut(entry: Json): Json {
  const cut = (value: Json, limits: Record<string, number>): Json => {
    const out = { ...value };
    for (const [key, max] of Object.entries(limits)) if (key in value) out[key] = bounded(value[key], max);
    return out;
  };
  switch (entry.type) {
    case "session_info":
      return cut(entry, { name: L.name });
    case "model_change":
      return cut(entry, { model: L.model, provider: L.model, modelId: L.model });
    case "thinking_level_change":
      return cut(entry, { thinkingLevel: L.token });
    case "custom_message":
      return cut(entry, { customType: L.token });
    case "message":
      return isJson(entry.message)
        ? { ...entry, message: cut(entry.message, { model: L.model, provider: L.model, customType: L.token }) }
        : entry;
    default:
      return entry;
  }
}
