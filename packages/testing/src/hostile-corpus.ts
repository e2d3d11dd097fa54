/**
 * A generated corpus of credentials: every shape the masker must find, each with the secret
 * part that must never show, and every place of a session it may sit in. Shared by the
 * masker's tests, the share hostile-session test and the masking benchmark. The same entry
 * (`@pisync/testing/hostile`) holds the hostile tool blocks (XSS payloads and odd values in
 * every field a tool block shows).
 */
import { generateKeyPairSync } from "node:crypto";
import { type AssistantPart, assistantMessage, userMessage } from "./sessions.js";

export * from "./tool-xss.js";

/** A credential as it appears in text, and the part of it that is secret. */
export interface Shape {
  /** The rule expected to find it. */
  rule: string;
  /** The text holding it (a credential and what names it, as a tool prints it). */
  text: string;
  /** The secret itself (inside `text`): none of it may show after masking. */
  secret: string;
}

/** A small deterministic generator, so the corpus is the same every run. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (alphabet: string, length: number) =>
    Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = "0123456789abcdef";
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}_-`;

/** The private keys: real ones in each PEM flavour (and an OpenSSH-shaped one). */
function privateKeys(pick: ReturnType<typeof random>): string[] {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey;
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
  const openssh = Buffer.concat([Buffer.from("openssh-key-v1\0"), Buffer.from(pick(ALNUM, 300))])
    .toString("base64")
    .replace(/(.{70})/g, "$1\n");
  return [
    rsa.export({ type: "pkcs8", format: "pem" }) as string,
    rsa.export({ type: "pkcs1", format: "pem" }) as string,
    ec.export({ type: "sec1", format: "pem" }) as string,
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${openssh}\n-----END OPENSSH PRIVATE KEY-----\n`,
  ];
}

/** The secret of a PEM: its body (the armour lines are not secret). */
const pemBody = (pem: string) =>
  pem
    .split("\n")
    .filter((l) => l && !l.startsWith("-----"))
    .join("\n");

/** Every credential shape, generated from `seed`. */
export function credentialShapes(seed = 11): Shape[] {
  const pick = random(seed);
  const plain = (rule: string, secret: string): Shape => ({ rule, text: secret, secret });
  const named = (rule: string, before: string, secret: string, after = ""): Shape => ({
    rule,
    text: `${before}${secret}${after}`,
    secret,
  });
  const shapes: Shape[] = [
    plain("aws-access-key-id", `AKIA${pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`),
    plain("aws-access-key-id", `ASIA${pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`),
    named("aws-secret-access-key", "aws_secret_access_key = ", pick(B64, 40)),
    named("aws-secret-access-key", '"SecretAccessKey": "', pick(B64, 40), '"'),
    named("aws-secret-access-key", "AWS_SECRET_ACCESS_KEY=", pick(B64, 40)),
    plain("gcp-api-key", `AIza${pick(URLSAFE, 35)}`),
    plain("gcp-oauth-token", `ya29.${pick(URLSAFE, 120)}`),
    plain("azure-ad-client-secret", `${pick(ALNUM, 3)}8Q~${pick(`${ALNUM}_~.-`, 34)}`),
    named(
      "azure-storage-key",
      "DefaultEndpointsProtocol=https;AccountName=devstore;AccountKey=",
      `${pick(B64, 86)}==`,
      ";EndpointSuffix=core.windows.net",
    ),
    ...["ghp", "gho", "ghu", "ghs", "ghr"].map((p) => plain("github-token", `${p}_${pick(ALNUM, 36)}`)),
    plain("github-token", `github_pat_${pick(ALNUM, 22)}_${pick(ALNUM, 59)}`),
    plain("gitlab-token", `glpat-${pick(URLSAFE, 20)}`),
    plain("npm-token", `npm_${pick(ALNUM, 36)}`),
    plain("openai-api-key", `sk-proj-${pick(URLSAFE, 74)}T3BlbkFJ${pick(URLSAFE, 74)}`),
    plain("openai-api-key", `sk-${pick(ALNUM, 20)}T3BlbkFJ${pick(ALNUM, 20)}`),
    plain("anthropic-api-key", `sk-ant-api03-${pick(URLSAFE, 93)}AA`),
    plain("anthropic-api-key", `sk-ant-admin01-${pick(URLSAFE, 93)}AA`),
    plain("huggingface-token", `hf_${pick(UPPER + LOWER, 34)}`),
    plain("stripe-key", `sk_live_${pick(ALNUM, 99)}`),
    plain("stripe-key", `rk_live_${pick(ALNUM, 24)}`),
    plain("slack-token", `xoxb-${pick(DIGITS, 12)}-${pick(DIGITS, 13)}-${pick(ALNUM, 24)}`),
    plain("slack-token", `xoxp-${pick(DIGITS, 12)}-${pick(DIGITS, 12)}-${pick(DIGITS, 13)}-${pick(HEX, 32)}`),
    named(
      "slack-webhook",
      "https://",
      `hooks.slack.com/services/T${pick(UPPER, 8)}/B${pick(UPPER, 10)}/${pick(ALNUM, 24)}`,
    ),
    plain("jwt", `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ${pick(URLSAFE, 60)}.${pick(URLSAFE, 43)}`),
    named("url-password", "git clone https://deploy:", `${pick(ALNUM, 18)}`, "@git.example.com/team/app.git"),
    named("url-password", "DATABASE_URL=postgres://app:", `p!${pick(ALNUM, 16)}`, "@db.internal:5432/app"),
    named("env-secret", "PASSWORD=", `hunter2${pick(ALNUM, 6)}`),
    named("env-secret", "DB_PASSWORD='", pick(ALNUM, 14), "'"),
    named("env-secret", "SECRET=", pick(ALNUM, 24)),
    named("env-secret", "export TOKEN=", pick(ALNUM, 32)),
    named("env-secret", "API_KEY=", pick(HEX, 32)),
    named("env-secret", "STRIPE_WEBHOOK_SECRET=", `whsec_${pick(ALNUM, 32)}`),
    named("generic-secret", 'password: "', `${pick(ALNUM, 12)}!`, '"'),
    named("generic-secret", '{"client_secret": "', pick(URLSAFE, 40), '"}'),
    plain("pypi-token", `pypi-AgEIcHlwaS5vcmc${pick(URLSAFE, 70)}`),
    plain("openrouter-api-key", `sk-or-v1-${pick(HEX, 64)}`),
    plain("groq-api-key", `gsk_${pick(ALNUM, 52)}`),
    plain("xai-api-key", `xai-${pick(ALNUM, 80)}`),
    named("discord-webhook", "https://", `discord.com/api/webhooks/${pick(DIGITS, 18)}/${pick(URLSAFE, 68)}`),
    plain("telegram-bot-token", `${pick(DIGITS, 10)}:AA${pick(URLSAFE, 33)}`),
    plain("sendgrid-api-key", `SG.${pick(URLSAFE, 22)}.${pick(URLSAFE, 43)}`),
    plain("twilio-api-key", `SK${pick(HEX, 32)}`),
    plain("mailchimp-api-key", `${pick(HEX, 32)}-us${pick(DIGITS, 2)}`),
    plain("digitalocean-token", `dop_v1_${pick(HEX, 64)}`),
    plain("databricks-token", `dapi${pick(HEX, 32)}`),
    plain("docker-hub-token", `dckr_pat_${pick(URLSAFE, 27)}`),
    plain("hashicorp-token", `hvs.${pick(URLSAFE, 90)}`),
    plain("hashicorp-token", `${pick(ALNUM, 14)}.atlasv1.${pick(ALNUM, 67)}`),
    plain("supabase-token", `sbp_${pick(HEX, 40)}`),
    plain("grafana-token", `glsa_${pick(ALNUM, 32)}_${pick(HEX, 8)}`),
    plain("postman-api-key", `PMAK-${pick(HEX, 24)}-${pick(HEX, 34)}`),
    plain("newrelic-key", `NRAK-${pick(UPPER + DIGITS, 27)}`),
    plain("age-secret-key", `AGE-SECRET-KEY-1${pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)}`),
    named("authorization-header", 'curl -H "Authorization: Bearer ', pick(URLSAFE, 40), '" https://api.example.com'),
    named("authorization-header", "Authorization: Basic ", Buffer.from(`deploy:${pick(ALNUM, 16)}`).toString("base64")),
    plain("linear-api-key", `lin_api_${pick(ALNUM, 40)}`),
    plain("shopify-token", `shpat_${pick(HEX, 32)}`),
  ];
  for (const pem of privateKeys(pick)) {
    const secret = pemBody(pem);
    shapes.push({ rule: "private-key", text: pem, secret });
    // Escaped once: a PEM in a `.env` value or a string literal.
    shapes.push({ rule: "private-key", text: `PRIVATE_KEY="${pem.replace(/\n/g, "\\n")}"`, secret });
    // A service-account.json as `cat` prints it (its key escaped once inside the file).
    shapes.push({
      rule: "private-key",
      text: JSON.stringify({ type: "service_account", private_key_id: pick(HEX, 40), private_key: pem }, null, 2),
      secret,
    });
  }
  return shapes;
}

/** Where in a session a credential may sit: makes the entry (or header part) holding `text`. */
export interface Placement {
  name: string;
  /** The entry holding the text (without id/parentId/timestamp, added by the session builder). */
  entry?: (text: string) => Record<string, unknown>;
}

const assistant = (content: AssistantPart[]) => ({ type: "message", message: assistantMessage(content) });
const user = (content: unknown) => ({ type: "message", message: userMessage(content) });

/** Every place of an entry a credential may sit in. */
export const PLACEMENTS: Placement[] = [
  { name: "user text", entry: (t) => user(`please use ${t} for this`) },
  { name: "user text part", entry: (t) => user([{ type: "text", text: `here:\n${t}\nthanks` }]) },
  { name: "assistant text", entry: (t) => assistant([{ type: "text", text: `I found ${t} in the config.` }]) },
  { name: "thinking", entry: (t) => assistant([{ type: "thinking", thinking: `The key is ${t}; do not print it.` }]) },
  {
    name: "tool call arguments",
    entry: (t) =>
      assistant([{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: `echo '${t}' > .env` } }]),
  },
  {
    name: "tool result",
    entry: (t) => ({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: "call_1",
        toolName: "read",
        content: [{ type: "text", text: t }],
        isError: false,
        timestamp: 1,
      },
    }),
  },
  {
    name: "bash output after a newline",
    entry: (t) => ({
      type: "message",
      message: {
        role: "bashExecution",
        command: "gh auth token",
        output: `\n${t}\n`,
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: 1,
      },
    }),
  },
  {
    name: "bash output after a tab",
    entry: (t) => ({
      type: "message",
      message: {
        role: "bashExecution",
        command: "cat .env",
        output: `KEY\t${t}`,
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: 1,
      },
    }),
  },
  {
    name: "after a disable comment",
    entry: (t) => user(`<!-- secretlint-disable -->\n// secretlint-disable-next-line\n${t} # secretlint-disable-line`),
  },
  { name: "doubly escaped", entry: (t) => user(JSON.stringify(JSON.stringify({ config: `\n${t}\n` }))) },
  { name: "crossing the preview cut", entry: (t) => user(`${"context ".repeat(13)}${t}`) },
  {
    name: "custom message",
    entry: (t) => ({ type: "custom_message", customType: "note", content: `note: ${t}`, display: true }),
  },
  {
    name: "compaction summary",
    entry: (t) => ({ type: "compaction", summary: `So far: ${t}`, firstKeptEntryId: "e0", tokensBefore: 10 }),
  },
  { name: "session name", entry: (t) => ({ type: "session_info", name: `deploy with ${t}` }) },
  { name: "label", entry: (t) => ({ type: "label", targetId: "e0", label: `key ${t}` }) },
  { name: "header cwd" },
];

/** Every 12 consecutive letters and digits of `secret`: none may show after masking. */
export function secretWindows(secret: string, size = 12): string[] {
  const core = secret.replace(/[^A-Za-z0-9]/g, "");
  const windows = new Set<string>();
  for (let i = 0; i + size <= core.length; i++) windows.add(core.slice(i, i + size));
  return [...windows];
}

/** The windows of `secret` that show in `text` (compared on letters and digits only, so no escaping hides one). */
export function leaks(text: string, secret: string): string[] {
  const core = text.replace(/[^A-Za-z0-9]/g, "");
  return secretWindows(secret).filter((w) => core.includes(w));
}

/** One credential placed in a session: which line holds it. */
export interface Placed {
  shape: Shape;
  placement: string;
  /** The entry's id (undefined: the header). */
  id?: string;
}

/**
 * A hostile session: the header's folder holds every credential; after a root entry (`e0`),
 * one branch per shape (`b<i>`) whose text crosses the 120-character preview cut, then one
 * path holding every shape in every placement (its tip is the default leaf).
 */
export function hostileSession(
  id: string,
  shapes = credentialShapes(),
): { text: string; lines: string[]; placed: Placed[] } {
  const ts = "2026-01-01T00:00:00.000Z";
  const lines: string[] = [];
  const placed: Placed[] = [];
  const add = (entry: Record<string, unknown>) => lines.push(JSON.stringify(entry));
  add({ type: "session", version: 3, id, timestamp: ts, cwd: `/srv/${shapes.map((s) => s.text).join(" ")}` });
  for (const shape of shapes) placed.push({ shape, placement: "header cwd" });
  add({
    type: "message",
    id: "e0",
    parentId: null,
    timestamp: ts,
    message: { role: "user", content: "start", timestamp: 1 },
  });
  const crossing = PLACEMENTS.find((p) => p.name === "crossing the preview cut")?.entry as (
    t: string,
  ) => Record<string, unknown>;
  shapes.forEach((shape, i) => {
    add({ ...crossing(shape.text), id: `b${i}`, parentId: "e0", timestamp: ts });
    placed.push({ shape, placement: "branch preview", id: `b${i}` });
  });
  let parent = "e0";
  shapes.forEach((shape, i) => {
    PLACEMENTS.forEach((placement, j) => {
      if (!placement.entry) return;
      const entryId = `e${i}-${j}`;
      add({ ...placement.entry(shape.text), id: entryId, parentId: parent, timestamp: ts });
      placed.push({ shape, placement: placement.name, id: entryId });
      parent = entryId;
    });
  });
  return { text: `${lines.join("\n")}\n`, lines, placed };
}

/** Texts of about `size` characters built to make rules start (and fail) as often as they can. */
export function pathologicalTexts(size: number): Record<string, string> {
  return {
    "JWT starts": "eyJa".repeat(size / 4),
    "JWT-shaped runs": "eyJaaaaaaaaa.".repeat(size / 13),
    "key headers": "-----BEGIN PRIVATE KEY-----".repeat(size / 27),
    "a key without end": `-----BEGIN PRIVATE KEY-----${"A".repeat(size)}`,
    backslashes: `${"\\".repeat(size)}x`,
    "secret names =": "password_a=".repeat(size / 11),
    "secret names :": "tokenaaaa: ".repeat(size / 11),
    "URL starts": "http://a:".repeat(size / 9),
    "sk- starts": "sk-".repeat(size / 3),
    "Slack dash chain": `xoxb-${"a-".repeat(size / 2)}!`,
    quotes: '"'.repeat(size),
    "percent escapes": "%41".repeat(size / 3),
    "database URL starts": "mongodb://".repeat(size / 10),
    "AWS secret names": "aws_secret_access_key = ".repeat(size / 24),
    "GitHub prefixes": "ghp_".repeat(size / 4),
  };
}

/**
 * Every string field of every kind of entry pi writes, holding `t`: message text and parts,
 * thinking, tool names, call ids and arguments, results and their details, bash commands and
 * output, providers, models and the answering model, error messages, custom types and data,
 * summaries, model and thinking-level changes, names and labels. Ids (of entries and of tool
 * calls), parent ids and times stay well-formed: they hold the tree and its calls together, and
 * the masker keeps them as they are.
 */
export function everyFieldEntries(t: string): Record<string, unknown>[] {
  const assistantOf = (content: unknown[], extra: Record<string, unknown> = {}) => ({
    type: "message",
    message: {
      role: "assistant",
      content,
      api: t,
      provider: t,
      model: t,
      responseModel: t,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { total: 0.01 } },
      stopReason: "stop",
      timestamp: 1,
      ...extra,
    },
  });
  return [
    { type: "model_change", provider: t, modelId: t },
    { type: "thinking_level_change", thinkingLevel: t },
    { type: "message", message: userMessage(t) },
    { type: "message", message: userMessage([{ type: "text", text: t }]) },
    assistantOf([
      { type: "thinking", thinking: t, thinkingSignature: t },
      { type: "text", text: t },
      { type: "toolCall", id: "call_t", name: t, arguments: { path: t, [t]: t, nested: { deep: [t] } } },
      { type: "toolCall", id: "call_b", name: "bash", arguments: { command: t } },
      { type: "toolCall", id: "call_w", name: "write", arguments: { path: t, content: t } },
      { type: "toolCall", id: "call_e", name: "edit", arguments: { path: t, oldText: t, newText: `${t}\n` } },
    ]),
    {
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: "call_t",
        toolName: t,
        content: [{ type: "text", text: t }],
        details: { diff: t, patch: t, path: t },
        isError: true,
        timestamp: 1,
      },
    },
    {
      type: "message",
      message: {
        role: "bashExecution",
        command: t,
        output: t,
        exitCode: 1,
        cancelled: false,
        truncated: false,
        fullOutputPath: t,
        timestamp: 1,
      },
    },
    assistantOf([{ type: "text", text: "failed" }], { stopReason: "error", errorMessage: t }),
    { type: "custom_message", customType: t, content: t, display: true, details: { note: t } },
    { type: "custom_message", customType: t, content: [{ type: "text", text: t }], display: true },
    { type: "custom", customType: t, data: { value: t } },
    { type: "compaction", summary: t, firstKeptEntryId: "e0", tokensBefore: 10, details: { files: [t] } },
    { type: "branch_summary", summary: t, fromId: "e0", details: { files: [t] } },
    { type: "session_info", name: t },
    { type: "label", targetId: "e0", label: t },
    { type: "message", message: { role: "branchSummary", summary: t, fromId: "e0", timestamp: 1 } },
    { type: "message", message: { role: "compactionSummary", summary: t, tokensBefore: 1, timestamp: 1 } },
    { type: "message", message: { role: "custom", customType: t, content: t, display: true, timestamp: 1 } },
  ];
}

/**
 * A session whose header (folder, title, parent session) and every string field of every entry
 * kind (see {@link everyFieldEntries}) hold a credential: one run of entries per shape, one path,
 * its last entries a model change and a thinking-level change (what a context's settings show).
 */
export function everyFieldSession(id: string, shapes = credentialShapes()): { text: string; lines: string[] } {
  const ts = "2026-01-01T00:00:00.000Z";
  const all = shapes.map((s) => s.text).join(" ");
  const lines = [
    JSON.stringify({
      type: "session",
      version: 3,
      id,
      timestamp: ts,
      cwd: `/srv/${all}`,
      title: all,
      parentSession: all,
    }),
    JSON.stringify({ type: "message", id: "e0", parentId: null, timestamp: ts, message: userMessage("start") }),
  ];
  let parent = "e0";
  shapes.forEach((shape, i) => {
    everyFieldEntries(shape.text).forEach((entry, j) => {
      const entryId = `f${i}-${j}`;
      lines.push(JSON.stringify({ ...entry, id: entryId, parentId: parent, timestamp: ts }));
      parent = entryId;
    });
  });
  // The context's settings come from the last of these on the path.
  const last = shapes.at(-1)?.text ?? "";
  for (const [j, entry] of [
    { type: "model_change", provider: last, modelId: last },
    { type: "thinking_level_change", thinkingLevel: last },
  ].entries()) {
    lines.push(JSON.stringify({ ...entry, id: `s${j}`, parentId: parent, timestamp: ts }));
    parent = `s${j}`;
  }
  return { text: `${lines.join("\n")}\n`, lines };
}
