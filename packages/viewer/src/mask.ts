/**
 * Masking what looks like a credential in what a share shows: secretlint's recommended rules
 * plus pisync's own (see `mask/rules.ts`), run on the decoded text of every string of a line,
 * never on its JSON text. Each finding is replaced in place by `[masked: <rule>]`, so a line
 * stays valid JSON with the same ids. A share shows and serves the masked text; the backup
 * itself is never altered.
 */
import { type Masked, maskJsonLine, maskText } from "./mask/json-line.js";

export { type Masked, maskJsonLine, maskText };

/** Masks credentials in lines of session JSON, each kept a valid line with the same ids. */
export async function maskLines(lines: string[]): Promise<{ lines: string[]; count: number }> {
  let count = 0;
  const out = lines.map((line) => {
    const masked = maskJsonLine(line);
    count += masked.count;
    return masked.text;
  });
  return { lines: out, count };
}

/** Masks credentials in one line of session JSON, keeping it valid JSON. */
export async function maskLine(line: string): Promise<Masked> {
  return maskJsonLine(line);
}

/** Masks credentials in plain texts (a title, a folder, branch previews, labels). */
export async function maskTexts(texts: string[]): Promise<string[]> {
  return texts.map((text) => maskText(text).text);
}
