/*
 * The skeleton of one JSONL line, for the tree index: a validating JSON scan that writes out
 * only the fields the index reads.
 *
 * skeleton() checks the line against JSON's grammar exactly as JSON.parse does (RFC 8259:
 * whitespace is space, tab, CR, LF; numbers, literals, strings with their escapes; any
 * nesting; one value per line), and answers -1 when JSON.parse would refuse it. Bytes >= 0x80
 * are accepted inside strings only: JSON.parse sees them as text whatever they decode to, and
 * UTF-8 decoding never swallows a '"' or a '\'.
 *
 * For a valid line whose value is an object (an entry), it writes a smaller object that
 * JSON.parse reads to the same record: the members the index reads, their values verbatim
 * (type, id, parentId, timestamp and the facts of lines.ts, whatever they hold), `message` with
 * only its role, provider and model, `retainedTail` as [] when it is an array (only whether it
 * is one is read). The skeleton is never longer than the line. For a key written twice, the last one, as JSON.parse does. Members come out in one
 * fixed order, so the objects JSON.parse makes share a few shapes and reading them stays fast.
 * A line with an escaped key (which may spell one of those names) and any value that is not
 * an object are written whole. Most of a session's bytes (message text, tool output, images)
 * and most of its structure (content blocks, usage) never become JavaScript values.
 *
 * Build: scripts/build-wasm.sh (clang, wasm32 with SIMD and bulk memory).
 */
#include <wasm_simd128.h>

typedef unsigned char u8;

static int is_hex(u8 c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static int is_digit(u8 c) { return c >= '0' && c <= '9'; }

static const u8 *skip_space(const u8 *p, const u8 *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
  return p;
}

static int equals(const u8 *k, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (name[i] == 0 || k[i] != (u8)name[i]) return 0;
  return name[n] == 0;
}

/* Entry members the tree index reads (lines.ts: recordOf and factsOf). */
static const char *const ENTRY_FIELDS[] = {"type",     "id",      "parentId",         "timestamp",
                                           "targetId", "label",   "name",             "thinkingLevel",
                                           "provider", "modelId", "firstKeptEntryId", "firstKeptEntryIndex",
                                           0};
/* Members of an entry's message the index reads. */
static const char *const MESSAGE_FIELDS[] = {"role", "provider", "model", 0};

static int is_one_of(const u8 *k, int n, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (equals(k, n, names[i])) return 1;
  return 0;
}

/*
 * Scans a string body starting just after its opening quote. Returns the position of the
 * closing quote, or 0 when the body is invalid or unterminated; sets *escaped when it holds a
 * backslash. The input has 16 readable bytes past `end`.
 */
static const u8 *scan_string(const u8 *p, const u8 *end, int *escaped) {
  const v128_t quote = wasm_i8x16_splat('"');
  const v128_t backslash = wasm_i8x16_splat('\\');
  const v128_t space = wasm_i8x16_splat(0x20);
  for (;;) {
    if (p >= end) return 0;
    v128_t bytes = wasm_v128_load(p);
    v128_t stop = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(bytes, quote), wasm_i8x16_eq(bytes, backslash)),
                               wasm_u8x16_lt(bytes, space));
    int mask = wasm_i8x16_bitmask(stop);
    if (mask == 0) {
      p += 16;
      continue;
    }
    p += __builtin_ctz(mask);
    if (p >= end) return 0;
    u8 c = *p;
    if (c == '"') return p;
    if (c < 0x20) return 0;
    /* A backslash: one of "\/bfnrt, or u and four hex digits. */
    *escaped = 1;
    if (p + 1 >= end) return 0;
    u8 e = p[1];
    if (e == 'u') {
      if (p + 5 >= end || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) || !is_hex(p[5])) return 0;
      p += 6;
    } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
      p += 2;
    } else {
      return 0;
    }
  }
}

/* A number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; 0 when malformed. */
static const u8 *scan_number(const u8 *p, const u8 *end) {
  if (p < end && *p == '-') p++;
  if (p >= end) return 0;
  if (*p == '0') {
    p++;
  } else if (*p >= '1' && *p <= '9') {
    while (p < end && is_digit(*p)) p++;
  } else {
    return 0;
  }
  if (p < end && *p == '.') {
    p++;
    if (p >= end || !is_digit(*p)) return 0;
    while (p < end && is_digit(*p)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || !is_digit(*p)) return 0;
    while (p < end && is_digit(*p)) p++;
  }
  return p;
}

static const u8 *scan_literal(const u8 *p, const u8 *end, const char *word) {
  for (; *word; word++, p++)
    if (p >= end || *p != (u8)*word) return 0;
  return p;
}

static u8 *emit(u8 *o, const u8 *from, const u8 *to) {
  __builtin_memcpy(o, from, (unsigned long)(to - from));
  return o + (to - from);
}

enum { OBJECT = 1, ARRAY = 2 };
enum { EXPECT_VALUE, EXPECT_VALUE_OR_CLOSE, EXPECT_KEY, EXPECT_KEY_OR_CLOSE, AFTER_VALUE };
#define ENTRY_COUNT 12
#define MESSAGE_COUNT 3
/* Kinds of entry members past the ENTRY_FIELDS (whose kind is their index). */
enum { DROP = -1, MESSAGE = ENTRY_COUNT, RETAINED_TAIL = ENTRY_COUNT + 1 };

static u8 *emit_name(u8 *o, const char *name) {
  *o++ = '"';
  while (*name) *o++ = (u8)*name++;
  *o++ = '"';
  *o++ = ':';
  return o;
}

/*
 * Checks line [in, in + length) and writes its skeleton to `out` (room for `length` bytes).
 * `stack` has room for `length` bytes (one per open bracket). Returns the skeleton's length,
 * or -1 when JSON.parse would refuse the line.
 */
__attribute__((export_name("skeleton"))) int skeleton(const u8 *in, int length, u8 *out, u8 *stack) {
  const u8 *p = in;
  const u8 *end = in + length;
  int depth = 0;
  int state = EXPECT_VALUE;
  int entry = 0;   /* whether the line's value is an object */
  int whole = 0;   /* whether the skeleton is the line itself (an escaped key) */
  /* The last value of each member the index reads: [start, end), start 0 when absent. */
  const u8 *value_start[ENTRY_COUNT + 2] = {0};
  const u8 *value_end[ENTRY_COUNT + 2] = {0};
  const u8 *field_start[MESSAGE_COUNT] = {0};
  const u8 *field_end[MESSAGE_COUNT] = {0};
  int message_is_object = 0;
  int member = DROP;    /* the entry member being read */
  const u8 *member_value = 0;
  int field = DROP;     /* the message member being read */
  const u8 *field_value = 0;
  for (;;) {
    p = skip_space(p, end);
    if (state == AFTER_VALUE) {
      /* A value just ended: its holder is at `depth`. */
      if (depth == 0) {
        if (p != end) return -1;
        break;
      }
      u8 c = *p;
      int top = stack[depth - 1];
      if (c == ',') {
        p++;
        state = top == OBJECT ? EXPECT_KEY : EXPECT_VALUE;
        continue;
      }
      if ((c == '}' && top == OBJECT) || (c == ']' && top == ARRAY)) {
        p++;
        depth--;
        goto value_ended;
      }
      return -1;
    }
    if (p >= end) return -1;
    u8 c = *p;
    if (state == EXPECT_KEY || state == EXPECT_KEY_OR_CLOSE) {
      if (c == '}' && state == EXPECT_KEY_OR_CLOSE) {
        p++;
        depth--;
        goto value_ended;
      }
      if (c != '"') return -1;
      int escaped = 0;
      const u8 *close = scan_string(p + 1, end, &escaped);
      if (!close) return -1;
      const u8 *key = p + 1;
      int n = (int)(close - key);
      if (depth == 1 && entry) {
        if (escaped) whole = 1;
        member = DROP;
        for (int i = 0; i < ENTRY_COUNT; i++)
          if (equals(key, n, ENTRY_FIELDS[i])) member = i;
        if (equals(key, n, "message")) member = MESSAGE;
        if (equals(key, n, "retainedTail")) member = RETAINED_TAIL;
      } else if (depth == 2 && entry && member == MESSAGE && message_is_object) {
        if (escaped) whole = 1;
        field = DROP;
        for (int i = 0; i < MESSAGE_COUNT; i++)
          if (equals(key, n, MESSAGE_FIELDS[i])) field = i;
      }
      p = skip_space(close + 1, end);
      if (p >= end || *p != ':') return -1;
      p = skip_space(p + 1, end);
      state = EXPECT_VALUE;
      continue;
    }
    /* EXPECT_VALUE or EXPECT_VALUE_OR_CLOSE */
    if (c == ']' && state == EXPECT_VALUE_OR_CLOSE) {
      p++;
      depth--;
      goto value_ended;
    }
    if (depth == 0 && c == '{') entry = 1;
    if (depth == 1 && entry) {
      member_value = p;
      if (member == MESSAGE) {
        /* This message replaces any earlier one, members and all. */
        message_is_object = c == '{';
        for (int i = 0; i < MESSAGE_COUNT; i++) field_start[i] = 0;
      }
    } else if (depth == 2 && entry && member == MESSAGE && message_is_object) {
      field_value = p;
    }
    if (c == '{' || c == '[') {
      stack[depth++] = c == '{' ? OBJECT : ARRAY;
      p++;
      state = c == '{' ? EXPECT_KEY_OR_CLOSE : EXPECT_VALUE_OR_CLOSE;
      continue;
    }
    if (c == '"') {
      int escaped = 0;
      const u8 *close = scan_string(p + 1, end, &escaped);
      if (!close) return -1;
      p = close + 1;
    } else if (c == 't') {
      p = scan_literal(p, end, "true");
    } else if (c == 'f') {
      p = scan_literal(p, end, "false");
    } else if (c == 'n') {
      p = scan_literal(p, end, "null");
    } else {
      p = scan_number(p, end);
    }
    if (!p) return -1;
  value_ended:
    /* The value ending at `p` belongs to the holder at `depth` (0: the line's value). */
    state = AFTER_VALUE;
    if (!entry) continue;
    if (depth == 1 && member != DROP) {
      value_start[member] = member_value;
      value_end[member] = p;
    } else if (depth == 2 && member == MESSAGE && message_is_object && field != DROP) {
      field_start[field] = field_value;
      field_end[field] = p;
    }
  }
  if (!entry || whole) return (int)(emit(out, in, end) - out);
  u8 *o = out;
  *o++ = '{';
  for (int i = 0; i < ENTRY_COUNT + 2; i++) {
    if (!value_start[i]) continue;
    if (o > out + 1) *o++ = ',';
    if (i < ENTRY_COUNT) {
      o = emit(emit_name(o, ENTRY_FIELDS[i]), value_start[i], value_end[i]);
    } else if (i == MESSAGE && !message_is_object) {
      o = emit(emit_name(o, "message"), value_start[i], value_end[i]);
    } else if (i == MESSAGE) {
      o = emit_name(o, "message");
      *o++ = '{';
      int first = 1;
      for (int f = 0; f < MESSAGE_COUNT; f++) {
        if (!field_start[f]) continue;
        if (!first) *o++ = ',';
        first = 0;
        o = emit(emit_name(o, MESSAGE_FIELDS[f]), field_start[f], field_end[f]);
      }
      *o++ = '}';
    } else {
      /* retainedTail: only whether it is an array is read (so an array's content goes). */
      o = emit_name(o, "retainedTail");
      o = value_end[i][-1] == ']' ? emit(o, (const u8 *)"[]", (const u8 *)"[]" + 2)
                                  : emit(o, value_start[i], value_end[i]);
    }
  }
  *o++ = '}';
  return (int)(o - out);
}
