/** A credential found in a text: the span `[start, end)` and the rule that found it. */
export interface Finding {
  start: number;
  end: number;
  rule: string;
}
