/**
 * Words for memory search and duplicate detection: split on spaces and punctuation and at
 * camelCase humps (`getUserName` → get, user, name), lowercased, common English words dropped,
 * light suffix stripping so "tests" finds "test" and "running" finds "run".
 */
const STOPWORDS = new Set(
  [
    'a about above after again against all am an and any are as at be because been before being below between both',
    'but by can could did do does doing down during each few for from further had has have having he her here hers',
    'him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our',
    'ours out over own same she should so some such than that the their theirs them then there these they this',
    'those through to too under until up very was we were what when where which while who whom why will with would',
    'you your yours let lets please make sure use used using also need needs want get got',
  ]
    .join(' ')
    .split(' '),
);

const SPLIT = /[^\p{L}\p{N}]+/u;

/** The raw tokens of a text, before stemming: pieces between punctuation, and their camelCase parts. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const piece of text.split(SPLIT)) {
    if (!piece) continue;
    const parts = piece.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u);
    if (parts.length > 1) out.push(...parts);
    out.push(piece);
  }
  return out;
}

/** One token as the index stores it, or null for a word that says nothing (a stopword, a single letter). */
export function normalizeTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.length < 2 || STOPWORDS.has(t)) return null;
  if (/^\d+$/.test(t) && t.length < 2) return null;
  return stem(t);
}

/** The distinct normalized terms of a text, in first-seen order. */
export function terms(text: string): string[] {
  const seen = new Set<string>();
  for (const tok of tokenize(text)) {
    const n = normalizeTerm(tok);
    if (n) seen.add(n);
  }
  return [...seen];
}

function stem(t: string): string {
  if (t.length <= 4 || /\d/.test(t)) return t;
  let w = t;
  if (w.endsWith('ies') && w.length > 5) return `${w.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(w)) return w;
  if (w.endsWith('ing') && w.length > 6) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 5) w = undouble(w.slice(0, -2));
  else if (w.endsWith('s')) w = w.slice(0, -1);
  // "cache", "caches" and "cached" meet at "cach"; "configure(d)" at "configur".
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** "running" → "runn" → "run"; "configured" → "configur" stays. */
function undouble(t: string): string {
  return /([bdfglmnprt])\1$/.test(t) ? t.slice(0, -1) : t;
}

/** Cosine similarity of two texts' term-frequency vectors (0..1). */
export function similarity(a: string, b: string): number {
  const va = vector(a);
  const vb = vector(b);
  let dot = 0;
  for (const [k, x] of va) dot += x * (vb.get(k) ?? 0);
  const norm = (v: Map<string, number>) => Math.sqrt([...v.values()].reduce((s, x) => s + x * x, 0));
  const d = norm(va) * norm(vb);
  return d === 0 ? 0 : dot / d;
}

function vector(text: string): Map<string, number> {
  const v = new Map<string, number>();
  for (const tok of tokenize(text)) {
    const n = normalizeTerm(tok);
    if (n) v.set(n, (v.get(n) ?? 0) + 1);
  }
  return v;
}
