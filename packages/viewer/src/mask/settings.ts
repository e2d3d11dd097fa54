/**
 * Settings whose names say they hold a secret (`PASSWORD=…` in `.env` files and shell output,
 * `password: "…"`, `"api_key": "…"`, `token = '…'` in config and code). Found from the words
 * of their names: each keyword hit is widened to its name (a bounded walk each way), the name
 * is judged by its words, and the value is read after it with a sticky pattern: every part of
 * the text is looked at a bounded number of times.
 */
import type { Finding } from "./finding.js";

/** The ids of what this module finds. */
export const SETTING_RULE_IDS = ["env-secret", "generic-secret"];

/** Where a name that may hold a secret is: a keyword inside it. */
const HIT = /pass|pwd|secret|token|key|credential/gi;
const MAX_NAME = 96;

/** Words that make a name a secret's, alone or as the last of a pair. */
const SECRET_WORDS = new Set([
  "password",
  "passwd",
  "passphrase",
  "pass",
  "pwd",
  "secret",
  "secrets",
  "token",
  "apikey",
  "credential",
  "credentials",
]);
const KEY_PAIRS = new Set([
  "api",
  "access",
  "private",
  "auth",
  "secret",
  "signing",
  "encryption",
  "master",
  "client",
  "license",
]);
/** Last words of names that say what a secret is like, not what it is. */
const NOT_A_SECRET = new Set([
  "count",
  "length",
  "len",
  "limit",
  "max",
  "min",
  "type",
  "file",
  "path",
  "dir",
  "url",
  "uri",
  "name",
  "names",
  "id",
  "ids",
  "expires",
  "expiry",
  "at",
  "in",
  "ttl",
  "tokens",
  "header",
  "env",
  "var",
  "field",
  "prefix",
  "hash",
  "policy",
  "manager",
  "store",
  "rotation",
]);

/** The words of a setting's name: snake, kebab, dotted and camel case split, lower-cased. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Whether a setting of this name holds a secret. */
export function namesSecret(name: string): boolean {
  const words = wordsOf(name);
  if (words.length === 0 || NOT_A_SECRET.has(words[words.length - 1])) return false;
  if (words.length === 1 && (words[0] === "pwd" || words[0] === "key")) return false; // the shell's working folder; any key
  if (words[0] === "old" && words[1] === "pwd") return false;
  return words.some((w, i) => SECRET_WORDS.has(w) || (w === "key" && i > 0 && KEY_PAIRS.has(words[i - 1])));
}

/** Values that name a type or read a variable rather than hold a secret. */
const NOT_A_VALUE =
  /^(?:\$|%|<|\{|\[|\*{3}|x{3}|\.{3}|process\.env|os\.environ|env\.|getenv|string|str|number|int|boolean|bool|null|none|nil|undefined|true|false|required|optional|redacted|changeme|example|your[-_]|placeholder)/i;
export const isValue = (secret: string) => !NOT_A_VALUE.test(secret);

/** `NAME=value`, right after the name (env files, shell output, query strings). */
const ENV_VALUE = /=["']?([^\s"'$`]{1,1024})/y;
/**
 * `name: value`, `name = "value"`…: the value taken whole, never backtracked into (a lookahead
 * then a backreference), and not followed by more of it or a call.
 */
const CONFIG_VALUE =
  /["']?\s{0,8}(?::|=>|:=|=)\s{0,8}(["'`]?)(?=([A-Za-z0-9_\-+/=.~!@#%^&*]{8,256}))\2\1(?![A-Za-z0-9_\-+/=.~!@#%^&*([])/y;

const isNameChar = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || c === 45;

/** A value read as code rather than a literal: a dotted path, or `key=value`. */
const CODE = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[A-Za-z_]+=/;

/** The values of settings named as secrets in `text`. */
export function settingFindings(text: string): Finding[] {
  const found: Finding[] = [];
  HIT.lastIndex = 0;
  for (let hit = HIT.exec(text); hit !== null; hit = HIT.exec(text)) {
    let start = hit.index;
    const startLimit = Math.max(0, hit.index - MAX_NAME);
    while (start > startLimit && isNameChar(text.charCodeAt(start - 1))) start--;
    let end = hit.index + hit[0].length;
    const endLimit = Math.min(text.length, end + MAX_NAME);
    while (end < endLimit && isNameChar(text.charCodeAt(end))) end++;
    HIT.lastIndex = end; // the next name starts after this one
    if (start > 0 && isNameChar(text.charCodeAt(start - 1))) continue; // longer than a name
    if (end < text.length && isNameChar(text.charCodeAt(end))) continue;
    if (!namesSecret(text.slice(start, end))) continue;
    ENV_VALUE.lastIndex = end;
    const env = ENV_VALUE.exec(text);
    if (env && isValue(env[1])) {
      const at = end + env[0].length - env[1].length;
      found.push({ start: at, end: at + env[1].length, rule: "env-secret" });
      HIT.lastIndex = at + env[1].length; // names inside a masked value need no look
      continue;
    }
    CONFIG_VALUE.lastIndex = end;
    const config = CONFIG_VALUE.exec(text);
    if (!config) continue;
    const [whole, quote, value] = config;
    // Unquoted, a value must look like one: letters and digits, not code.
    if (!isValue(value) || CODE.test(value) || (!quote && !(/[0-9]/.test(value) && /[A-Za-z]/.test(value)))) continue;
    const at = end + whole.length - quote.length - value.length;
    found.push({ start: at, end: at + value.length, rule: "generic-secret" });
    HIT.lastIndex = at + value.length;
  }
  return found;
}
