/**
 * Masking what looks like a credential, with secretlint's recommended rule set (cloud keys,
 * API tokens of GitHub, npm, Slack, OpenAI, Anthropic..., private keys, passwords in URLs),
 * on each line's JSON text. A share shows and serves the masked text; the backup itself is
 * never altered.
 */
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";

const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };

/** Private keys inside JSON strings have their newlines escaped: secretlint looks for real ones. */
const ESCAPED_PRIVATE_KEY =
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:\\n|\\r|[A-Za-z0-9+/=\s])*?-----END [A-Z0-9 ]*PRIVATE KEY-----/g;

export interface Masked {
  text: string;
  count: number;
}

/**
 * Masks credentials in lines of session JSON (one secretlint pass over all of them). A line
 * whose JSON a finding would break (a cut through an escape) is replaced whole by a valid
 * placeholder entry naming what happened.
 */
export async function maskLines(lines: string[]): Promise<{ lines: string[]; count: number }> {
  let count = 0;
  const joined = lines.join("\n").replace(ESCAPED_PRIVATE_KEY, () => {
    count++;
    return "[masked private key]";
  });
  const result = await lintSource({
    source: { content: joined, filePath: "/session.jsonl", ext: ".jsonl", contentType: "text" },
    options: { config },
  });
  const ranges = result.messages
    .map((m) => ({ start: m.range[0], end: m.range[1], rule: m.ruleId.replace(/^@secretlint\/secretlint-rule-/, "") }))
    .sort((a, b) => b.start - a.start);
  let text = joined;
  let lastStart = Number.POSITIVE_INFINITY;
  for (const r of ranges) {
    if (r.end > lastStart) continue; // overlapping findings: the one already masked covers it
    text = `${text.slice(0, r.start)}[masked ${r.rule}]${text.slice(r.end)}`;
    lastStart = r.start;
    count++;
  }
  const out = text.split("\n");
  const original = joined.split("\n");
  for (let i = 0; i < out.length; i++) {
    if (out[i] === original[i]) continue;
    try {
      JSON.parse(out[i]);
    } catch {
      out[i] = JSON.stringify({ type: "masked", id: `masked-${i}`, note: "a credential was masked in this line" });
    }
  }
  return { lines: out, count };
}

/** Masks credentials in one line of session JSON, keeping it valid JSON. */
export async function maskLine(line: string): Promise<Masked> {
  const { lines, count } = await maskLines([line]);
  return { text: lines[0], count };
}

/**
 * Masks credentials in plain texts (a title, a folder, branch previews): each is masked as a
 * JSON string, so the same rules apply as to the lines they were taken from.
 */
export async function maskTexts(texts: string[]): Promise<string[]> {
  const { lines } = await maskLines(texts.map((text) => JSON.stringify(text)));
  return lines.map((line) => {
    const value = JSON.parse(line) as unknown;
    return typeof value === "string" ? value : "[masked]";
  });
}
