/**
 * JSON of values nested deeper than the call stack allows. `JSON.parse` reads a line nested
 * 10,000 deep (pi keeps such a line, and its context holds the value), but `JSON.stringify`,
 * structured cloning and every recursive walk overflow the stack on it. These walk with a
 * stack of their own.
 */

/** One open container of {@link stringifyJson}: its members still to write. */
interface Frame {
  close: "]" | "}";
  keys?: string[];
  items: unknown[] | Record<string, unknown>;
  at: number;
  wrote: boolean;
}

/** What `JSON.stringify` does to a value before writing it: `toJSON`, then boxed primitives unboxed. */
function prepared(value: unknown, key: string): unknown {
  let v = value;
  if (v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function") {
    v = (v as { toJSON(key: string): unknown }).toJSON(key);
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  return v;
}

/** Whether `JSON.stringify` leaves a member out (in an array it writes `null` instead). */
const skipped = (v: unknown) => v === undefined || typeof v === "function" || typeof v === "symbol";

/**
 * `JSON.stringify(value)`'s text at any depth (no replacer, no indent). Up to `maxChars` only
 * when given: the text is then cut there (for a bounded preview of a huge value).
 * @throws TypeError where `JSON.stringify` throws (a BigInt, a cycle)
 */
export function stringifyJson(value: unknown, maxChars = Number.POSITIVE_INFINITY): string | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined || text.length <= maxChars ? text : text.slice(0, maxChars);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  const out: string[] = [];
  let length = 0;
  const write = (text: string) => {
    out.push(text);
    length += text.length;
  };
  const stack: Frame[] = [];
  const open = new Set<object>();
  /** Writes a prepared primitive, or opens a container (its members are written by the loop). */
  const begin = (v: unknown): boolean => {
    if (v === null || typeof v !== "object") {
      const text = JSON.stringify(v);
      if (text === undefined) return false;
      write(text);
      return true;
    }
    if (open.has(v)) throw new TypeError("Converting circular structure to JSON");
    open.add(v);
    if (Array.isArray(v)) {
      write("[");
      stack.push({ close: "]", items: v, at: 0, wrote: false });
    } else {
      write("{");
      stack.push({ close: "}", items: v as Record<string, unknown>, keys: Object.keys(v), at: 0, wrote: false });
    }
    return true;
  };
  if (!begin(prepared(value, ""))) return undefined;
  while (stack.length && length < maxChars) {
    const frame = stack[stack.length - 1];
    if (frame.keys) {
      const record = frame.items as Record<string, unknown>;
      if (frame.at >= frame.keys.length) {
        write("}");
        open.delete(record);
        stack.pop();
        continue;
      }
      const key = frame.keys[frame.at++];
      const member = prepared(record[key], key);
      if (skipped(member)) continue;
      write(`${frame.wrote ? "," : ""}${JSON.stringify(key)}:`);
      frame.wrote = true;
      begin(member);
    } else {
      const items = frame.items as unknown[];
      if (frame.at >= items.length) {
        write("]");
        open.delete(items);
        stack.pop();
        continue;
      }
      const index = frame.at++;
      if (index > 0) write(",");
      const member = prepared(items[index], String(index));
      if (skipped(member)) write("null");
      else begin(member);
    }
  }
  const text = out.join("");
  return text.length <= maxChars ? text : text.slice(0, maxChars);
}

/**
 * Whether `value` holds arrays or objects nested more than `max` deep (a walk that stops as
 * soon as it knows, with a stack of its own).
 */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > max) return true;
    for (const member of Array.isArray(v) ? v : Object.values(v)) {
      if (member !== null && typeof member === "object") stack.push([member, depth + 1]);
    }
  }
  return false;
}
