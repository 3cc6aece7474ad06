import { KEEL_SECRET_PATTERNS, type SecretPattern } from './secretPatterns';
import { secretlintScan } from './secretlintRules';

/**
 * The secret detector: secretlint's maintained recommended rules (secretlintRules.ts), Keel's own
 * shapes (secretPatterns.ts), and the exact values of the keys Keel holds. One module, so that
 * everything that must not repeat a secret — tool results, live tool output, the task log, and
 * later project memory — uses the same judgement.
 *
 * Limits, stated plainly: this catches secrets that appear as themselves. A program (or a model)
 * that transforms one (base64, reversed, cut into pieces) gets past any output filter; what keeps
 * Keel's own keys out of reach is that tool processes never get them (toolEnvironment.ts).
 */
export interface SecretFinding {
  start: number;
  end: number;
  /** What it looks like: `anthropic-key`, `aws`, `private-key`, `assignment`, `known-value`, … */
  kind: string;
}

/** Known values shorter than this are not searched for: replacing them everywhere would garble output. */
export const MIN_KNOWN_SECRET_LENGTH = 8;

/** secretlint's names where Keel has its own for the same thing. */
const KIND_ALIASES: Record<string, string> = { privatekey: 'private-key' };

/** The URL rules of secretlint report a whole URL; only its password is secret. */
const URL_RULES = new Set(['basicauth', 'database-connection-string']);
const URL_PASSWORD = /^[a-zA-Z][a-zA-Z0-9+.:-]{1,30}\/\/[^\s:/@]{1,256}:([^\s@/]{1,256})@/;

interface CompiledPattern extends SecretPattern {
  /** The pattern's regex, global. */
  regex: RegExp;
  /** The same, sticky: tried at one position. */
  sticky: RegExp;
}

function compile(p: SecretPattern, indices: boolean): CompiledPattern {
  const flags = [...p.regex.flags].filter((f) => f !== 'd' && f !== 'g' && f !== 'y').join('') + (indices ? 'd' : '');
  return { ...p, regex: new RegExp(p.regex.source, `${flags}g`), sticky: new RegExp(p.regex.source, `${flags}y`) };
}

/**
 * With the `d` flag, so a capture group's position is known exactly (findSecrets); without it
 * for a yes/no answer (containsSecret), which needs no positions and is cheaper without them.
 */
const PATTERNS = KEEL_SECRET_PATTERNS.map((p) => compile(p, true));
const PATTERNS_NO_INDICES = KEEL_SECRET_PATTERNS.map((p) => compile(p, false));

/** One text's candidate starts, worked out once per scan for the patterns that share a `starts`. */
type StartsMemo = Map<NonNullable<SecretPattern['starts']>, number[] | null>;

/**
 * Every match of `p` in `text`: the same ones, in the same order, as `text.matchAll(p.regex)`.
 * With `starts`, the sticky regex is tried only at those positions, in ascending order, each at
 * most once and none inside an earlier match — matchAll's own leftmost-first, non-overlapping walk,
 * restricted to the places where a match can start.
 */
function* matchesOf(p: CompiledPattern, text: string, memo: StartsMemo): Generator<RegExpExecArray> {
  let starts: number[] | null = null;
  if (p.starts) {
    if (!memo.has(p.starts)) memo.set(p.starts, p.starts(text)?.sort((a, b) => a - b) ?? null);
    starts = memo.get(p.starts) ?? null;
  }
  if (!starts) {
    yield* text.matchAll(p.regex);
    return;
  }
  let next = 0;
  for (const start of starts) {
    if (start < next) continue;
    p.sticky.lastIndex = start;
    const m = p.sticky.exec(text);
    next = start + 1;
    if (!m) continue;
    yield m;
    // An empty match moves on by one, as matchAll does (no pattern has one).
    next = Math.max(next, start + m[0].length);
  }
}

/**
 * Every secret in `text`, sorted by position, overlapping findings merged (the first kind wins).
 * `knownValues`: exact strings to find wherever they appear (Keel's keys). Never throws.
 */
export function findSecrets(text: string, knownValues: Iterable<string> = []): SecretFinding[] {
  if (text.length === 0) return [];
  const found: SecretFinding[] = [];
  for (const hit of secretlintScan(text)) {
    if (hit.end <= hit.start) continue;
    if (URL_RULES.has(hit.rule)) {
      const m = URL_PASSWORD.exec(text.slice(hit.start, hit.end));
      if (m?.[1]) {
        const at = hit.start + m[0].length - 1 - m[1].length;
        found.push({ start: at, end: at + m[1].length, kind: hit.rule });
        continue;
      }
    }
    found.push({ start: hit.start, end: hit.end, kind: KIND_ALIASES[hit.rule] ?? hit.rule });
  }
  const memo: StartsMemo = new Map();
  for (const p of PATTERNS) {
    for (const m of matchesOf(p, text, memo)) {
      const span = m.indices?.[p.group ?? 0];
      if (!span || span[1] <= span[0]) continue;
      if (p.accept && !p.accept(text.slice(span[0], span[1]))) continue;
      found.push({ start: span[0], end: span[1], kind: p.kind });
    }
  }
  for (const value of knownValues) {
    if (value.length < MIN_KNOWN_SECRET_LENGTH) continue;
    for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length)) {
      found.push({ start: at, end: at + value.length, kind: 'known-value' });
    }
  }
  return merge(found);
}

/**
 * True when `text` holds something that looks like a secret (for refusing to store it): exactly
 * when `findSecrets(text, knownValues)` is not empty, but it stops at the first finding and does
 * not work out where each one is (every checkpointed before-image is scanned: 100 KB of source
 * per Write). Never throws.
 */
export function containsSecret(text: string, knownValues: Iterable<string> = []): boolean {
  if (text.length === 0) return false;
  for (const value of knownValues) if (value.length >= MIN_KNOWN_SECRET_LENGTH && text.includes(value)) return true;
  const memo: StartsMemo = new Map();
  for (const p of PATTERNS_NO_INDICES) {
    for (const m of matchesOf(p, text, memo)) {
      // findSecrets keeps a match whose redacted part is not empty and passes `accept`.
      const value = m[p.group ?? 0];
      if (value && (!p.accept || p.accept(value))) return true;
    }
  }
  // findSecrets keeps every non-empty secretlint hit (a URL rule's as its password or whole).
  return secretlintScan(text).some((hit) => hit.end > hit.start);
}

/**
 * `text` with every secret replaced by `[REDACTED:<kind>]`. Idempotent: redacting twice gives the
 * same text. Returns `text` itself when nothing was found. Never throws.
 */
export function redactSecrets(text: string, knownValues: Iterable<string> = []): string {
  const findings = findSecrets(text, knownValues);
  if (findings.length === 0) return text;
  let out = '';
  let at = 0;
  for (const f of findings) {
    out += `${text.slice(at, f.start)}[REDACTED:${f.kind}]`;
    at = f.end;
  }
  return out + text.slice(at);
}

function merge(found: SecretFinding[]): SecretFinding[] {
  if (found.length < 2) return found;
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: SecretFinding[] = [];
  for (const f of found) {
    const last = out[out.length - 1];
    if (last && f.start < last.end) last.end = Math.max(last.end, f.end);
    else out.push({ ...f });
  }
  return out;
}
