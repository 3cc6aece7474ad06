/**
 * High-entropy strings: random-looking tokens that are probably keys even when no known pattern
 * names them (a generic API token, a password someone pasted). A candidate is a run of 20 or more
 * characters from the key alphabets (letters, digits, `+/=_-`) mixing letters and digits, whose
 * Shannon entropy is close to what random characters of that length give. Ordinary identifiers,
 * paths, UUIDs and git commit hashes stay below the bar (a test holds them there).
 */
export interface EntropyFinding {
  start: number;
  end: number;
  bitsPerChar: number;
}

const CANDIDATE = /[A-Za-z0-9+/=_-]{20,}/g;

export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Every high-entropy token of `text`. Never throws. */
export function findHighEntropy(text: string): EntropyFinding[] {
  const out: EntropyFinding[] = [];
  for (const m of text.matchAll(CANDIDATE)) {
    // Path-like runs (src/core/memory/entropy) are words joined by separators: judge each piece.
    for (const piece of splitPieces(m[0], m.index)) {
      const s = piece.text;
      if (s.length < 20 || !/[0-9]/.test(s) || !/[A-Za-z]/.test(s)) continue;
      const hexOnly = /^[0-9a-f-]+$/i.test(s);
      if (hexOnly) continue; // commit hashes, UUIDs, checksums: too common in notes to refuse
      const bits = shannonEntropy(s);
      // Random characters drawn from ~64 symbols give about log2(length) bits up to 6; ask for 85% of that.
      const bar = 0.85 * Math.min(Math.log2(s.length), 6);
      if (bits >= bar && classes(s) >= 3) out.push({ start: piece.start, end: piece.start + s.length, bitsPerChar: bits });
    }
  }
  return out;
}

function splitPieces(run: string, at: number): { text: string; start: number }[] {
  if (!run.includes('/') || /[+=]/.test(run)) return [{ text: run, start: at }];
  const out: { text: string; start: number }[] = [];
  let offset = 0;
  for (const p of run.split('/')) {
    out.push({ text: p, start: at + offset });
    offset += p.length + 1;
  }
  return out;
}

/** How many of lowercase, uppercase, digits and symbols a token mixes. */
function classes(s: string): number {
  return [/[a-z]/, /[A-Z]/, /[0-9]/, /[+/=_-]/].filter((r) => r.test(s)).length;
}
