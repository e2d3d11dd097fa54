/*
 * The tree index's scan of a run of JSONL lines: finds each line's end, checks the line
 * against JSON's grammar exactly as JSON.parse does, and hands over only what the index reads.
 *
 * Acceptance (RFC 8259, as JSON.parse): whitespace is space, tab, CR (a line's LF ends it);
 * numbers, literals, strings with their escapes; any nesting; one value per line. A line
 * JSON.parse would refuse is reported as refused (the caller reads it whole). Bytes >= 0x80
 * are accepted inside strings only: JSON.parse sees them as text whatever they decode to, and
 * UTF-8 decoding never swallows a '"' or a '\'.
 *
 * What is handed over, per line (scan_lines' records): where the line is, and whether it was
 * accepted. For an accepted line, its skeleton: a smaller JSON text that JSON.parse reads to the
 * same record. An entry's skeleton holds the members the index reads (type, id, parentId,
 * timestamp, the facts of lines.ts: oh-my-pi's `title` among them), their values verbatim, `message` with only its role,
 * provider and model, `retainedTail` as [] when it is an array (only whether it is one is
 * read); for a key written twice, the last one, as JSON.parse does. Members come out in one
 * fixed order, so the objects JSON.parse makes share a few shapes and reading them stays fast.
 * A line with an escaped key (which may spell one of those names) and a value that is not an
 * object are written whole. The skeletons of a run are written as one JSON array, for one
 * JSON.parse: most of a session's bytes (message text, tool output, images) and most of its
 * structure (content blocks, usage) never become JavaScript values.
 *
 * Build: scripts/build-wasm.sh (clang, wasm32 with SIMD and bulk memory).
 */
#include <wasm_simd128.h>

/* Which scan this build is: the skeleton scan (0) or the span scan (1); one module each, each under 4 KB. */
#ifndef SPANS
#define SPANS 0
#endif

/* Kept out of line where clang would copy a function into each of its callers: the module must stay under 4 KB. */
#define OUT_OF_LINE __attribute__((noinline))
/* Code that runs once a line or less, built for size (the scan's inner loops are built for speed). */
#define SMALL __attribute__((noinline, minsize))

typedef unsigned char u8;

static int is_hex(u8 c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static int is_digit(u8 c) { return c >= '0' && c <= '9'; }

/* JSON's whitespace inside one line: its LF ends the line. */
static const u8 *skip_space(const u8 *p, const u8 *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
  return p;
}

static int equals(const u8 *k, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (name[i] == 0 || k[i] != (u8)name[i]) return 0;
  return name[n] == 0;
}

/* The index of the key [k, k + n) in `names` (the last match), or -1 (DROP). */
SMALL static int name_index(const u8 *k, int n, const char *const *names) {
  int found = -1;
  for (int i = 0; names[i]; i++)
    if (equals(k, n, names[i])) found = i;
  return found;
}

/*
 * Entry members the tree index reads (lines.ts: recordOf and factsOf); the last two are read
 * specially. The skeleton scan also keeps oh-my-pi's `title` (a rename's); the span scan's
 * layout (span-scan.ts reads its slots by index) stays as it is.
 */
#if SPANS
static const char *const ENTRY_FIELDS[] = {"type",     "id",      "parentId",         "timestamp",
                                           "targetId", "label",   "name",             "thinkingLevel",
                                           "provider", "modelId", "firstKeptEntryId", "firstKeptEntryIndex",
                                           "message",  "retainedTail", 0};
#define ENTRY_COUNT 12
#else
static const char *const ENTRY_FIELDS[] = {"type",     "id",      "parentId",         "timestamp",
                                           "targetId", "label",   "name",             "thinkingLevel",
                                           "provider", "modelId", "firstKeptEntryId", "firstKeptEntryIndex",
                                           "title",    "message", "retainedTail",     0};
#define ENTRY_COUNT 13
#endif
/* Members of an entry's message the index reads. */
static const char *const MESSAGE_FIELDS[] = {"role", "provider", "model", 0};

#define MESSAGE_COUNT 3
/* Kinds of entry members past the ENTRY_FIELDS (whose kind is their index). */
enum { DROP = -1, MESSAGE = ENTRY_COUNT, RETAINED_TAIL = ENTRY_COUNT + 1 };

/* A record: the line's start and length in the run, and whether it was accepted. */
enum { R_START, R_LENGTH, R_ACCEPTED, RECORD_INTS };

/*
 * A span record (the span scan's): a record, then the line's flags, then where each read
 * member's value is, from the line's start ([start, end), both 0 when absent): the ENTRY_FIELDS
 * in their order (`message` and `retainedTail` included), then the MESSAGE_FIELDS; then the
 * hashes (low, high) of its id and parentId, and the codes of its type and role (type | role << 8).
 */
enum {
  S_FLAGS = RECORD_INTS,
  S_SPANS,
  S_ID_HASH = S_SPANS + 2 * (ENTRY_COUNT + 2 + MESSAGE_COUNT),
  S_PARENT_HASH = S_ID_HASH + 2,
  S_CODES = S_PARENT_HASH + 2,
  SPAN_INTS
};
/*
 * Span record flags: an object; an escaped key (the line must be read whole); `message` is an
 * object; odd: the light index cannot read the line (a type or id that is not a plain string,
 * a parentId that is neither null nor a plain string, a role string that is not plain: plain is
 * ASCII without escapes, whose bytes are its text); the parentId is written as the previous
 * accepted line's id; there is no parentId (absent, null or ""); `message` is neither absent
 * nor null.
 */
enum { F_ENTRY = 1, F_WHOLE = 2, F_MESSAGE_OBJECT = 4, F_ODD = 8, F_PARENT_PREVIOUS = 16, F_PARENT_NONE = 32, F_HAS_MESSAGE = 64 };

/* Lanes (all ones) where a string's scan stops: '"', '\', a control char. */
static v128_t string_stops(v128_t bytes) {
  return wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(bytes, wasm_i8x16_splat('"')),
                                   wasm_i8x16_eq(bytes, wasm_i8x16_splat('\\'))),
                      wasm_u8x16_lt(bytes, wasm_i8x16_splat(0x20)));
}

/*
 * Scans a string body starting just after its opening quote. Returns the position of the
 * closing quote, or 0 when the body is invalid or unterminated; sets *escaped when it holds a
 * backslash. The input has 16 readable bytes past `end`.
 */
static const u8 *scan_string(const u8 *p, const u8 *end, int *escaped) {
  for (;;) {
    if (p >= end) return 0;
    int mask = wasm_i8x16_bitmask(string_stops(wasm_v128_load(p)));
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

/* The first LF at or after p, or end. */
static const u8 *find_newline(const u8 *p, const u8 *end) {
  for (; p < end; p += 16) {
    int mask = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(p), wasm_i8x16_splat('\n')));
    if (mask) {
      p += __builtin_ctz(mask);
      return p < end ? p : end;
    }
  }
  return end;
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

OUT_OF_LINE static const u8 *scan_literal(const u8 *p, const u8 *end, const char *word) {
  for (; *word; word++, p++)
    if (p >= end || *p != (u8)*word) return 0;
  return p;
}

OUT_OF_LINE static u8 *emit(u8 *o, const u8 *from, const u8 *to) {
  __builtin_memcpy(o, from, (unsigned long)(to - from));
  return o + (to - from);
}

#if !SPANS
SMALL static u8 *emit_name(u8 *o, const char *name) {
  *o++ = '"';
  while (*name) *o++ = (u8)*name++;
  *o++ = '"';
  *o++ = ':';
  return o;
}
#endif

enum { OBJECT = 1, ARRAY = 2 };
enum { EXPECT_VALUE, EXPECT_VALUE_OR_CLOSE, EXPECT_KEY, EXPECT_KEY_OR_CLOSE, AFTER_VALUE };

/* What a line's scan found: the last value of each member the index reads ([start, end), start 0 when absent). */
struct found {
  int entry; /* whether the line's value is an object */
  int whole; /* whether the skeleton is the line itself (an escaped key) */
  int message_is_object;
  const u8 *value_start[ENTRY_COUNT + 2];
  const u8 *value_end[ENTRY_COUNT + 2];
  const u8 *field_start[MESSAGE_COUNT];
  const u8 *field_end[MESSAGE_COUNT];
};

/*
 * Checks the line starting at `in` (within a run ending at `end`) and notes its read members
 * in `f`. `stack` has room for one byte per open bracket. Returns the LF that ends the line,
 * or 0 when JSON.parse would refuse the line.
 */
static const u8 *scan_line(const u8 *in, const u8 *end, u8 *stack, struct found *f) {
  const u8 *p = in;
  int depth = 0;
  int state = EXPECT_VALUE;
  int member = DROP; /* the entry member being read */
  const u8 *member_value = 0;
  int field = DROP; /* the message member being read */
  const u8 *field_value = 0;
  for (;;) {
    p = skip_space(p, end);
    if (p >= end) return 0;
    if (state == AFTER_VALUE) {
      /* A value just ended: its holder is at `depth`. */
      if (depth == 0) return *p == '\n' ? p : 0;
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
      return 0;
    }
    u8 c = *p;
    if (state == EXPECT_KEY || state == EXPECT_KEY_OR_CLOSE) {
      if (c == '}' && state == EXPECT_KEY_OR_CLOSE) {
        p++;
        depth--;
        goto value_ended;
      }
      if (c != '"') return 0;
      int escaped = 0;
      const u8 *close = scan_string(p + 1, end, &escaped);
      if (!close) return 0;
      const u8 *key = p + 1;
      int n = (int)(close - key);
      if (depth == 1 && f->entry) {
        if (escaped) f->whole = 1;
        member = name_index(key, n, ENTRY_FIELDS);
      } else if (depth == 2 && f->entry && member == MESSAGE && f->message_is_object) {
        if (escaped) f->whole = 1;
        field = name_index(key, n, MESSAGE_FIELDS);
      }
      p = skip_space(close + 1, end);
      if (p >= end || *p != ':') return 0;
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
    if (depth == 0 && c == '{') f->entry = 1;
    if (depth == 1 && f->entry) {
      member_value = p;
      if (member == MESSAGE) {
        /* This message replaces any earlier one, members and all. */
        f->message_is_object = c == '{';
        for (int i = 0; i < MESSAGE_COUNT; i++) f->field_start[i] = 0;
      }
    } else if (depth == 2 && f->entry && member == MESSAGE && f->message_is_object) {
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
      if (!close) return 0;
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
    if (!p) return 0;
  value_ended:
    /* The value ending at `p` belongs to the holder at `depth` (0: the line's value). */
    state = AFTER_VALUE;
    if (!f->entry) continue;
    if (depth == 1 && member != DROP) {
      f->value_start[member] = member_value;
      f->value_end[member] = p;
    } else if (depth == 2 && member == MESSAGE && f->message_is_object && field != DROP) {
      f->field_start[field] = field_value;
      f->field_end[field] = p;
    }
  }
}

#if !SPANS
/* Writes the skeleton of an accepted line [in, line_end) to `o` (never longer than the line). */
SMALL static u8 *emit_skeleton(u8 *o, const u8 *in, const u8 *line_end, const struct found *f) {
  if (!f->entry || f->whole) return emit(o, in, line_end);
  u8 *start = o;
  *o++ = '{';
  for (int i = 0; i < ENTRY_COUNT + 2; i++) {
    if (!f->value_start[i]) continue;
    if (o > start + 1) *o++ = ',';
    if (i < ENTRY_COUNT) {
      o = emit(emit_name(o, ENTRY_FIELDS[i]), f->value_start[i], f->value_end[i]);
    } else if (i == MESSAGE && !f->message_is_object) {
      o = emit(emit_name(o, ENTRY_FIELDS[MESSAGE]), f->value_start[i], f->value_end[i]);
    } else if (i == MESSAGE) {
      o = emit_name(o, ENTRY_FIELDS[MESSAGE]);
      *o++ = '{';
      int first = 1;
      for (int m = 0; m < MESSAGE_COUNT; m++) {
        if (!f->field_start[m]) continue;
        if (!first) *o++ = ',';
        first = 0;
        o = emit(emit_name(o, MESSAGE_FIELDS[m]), f->field_start[m], f->field_end[m]);
      }
      *o++ = '}';
    } else {
      /* retainedTail: only whether it is an array is read (so an array's content goes). */
      o = emit_name(o, ENTRY_FIELDS[RETAINED_TAIL]);
      o = f->value_end[i][-1] == ']' ? emit(o, (const u8 *)"[]", (const u8 *)"[]" + 2)
                                     : emit(o, f->value_start[i], f->value_end[i]);
    }
  }
  *o++ = '}';
  return o;
}
#endif

#if SPANS
typedef unsigned long long u64;

/* Entry types and message roles the light index codes (1 + their place; 255: another string): as KNOWN_NAMES in light-index.ts. */
static const char *const NAMES[] = {"message",     "custom_message", "branch_summary",
                                    "compaction",  "context_edit",   "thinking_level_change",
                                    "model_change", "label",         "session_info",
                                    "usage",       "custom",         "system",
                                    "user",        "assistant",      "toolResult",
                                    "session",     0};
enum { SESSION_CODE = 16, OTHER_NAME = 255 };

/* Whether the JSON value [p, end) is a string whose bytes are its text: no escape, ASCII only. */
SMALL static int plain_string(const u8 *p, const u8 *end) {
  if (!p || *p != '"') return 0;
  for (p++; p < end - 1; p++)
    if (*p == '\\' || *p >= 0x80) return 0;
  return 1;
}

/* The code of a plain string value [p, end). */
SMALL static int name_code(const u8 *p, const u8 *end) {
  return name_index(p + 1, (int)(end - p) - 2, NAMES) + 1 ?: OTHER_NAME;
}

/* FNV-1a (64 bits) of the text of a plain string value [p, end): what ids are linked by. */
SMALL static u64 text_hash(const u8 *p, const u8 *end) {
  u64 h = 0xcbf29ce484222325ULL;
  for (p++; p < end - 1; p++) h = (h ^ *p) * 0x100000001b3ULL;
  return h;
}

struct value {
  const u8 *start, *end;
};

/*
 * Writes the span record of an accepted line: its member values relative to the line start
 * `in`, its flags, the hashes of its id and parentId and the codes of its type and role.
 * `previous` is the id of the previous accepted line of the run (start 0: none).
 */
SMALL static void write_spans(int *r, const u8 *in, const struct found *f, struct value *previous) {
  const u8 *const *starts[2] = {f->value_start, f->field_start};
  const u8 *const *ends[2] = {f->value_end, f->field_end};
  int *o = r + S_SPANS;
  for (int g = 0; g < 2; g++) {
    int count = g ? MESSAGE_COUNT : ENTRY_COUNT + 2;
    for (int i = 0; i < count; i++, o += 2) {
      const u8 *a = starts[g][i];
      o[0] = a ? (int)(a - in) : 0;
      o[1] = a ? (int)(ends[g][i] - in) : 0;
    }
  }
  int flags = (f->entry ? F_ENTRY : 0) | (f->whole ? F_WHOLE : 0) | (f->message_is_object ? F_MESSAGE_OBJECT : 0);
  const u8 *type = f->value_start[0], *id = f->value_start[1], *parent = f->value_start[2];
  const u8 *message = f->value_start[MESSAGE], *role = f->field_start[0];
  if (!plain_string(type, f->value_end[0]) || !plain_string(id, f->value_end[1])) flags |= F_ODD;
  int n = (int)(f->value_end[2] - parent);
  if (!parent || *parent == 'n' || (n == 2 && *parent == '"')) {
    /* absent, null or "": no parent */
    flags |= F_PARENT_NONE;
  } else if (!plain_string(parent, f->value_end[2])) {
    flags |= F_ODD;
  } else {
    int same = previous->start && n == (int)(previous->end - previous->start);
    for (int i = 0; same && i < n; i++) same = parent[i] == previous->start[i];
    if (same) flags |= F_PARENT_PREVIOUS;
    u64 h = text_hash(parent, f->value_end[2]);
    r[S_PARENT_HASH] = (int)h;
    r[S_PARENT_HASH + 1] = (int)(h >> 32);
  }
  if (message && *message != 'n') flags |= F_HAS_MESSAGE;
  int codes = 0;
  if (!(flags & F_ODD)) {
    u64 h = text_hash(id, f->value_end[1]);
    r[S_ID_HASH] = (int)h;
    r[S_ID_HASH + 1] = (int)(h >> 32);
    codes = name_code(type, f->value_end[0]);
    if (role && *role == '"') {
      if (!plain_string(role, f->field_end[0])) flags |= F_ODD;
      else codes |= name_code(role, f->field_end[0]) << 8;
    }
  }
  r[S_CODES] = codes;
  r[S_FLAGS] = flags;
  previous->start = id;
  previous->end = f->value_end[1];
}

/* The slot of a hash in a table of mask + 1 slots. */
static unsigned slot_of(u64 h, unsigned mask) { return (unsigned)(h ^ (h >> 32)) & mask; }

/* The entry (index) whose id hash is h, or -1: `table` holds entry + 1 per slot (0: empty). */
static int find_id(unsigned lo, unsigned hi, const u64 *hashes, const unsigned *table, unsigned mask) {
  u64 h = ((u64)hi << 32) | lo;
  for (unsigned s = slot_of(h, mask); table[s]; s = (s + 1) & mask)
    if (hashes[table[s] - 1] == h) return (int)table[s] - 1;
  return -1;
}

/* Puts entry k (of hash hashes[k]) in the table; 0 when an entry with that hash is there. */
static int put(int k, const u64 *hashes, unsigned *table, unsigned mask) {
  unsigned s = slot_of(hashes[k], mask);
  for (; table[s]; s = (s + 1) & mask)
    if (hashes[table[s] - 1] == hashes[k]) return 0;
  table[s] = (unsigned)k + 1;
  return 1;
}

/* Puts entries [0, count) in an empty table (a larger one, as the file grows past its estimate). */
__attribute__((export_name("fill_table"))) void fill_table(int count, const u64 *hashes, unsigned *table,
                                                           unsigned mask) {
  for (int k = 0; k < count; k++) put(k, hashes, table, mask);
}

/*
 * Links the `count` lines of a run's span records, entries `first` on: each one's id hash goes
 * to `hashes` and the table, its parent to `parents` (-1: none; -2: not found yet, as a parent
 * after its child or not in the file). The entries whose parent was looked up by hash (not
 * written as the previous line's id) go to `looked`, for the caller to check: returns how many;
 * -1 at a line the light index cannot read, or at an id hash already there (a repeated id, or
 * two ids of one hash: the full reading decides).
 */
__attribute__((export_name("link_run"))) int link_run(const int *records, int count, int first, u64 *hashes,
                                                       unsigned *table, unsigned mask, int *parents, int *looked) {
  int n = 0;
  for (int i = 0; i < count; i++) {
    const int *r = records + i * SPAN_INTS;
    int k = first + i;
    int flags = r[S_FLAGS];
    /* Not an entry the light index reads, or a second header (pi skips it): the full reading decides. */
    if (!r[R_ACCEPTED] || (flags & (F_ENTRY | F_WHOLE | F_ODD)) != F_ENTRY || (r[S_CODES] & 255) == SESSION_CODE)
      return -1;
    int parent = -1;
    if (flags & F_PARENT_PREVIOUS) {
      parent = k - 1;
    } else if (!(flags & F_PARENT_NONE)) {
      parent = find_id((unsigned)r[S_PARENT_HASH], (unsigned)r[S_PARENT_HASH + 1], hashes, table, mask);
      if (parent < 0) parent = -2;
      looked[n++] = k;
    }
    parents[k] = parent;
    hashes[k] = ((u64)(unsigned)r[S_ID_HASH + 1] << 32) | (unsigned)r[S_ID_HASH];
    if (!put(k, hashes, table, mask)) return -1;
  }
  return n;
}
#endif

/*
 * Scans the lines of the run [in, in + length) (each ended by an LF; 16 readable bytes follow),
 * up to `max` of them, writing one record each to `records` and, for the accepted ones, a JSON
 * text to `out` (one array for the run). The skeleton scan (SPANS 0): records of RECORD_INTS
 * ints, and each line's skeleton in the array (room for `length` + 2 bytes). The span scan
 * (SPANS 1): span records of SPAN_INTS ints (`out` gets an empty array). `stack` has room for `length`
 * bytes. Returns the number of lines read; sizes[0] = bytes read (whole lines), sizes[1] = the
 * JSON text's length.
 */
__attribute__((export_name("scan_lines"))) int scan_lines(const u8 *in, int length, int *records, int max, u8 *out,
                                                          u8 *stack, int *sizes) {
  const u8 *p = in;
  const u8 *end = in + length;
  u8 *s = out;
  *s++ = '[';
  int n = 0;
#if SPANS
  struct value previous = {0, 0};
#endif
  while (p < end && n < max) {
    int *r = records + n * (SPANS ? SPAN_INTS : RECORD_INTS);
    struct found f = {0};
    const u8 *line_end = scan_line(p, end, stack, &f);
    r[R_ACCEPTED] = line_end != 0;
    if (!line_end) {
      line_end = find_newline(p, end);
    } else {
      if (s > out + 1) *s++ = ',';
#if SPANS
      write_spans(r, p, &f, &previous);
#else
      s = emit_skeleton(s, p, line_end, &f);
#endif
    }
    r[R_START] = (int)(p - in);
    r[R_LENGTH] = (int)(line_end - p);
    p = line_end + 1;
    n++;
  }
  *s++ = ']';
  sizes[0] = (int)((p < end ? p : end) - in);
  sizes[1] = (int)(s - out);
  return n;
}
