/**
 * AWS account ids: secretlint reports one from the start of its name (`"AccountId": "1234…`)
 * to the end of its value, so masking its span would take the key and its opening quote with
 * it. Only the twelve digits are masked; and once a text names an account id, the same id is
 * masked wherever else the text holds it (an ARN on the next line would give it away).
 */
import type { Finding } from "./finding.js";

/** The rule id account-id masks are labelled with. */
export const ACCOUNT_ID_RULE = "aws-account-id";

/** Twelve digits that are not part of a longer number. */
const ACCOUNT_ID = /(?<![0-9])[0-9]{12}(?![0-9])/g;

/** A reported account-id span narrowed to the id it holds (its last twelve digits); others as they are. */
export function narrowAccountId(text: string, finding: Finding): Finding {
  if (finding.rule !== ACCOUNT_ID_RULE) return finding;
  const span = text.slice(finding.start, finding.end);
  let last: RegExpExecArray | undefined;
  ACCOUNT_ID.lastIndex = 0;
  for (let m = ACCOUNT_ID.exec(span); m !== null; m = ACCOUNT_ID.exec(span)) last = m;
  return last
    ? { start: finding.start + last.index, end: finding.start + last.index + 12, rule: finding.rule }
    : finding;
}

/** Every other place `text` holds an account id that a finding masks (as a number of its own). */
export function sameAccountIds(text: string, found: readonly Finding[]): Finding[] {
  const ids = new Set(
    found.filter((f) => f.rule === ACCOUNT_ID_RULE && f.end - f.start === 12).map((f) => text.slice(f.start, f.end)),
  );
  const more: Finding[] = [];
  for (const id of ids) {
    for (let at = text.indexOf(id); at >= 0; at = text.indexOf(id, at + 12)) {
      const before = text.charCodeAt(at - 1);
      const after = text.charCodeAt(at + 12);
      const digit = (code: number) => code >= 48 && code <= 57;
      if (!digit(before) && !digit(after)) more.push({ start: at, end: at + 12, rule: ACCOUNT_ID_RULE });
    }
  }
  return more;
}
