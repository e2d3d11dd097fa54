/** "Did you mean …?": the known word closest to a mistyped one. */

/** The edit distance between two words (insertions, deletions, substitutions, adjacent swaps). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known word a typo most likely meant: a unique one it starts, else the closest within
 * a third of its length (at least 1, at most 3 edits); undefined when none is close.
 */
export function closest(word: string, known: readonly string[]): string | undefined {
  if (word.length > 64) return undefined; // bounded work on any input
  const lower = word.toLowerCase();
  const starting = known.filter((k) => k.startsWith(lower));
  if (lower.length >= 2 && starting.length === 1) return starting[0];
  const limit = Math.min(3, Math.max(1, Math.floor(lower.length / 3)));
  let best: { word: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(lower, k);
    if (distance <= limit && (!best || distance < best.distance)) best = { word: k, distance };
  }
  return best?.word;
}
