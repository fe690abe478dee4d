/**
 * Levenshtein distance (insert, delete, substitute each cost 1), compared case-insensitively
 * and ignoring `_` and `-`, so `fan_out`, `Fan-Out` and `fanout` are all 0 apart.
 */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase().replace(/[_-]/g, '');
  const y = b.toLowerCase().replace(/[_-]/g, '');
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[y.length];
}

/**
 * The candidate closest to `word`, if it is close enough to be what was meant: at most a third
 * of the word's length away (at least 1, at most 3 edits), so `attemps` → `attempts` but `foo`
 * suggests nothing. Ties go to the earlier candidate. Failing that, the one candidate that
 * contains the word (of 4 letters or more) whole: `budget` → `retryBudget`.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best ?? containing(word, candidates);
}

function containing(word: string, candidates: readonly string[]): string | undefined {
  if (word.length < 4) return undefined;
  const w = word.toLowerCase();
  const hits = candidates.filter((c) => c.toLowerCase().includes(w));
  return hits.length === 1 ? hits[0] : undefined;
}

/** ` (did you mean x?)` when a candidate is close to `word`, else ''. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : ` (did you mean ${c}?)`;
}
