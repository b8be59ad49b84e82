/**
 * "Did you mean": the known name closest to a mistyped one, or null when none is close. Close means one a prefix of
 * the other, at most three letters apart (`gpu` → `gpus`), or at most two edits apart (one when either name has
 * four letters or fewer, so `cpu` never suggests `gpu`), compared case-insensitively; ties go to the first by name.
 */
export function closestName(wrong: string, known: readonly string[]): string | null {
  const w = wrong.toLowerCase();
  let best: { name: string; score: number } | null = null;
  for (const name of known) {
    const n = name.toLowerCase();
    if (n === w) return name;
    const prefix = n.startsWith(w) || w.startsWith(n) ? Math.abs(n.length - w.length) : Infinity;
    const edits = editDistance(w, n);
    const allowed = Math.min(w.length, n.length) <= 4 ? 1 : 2;
    const score = Math.min(prefix <= 3 && Math.min(w.length, n.length) >= 3 ? prefix : Infinity, edits <= allowed ? edits : Infinity);
    if (score !== Infinity && (best === null || score < best.score || (score === best.score && name < best.name))) best = { name, score };
  }
  return best?.name ?? null;
}

/** Levenshtein distance (insertions, deletions, substitutions), two rows of memory. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
