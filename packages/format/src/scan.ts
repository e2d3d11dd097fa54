/**
 * A validating JSON scanner for one line, that decodes only the small top-level fields the
 * tree index needs (type, id, parentId, ...) and skips everything else without building it.
 *
 * Why: pi `JSON.parse`s every line in full (twice); most bytes of a session are message
 * content that only matters for entries on the path being rebuilt. The scanner still checks
 * the whole line against the JSON grammar, so it accepts exactly the lines `JSON.parse`
 * accepts (whitespace, escapes, control characters, numbers, nesting) and pi's skipping of
 * broken lines is reproduced.
 */

/** Top-level scalar fields captured from an object line; `undefined` when absent. */
export class Envelope {
  type: unknown = undefined;
  id: unknown = undefined;
  parentId: unknown = undefined;
  timestamp: unknown = undefined;
  /** `message.role` of a message entry. */
  role: unknown = undefined;
  /** `message.provider` / `message.model` of a message entry. */
  messageProvider: unknown = undefined;
  messageModel: unknown = undefined;
  targetId: unknown = undefined;
  label: unknown = undefined;
  name: unknown = undefined;
  provider: unknown = undefined;
  modelId: unknown = undefined;
  model: unknown = undefined;
  thinkingLevel: unknown = undefined;
  customType: unknown = undefined;
  firstKeptEntryIndex: unknown = undefined;
  version: unknown = undefined;
  /** Present keys of interest whose value is an object or array (so not captured above). */
  hasComplexField = false;
  /** Whether a `message` key exists, and whether its value is an object. */
  hasMessage = false;
  messageIsObject = false;
  messageIsNull = false;
}

/** What a scanned line holds. */
export type ScanResult =
  | { kind: "object"; envelope: Envelope }
  | { kind: "null" }
  | { kind: "other" }
  | { kind: "invalid"; at: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

class Invalid {
  constructor(readonly at: number) {}
}

const textDecoder = new TextDecoder("utf-8");

/** JSON whitespace: space, tab, CR, LF. */
function skipWs(b: Uint8Array, pos: number, end: number): number {
  while (pos < end) {
    const c = b[pos];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) break;
    pos++;
  }
  return pos;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Byte classes inside a string: 0 plain ASCII, 1 quote, 2 backslash, 3 control, 4 above 0x7f. */
const STRING_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_CLASS[c] = 3;
STRING_CLASS[QUOTE] = 1;
STRING_CLASS[BACKSLASH] = 2;
for (let c = 0x80; c < 0x100; c++) STRING_CLASS[c] = 4;

/**
 * Skips a string whose opening quote is at `pos`; returns the position after the closing quote.
 * Sets `lastStringSimple` when it had no escape and no byte above 0x7f.
 */
let lastStringSimple = true;
function skipString(b: Uint8Array, pos: number, end: number): number {
  let simple = true;
  let i = pos + 1;
  for (;;) {
    // The hot loop of the whole reader: most bytes of a session are inside strings. No bounds
    // test: past `end` sits the line's `\n` (class 3) or, at the end of the array, `undefined`
    // (no class); either stops the loop, and the test below rejects it.
    let cls = 0;
    while ((cls = STRING_CLASS[b[i]]) === 0) i++;
    if (i >= end) throw new Invalid(end);
    if (cls === 1) {
      lastStringSimple = simple;
      return i + 1;
    }
    if (cls === 4) {
      simple = false;
      i++;
      continue;
    }
    if (cls === 3) throw new Invalid(i);
    // A backslash: one of \" \\ \/ \b \f \n \r \t, or \u and four hex digits.
    simple = false;
    const e = b[i + 1];
    if (e === 0x75) {
      if (i + 5 >= end || !isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) {
        throw new Invalid(i);
      }
      i += 6;
    } else if (
      e === QUOTE ||
      e === BACKSLASH ||
      e === 0x2f ||
      e === 0x62 ||
      e === 0x66 ||
      e === 0x6e ||
      e === 0x72 ||
      e === 0x74
    ) {
      i += 2;
    } else throw new Invalid(i);
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Skips a number per the JSON grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
function skipNumber(b: Uint8Array, pos: number, end: number): number {
  let i = pos;
  if (b[i] === 0x2d) i++;
  if (i >= end) throw new Invalid(i);
  if (b[i] === 0x30) i++;
  else if (b[i] >= 0x31 && b[i] <= 0x39) while (i < end && isDigit(b[i])) i++;
  else throw new Invalid(i);
  if (i < end && b[i] === 0x2e) {
    i++;
    if (i >= end || !isDigit(b[i])) throw new Invalid(i);
    while (i < end && isDigit(b[i])) i++;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    if (i >= end || !isDigit(b[i])) throw new Invalid(i);
    while (i < end && isDigit(b[i])) i++;
  }
  return i;
}

function skipLiteral(b: Uint8Array, pos: number, end: number, word: string): number {
  if (pos + word.length > end) throw new Invalid(pos);
  for (let k = 0; k < word.length; k++) if (b[pos + k] !== word.charCodeAt(k)) throw new Invalid(pos + k);
  return pos + word.length;
}

/** Skips any JSON value starting at `pos` (no leading whitespace); iterative, so depth is unbounded. */
function skipValue(b: Uint8Array, pos: number, end: number): number {
  // Stack of open containers: true = object, false = array.
  const stack: boolean[] = [];
  let i = pos;
  for (;;) {
    // Expect a value at i.
    if (i >= end) throw new Invalid(i);
    const c = b[i];
    if (c === QUOTE) i = skipString(b, i, end);
    else if (c === OPEN_BRACE) {
      i = skipWs(b, i + 1, end);
      if (b[i] === CLOSE_BRACE) i++;
      else {
        stack.push(true);
        i = readKeyColon(b, i, end);
        continue;
      }
    } else if (c === OPEN_BRACKET) {
      i = skipWs(b, i + 1, end);
      if (b[i] === CLOSE_BRACKET) i++;
      else {
        stack.push(false);
        continue;
      }
    } else if (c === 0x74) i = skipLiteral(b, i, end, "true");
    else if (c === 0x66) i = skipLiteral(b, i, end, "false");
    else if (c === 0x6e) i = skipLiteral(b, i, end, "null");
    else if (c === 0x2d || isDigit(c)) i = skipNumber(b, i, end);
    else throw new Invalid(i);
    // After a value: close containers or move to the next element.
    for (;;) {
      if (stack.length === 0) return i;
      i = skipWs(b, i, end);
      const d = b[i];
      const inObject = stack[stack.length - 1];
      if (d === COMMA) {
        i = skipWs(b, i + 1, end);
        if (inObject) i = readKeyColon(b, i, end);
        break;
      }
      if ((inObject && d === CLOSE_BRACE) || (!inObject && d === CLOSE_BRACKET)) {
        stack.pop();
        i++;
        continue;
      }
      throw new Invalid(i);
    }
  }
}

/** Reads `"key" :` and the whitespace after it; returns the position of the value. */
function readKeyColon(b: Uint8Array, pos: number, end: number): number {
  if (b[pos] !== QUOTE) throw new Invalid(pos);
  let i = skipWs(b, skipString(b, pos, end), end);
  if (b[i] !== COLON) throw new Invalid(i);
  i = skipWs(b, i + 1, end);
  return i;
}

/** Decodes the string literal spanning [start, end) (quotes included). */
function decodeString(b: Uint8Array, start: number, end: number, simple: boolean): string {
  if (simple && end - start < 256) {
    let s = "";
    for (let k = start + 1; k < end - 1; k++) s += String.fromCharCode(b[k]);
    return s;
  }
  return JSON.parse(textDecoder.decode(b.subarray(start, end))) as string;
}

/** Reads a scalar value at `pos` into `out[0]`; returns its end, or -1 when it is a container. */
function readScalar(b: Uint8Array, pos: number, end: number, out: unknown[]): number {
  const c = b[pos];
  if (c === QUOTE) {
    const e = skipString(b, pos, end);
    out[0] = decodeString(b, pos, e, lastStringSimple);
    return e;
  }
  if (c === 0x74) {
    out[0] = true;
    return skipLiteral(b, pos, end, "true");
  }
  if (c === 0x66) {
    out[0] = false;
    return skipLiteral(b, pos, end, "false");
  }
  if (c === 0x6e) {
    out[0] = null;
    return skipLiteral(b, pos, end, "null");
  }
  if (c === 0x2d || isDigit(c)) {
    const e = skipNumber(b, pos, end);
    let s = "";
    for (let k = pos; k < e; k++) s += String.fromCharCode(b[k]);
    out[0] = Number(s);
    return e;
  }
  return -1;
}

function keyText(b: Uint8Array, start: number, end: number): string {
  return decodeString(b, start, end, lastStringSimple);
}

type Capture = (env: Envelope, key: string, value: unknown) => boolean;

const TOP_KEYS: Record<string, (env: Envelope, v: unknown) => void> = {
  type: (e, v) => {
    e.type = v;
  },
  id: (e, v) => {
    e.id = v;
  },
  parentId: (e, v) => {
    e.parentId = v;
  },
  timestamp: (e, v) => {
    e.timestamp = v;
  },
  targetId: (e, v) => {
    e.targetId = v;
  },
  label: (e, v) => {
    e.label = v;
  },
  name: (e, v) => {
    e.name = v;
  },
  provider: (e, v) => {
    e.provider = v;
  },
  modelId: (e, v) => {
    e.modelId = v;
  },
  model: (e, v) => {
    e.model = v;
  },
  thinkingLevel: (e, v) => {
    e.thinkingLevel = v;
  },
  customType: (e, v) => {
    e.customType = v;
  },
  firstKeptEntryIndex: (e, v) => {
    e.firstKeptEntryIndex = v;
  },
  version: (e, v) => {
    e.version = v;
  },
};

const MESSAGE_KEYS: Record<string, (env: Envelope, v: unknown) => void> = {
  role: (e, v) => {
    e.role = v;
  },
  provider: (e, v) => {
    e.messageProvider = v;
  },
  model: (e, v) => {
    e.messageModel = v;
  },
};

const captureTop: Capture = (env, key, value) => {
  const set = Object.hasOwn(TOP_KEYS, key) ? TOP_KEYS[key] : undefined;
  if (!set) return false;
  set(env, value);
  return true;
};

const captureMessage: Capture = (env, key, value) => {
  const set = Object.hasOwn(MESSAGE_KEYS, key) ? MESSAGE_KEYS[key] : undefined;
  if (!set) return false;
  set(env, value);
  return true;
};

/**
 * Scans the members of an object whose `{` is at `pos`, capturing scalars of interest via
 * `capture`; `message` members at the top level are scanned one level deeper.
 */
function scanObject(b: Uint8Array, pos: number, end: number, env: Envelope, capture: Capture, top: boolean): number {
  const scalar: unknown[] = [undefined];
  let i = skipWs(b, pos + 1, end);
  if (b[i] === CLOSE_BRACE) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) throw new Invalid(i);
    const keyEnd = skipString(b, i, end);
    const key = keyText(b, i, keyEnd);
    i = skipWs(b, keyEnd, end);
    if (b[i] !== COLON) throw new Invalid(i);
    i = skipWs(b, i + 1, end);
    if (top && key === "message") {
      env.hasMessage = true;
      env.messageIsNull = b[i] === 0x6e;
      if (b[i] === OPEN_BRACE) {
        env.messageIsObject = true;
        env.role = env.messageProvider = env.messageModel = undefined;
        i = scanObject(b, i, end, env, captureMessage, false);
      } else {
        env.messageIsObject = false;
        env.role = env.messageProvider = env.messageModel = undefined;
        i = skipValue(b, i, end);
      }
    } else {
      const e = readScalar(b, i, end, scalar);
      if (e >= 0) {
        capture(env, key, scalar[0]);
        i = e;
      } else {
        if (capture(env, key, undefined)) env.hasComplexField = true;
        i = skipValue(b, i, end);
      }
    }
    i = skipWs(b, i, end);
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1, end);
      continue;
    }
    if (b[i] === CLOSE_BRACE) return i + 1;
    throw new Invalid(i);
  }
}

/**
 * Scans the JSON value in `b[start, end)`: valid exactly when `JSON.parse` would accept the
 * same text. For an object, returns the captured {@link Envelope}.
 */
export function scanLine(b: Uint8Array, start: number, end: number): ScanResult {
  try {
    let i = skipWs(b, start, end);
    if (i >= end) return { kind: "invalid", at: i };
    let result: ScanResult;
    if (b[i] === OPEN_BRACE) {
      const envelope = new Envelope();
      i = scanObject(b, i, end, envelope, captureTop, true);
      result = { kind: "object", envelope };
    } else if (b[i] === 0x6e && b[i + 1] === 0x75) {
      i = skipLiteral(b, i, end, "null");
      result = { kind: "null" };
    } else {
      i = skipValue(b, i, end);
      result = { kind: "other" };
    }
    i = skipWs(b, i, end);
    if (i !== end) return { kind: "invalid", at: i };
    return result;
  } catch (error) {
    if (error instanceof Invalid) return { kind: "invalid", at: error.at };
    throw error;
  }
}
