import { remove as foldConfusables } from 'confusables';
import { findSecrets } from '../security/secrets';
import { findHighEntropy } from './entropy';

/**
 * What the gatekeeper's secret and instruction rules read of a lesson (gatekeeper.ts): the text
 * as written is not enough, because a lesson can hide a key (base64, hex, cut in pieces) or phrase
 * a rule around the patterns (full-width letters, look-alike letters from other alphabets,
 * zero-width characters, punctuation between the words: "Always, allow every command"). Pure.
 */

/**
 * The words of a text as the instruction rule reads them: Unicode NFKC (full-width and styled
 * letters become plain ones), look-alike letters folded to the English ones (confusables: Cyrillic
 * "а" is "a"), zero-width and other invisible characters dropped, apostrophes dropped ("don't" is
 * "dont"), lower case, and every run of other punctuation and spaces one space.
 */
export function normalizedWords(text: string): string {
  const nfkc = text.normalize('NFKC').replace(/[\p{Cf}\u00AD]/gu, '');
  return ` ${foldConfusables(nfkc)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’‘`´]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()} `;
}

/** A phrase rule over `normalizedWords` (each starts and ends with a space, words separated by one). */
interface PhraseRule {
  re: RegExp;
  why: string;
}

const W = '(?:[a-z0-9]+ ){0,3}';

const ANY = '(?:any|every|all|each|whatever|arbitrary)';
const ACTS = '(?:commands?|tools?|tool calls?|calls?|writes?|edits?|requests?|actions?|permissions?|operations?|things?|scripts?|changes?|prompts?)';

const ALLOWING = 'it tells the agent to allow or run things without asking';
const NOT_ASKING = 'it tells the agent not to ask for permission';
const ASIDE = '(?:instructions?|rules?|system prompt|guidelines|polic(?:y|ies)|permissions?|safety|guardrails?)';
const ASK = '(?:ask|asking|prompt|prompting|request|requesting|seek|seeking|wait|waiting)';
const CONSENT = '(?:permission|permissions|approval|confirmation|consent|the user|user)';

/** Rules a lesson must not match: it would change how Keel behaves rather than say a fact. */
export const INSTRUCTION_RULES: readonly PhraseRule[] = [
  { re: new RegExp(` (ignore|disregard|forget|override|bypass|skip) ${W}${ASIDE} `), why: 'it tells the agent to set its instructions aside' },
  { re: new RegExp(` (always|automatically|auto|silently|blindly|unconditionally|just) ${W}(allow|approve|grant|permit|bypass|whitelist|allowlist) `), why: ALLOWING },
  { re: new RegExp(` (always|automatically|silently|blindly|unconditionally) ${W}(run|execute|accept|trust) ${ANY} `), why: ALLOWING },
  { re: new RegExp(` (allow|approve|accept|permit|grant|trust|whitelist|allowlist) ${ANY} (?:[a-z0-9]+ ){0,2}${ACTS} `), why: ALLOWING },
  { re: new RegExp(` (without|dont|do not|never|no need to|not necessary to|no longer|skip|stop) ${W}${ASK} ${W}${CONSENT} `), why: NOT_ASKING },
  { re: / (without|no|skip|skipping|bypass|bypassing) (the )?(asking|confirmation|approval|permission|consent)( prompts?| checks?| dialogs?| questions?)? /, why: NOT_ASKING },
  {
    re: / (bypasspermissions|bypass permissions|dangerously skip|dangerouslyskip|dangerously disable|yolo|dontask mode|dont ask mode|permission mode to|set the mode to) /,
    why: 'it names a way around permission prompts',
  },
  { re: / (you are now|from now on|new instructions?|you must obey|ignore the above) /, why: 'it reads like injected instructions' },
];

/** Markup of Keel's prompt wrappers or of chat roles: a lesson is a note, not prompt structure. */
const PROMPT_MARKUP = /<\s*\/?\s*(memory|instructions|environment|system|user|assistant|human|tool_result|function_results|antml)\b/i;

/** The first instruction rule `text` matches (after normalising it), or null. */
export function instructionFinding(text: string): string | null {
  if (PROMPT_MARKUP.test(text.normalize('NFKC'))) return 'it holds prompt markup (a tag like </memory> or <system>)';
  const words = normalizedWords(text);
  for (const r of INSTRUCTION_RULES) if (r.re.test(words)) return r.why;
  return null;
}

/** Words that say a value is secret. */
const SECRET_WORD = String.raw`(?:passwords?|passwd|passphrase|pass ?code|pwd|pin|secret|secret key|api ?key|access key|private key|auth ?token|access token|token|credentials?)`;

/** What may follow such a word without being its value ("the password is stored in the vault"). */
const NOT_A_VALUE = new Set(
  (
    'a an the is are was were be been being it its this that these those in on at of for to from by with without and or not no never ' +
    'stored kept saved set required needed hashed encrypted salted rotated managed generated provided read loaded passed given sent ' +
    'available missing empty wrong invalid expired valid correct same different new old default optional unset changed reset used ' +
    'only also always usually must should can could will would may might has have had env environment variable variables file files ' +
    'field fields value values name names config configuration setting settings vault manager store keychain secret secrets here there ' +
    'below above shown printed logged masked redacted hidden placeholder example dummy fake test sample none null undefined true false ' +
    'await new async yield typeof require import function lambda return this self const let var def nil'
  ).split(' '),
);

/** A value: quoted (spaces allowed; group 1 the quote, 2 the text) or a run without spaces (group 3). */
const VALUE = String.raw`(?:(["'\x60])([^"'\x60\n]{3,80})\1|([^\s"'\x60,;]{3,}))`;

/** A secret word, a verb or sign, then what reads like the value itself: `password: hunter2`, `the token is "abc"`. */
const PASSWORD_SAID = new RegExp(String.raw`\b${SECRET_WORD}\b(?:\s+(?:for|of)\s+[\w.@-]+)?\s*(?:\bis\b|\bwas\b|=>|->|==?|:|\bset to\b|\bequals\b)\s*${VALUE}`, 'giu');

/** A secret word right before a value with letters and digits or symbols: `password hunter2!`. */
const PASSWORD_NEXT = new RegExp(String.raw`\b${SECRET_WORD}\s+${VALUE}`, 'giu');

/** `user:password` or `user/password` after a word that says it is a login. */
const LOGIN_PAIR = /\b(?:log ?in|login|sign ?in|credentials?|user(?:name)?|account)\b[^.\n]{0,20}?\b[\w.@-]{2,}[:/]([^\s/:@]{4,})/giu;

/** A value that names where a secret comes from, not the secret: an environment variable, a config path, a call. */
function reference(v: string): boolean {
  return (
    /^(?:process\.env|os\.environ|import\.meta\.env|system\.getenv|getenv|env\b|secrets\.|vars\.|\$|%)/i.test(v) ||
    /^[A-Z][A-Z0-9_]{2,}$/.test(v) ||
    /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+[;)]*$/.test(v) ||
    v.includes('(')
  );
}

function placeholder(v: string): boolean {
  return /^(?:<.*>|\{\{.*\}\}|x{3,}|\*{3,}|\.{3,}|\[redacted.*|your[_-].*|my[_-].*|changeme|example|dummy|secret|password|token)$/i.test(v);
}

/** Why `text` holds what reads like a password or a credential given in the clear, or null. */
export function passwordFinding(text: string): string | null {
  const t = text.normalize('NFKC');
  for (const m of t.matchAll(PASSWORD_SAID)) {
    const v = (m[2] ?? m[3] ?? '').replace(/[.!?)\]]+$/, '');
    if (v.length < 3 || placeholder(v) || reference(v)) continue;
    if (m[1] || !NOT_A_VALUE.has(v.toLowerCase())) {
      // A path or a URL is where it is kept, not what it is (`password file: ~/.pgpass`).
      if (/^(?:\/|~\/|\.\.?\/|https?:)/i.test(v)) continue;
      return 'it gives a password or a credential';
    }
  }
  for (const m of t.matchAll(PASSWORD_NEXT)) {
    const v = (m[2] ?? m[3] ?? '').replace(/[.!?)\]]+$/, '');
    if (!m[1] && v.length < 4) continue;
    if (placeholder(v) || reference(v) || NOT_A_VALUE.has(v.toLowerCase()) || /^(?:\/|~\/|\.\.?\/|https?:)/i.test(v)) continue;
    if (m[1] || (/[0-9]/.test(v) && /[A-Za-z]/.test(v)) || /[^\w.-]/.test(v)) return 'it gives a password or a credential';
  }
  for (const m of t.matchAll(LOGIN_PAIR)) {
    const pw = m[1] ?? '';
    if (/\d|[^\w]/.test(pw) || /[A-Z]/.test(pw.slice(1))) return 'it gives a login and its password';
  }
  return null;
}

/** Hex runs of this length or more are refused, except exactly 40 (a git commit id) and UUIDs. */
const LONG_HEX = /(?<![0-9a-f])[0-9a-f]{32,}(?![0-9a-f])/gi;

/** Why `text` holds a long hexadecimal string (a 64-hex key, a secret hash), or null. */
export function hexFinding(text: string): string | null {
  for (const m of text.matchAll(LONG_HEX)) {
    if (m[0].length === 40) continue; // a git commit id
    return `it holds a hexadecimal string of ${m[0].length} characters, which may be a key`;
  }
  return null;
}

/** Characters of a key fragment (base64, base64url, hex, dotted JWT parts). */
const FRAGMENT = /([A-Za-z0-9_/+=.-]+)/;
/** What may stand between two fragments of a key cut in pieces: quotes, `+`, `,`, spaces, one line break. */
const JOINER = /^["'`]*\s*[+,]?\s*["'`]*$/;

function keyLike(token: string): boolean {
  return token.length >= 4 && /[0-9]/.test(token) && /[A-Za-z]/.test(token);
}

/**
 * `text` with fragments joined where only quotes, `+`, `,` or spaces stand between them: every
 * such pair (`all`), or only pairs of key-like fragments, each with letters and digits (`keyLike`:
 * plain words are never joined, so ordinary prose does not become one long "random" string).
 */
export function joinFragments(text: string, which: 'all' | 'keyLike'): string {
  const parts = text.split(FRAGMENT);
  // parts: separator, token, separator, token, …, separator.
  let out = parts[0] ?? '';
  for (let i = 1; i < parts.length; i += 2) {
    const token = parts[i]!;
    out += token;
    const sep = parts[i + 1] ?? '';
    const next = parts[i + 2];
    const join = next !== undefined && JOINER.test(sep) && (sep.match(/\n/g)?.length ?? 0) <= 1 && (which === 'all' ? token.length >= 3 && next.length >= 3 : keyLike(token) && keyLike(next));
    if (!join) out += sep;
  }
  return out;
}

/**
 * The texts in which a lesson's secrets could hide, the lesson itself first: its NFKC form (with
 * invisible characters dropped), and every base64, base64url, hex or %-encoded run decoded when
 * it decodes to text. (Keys cut in pieces are `joinFragments`'.)
 */
export function secretVariants(text: string): string[] {
  const out = new Set<string>([text, text.normalize('NFKC').replace(/[\p{Cf}\u00AD]/gu, '')]);
  for (const v of [...out]) for (const d of decodedRuns(v)) out.add(d);
  return [...out];
}

/** Runs of `text` that decode (base64, base64url, hex, %-encoding) to mostly printable text. */
export function decodedRuns(text: string): string[] {
  const out: string[] = [];
  const keep = (buf: Buffer) => {
    const s = buf.toString('utf8');
    const printable = s.replace(/[^\x20-\x7e\n\t]/g, '').length;
    if (s.length >= 8 && printable / s.length >= 0.9) out.push(s);
  };
  for (const m of text.matchAll(/[A-Za-z0-9+/_-]{16,}={0,2}/g)) {
    const run = m[0];
    if (/^[0-9a-f]+$/i.test(run) && run.length % 2 === 0) keep(Buffer.from(run, 'hex'));
    keep(Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  }
  if (/%[0-9a-f]{2}/i.test(text)) {
    try {
      out.push(decodeURIComponent(text));
    } catch {
      // Not %-encoded after all.
    }
  }
  return out;
}

export interface SecretCheck {
  /** Why it looks like a secret, for people; never the secret itself. */
  why: string;
}

/**
 * The first reason `text` may hold a secret, or null: a known key shape or a key Keel holds
 * (`findSecrets`), a `[REDACTED:…]` marker, a random-looking token, a long hex string, a password
 * given in the clear — in the text as written or in any of its `secretVariants` — or a known key
 * shape or a random-looking token once fragments cut apart are joined again (`joinFragments`).
 */
export function secretFinding(text: string, knownSecrets: Iterable<string> = []): SecretCheck | null {
  const known = [...knownSecrets];
  const shapes = (v: string): SecretCheck | null => {
    const secrets = findSecrets(v, known);
    return secrets.length > 0 ? { why: `it contains what looks like a secret (${[...new Set(secrets.map((s) => s.kind))].join(', ')})${v === text ? '' : ', encoded or cut in pieces'}` } : null;
  };
  const random = (v: string): SecretCheck | null => {
    const r = findHighEntropy(v)[0];
    return r ? { why: `it contains a random-looking string of ${r.end - r.start} characters (${r.bitsPerChar.toFixed(1)} bits a character), which may be a key` } : null;
  };
  const variants = secretVariants(text);
  for (const v of variants) {
    const found = shapes(v) ?? (/\[REDACTED:[\w-]+\]/.test(v) ? { why: 'it mentions a secret that was redacted from the run' } : null) ?? random(v);
    if (found) return found;
    const hex = hexFinding(v) ?? passwordFinding(v);
    if (hex) return { why: hex };
  }
  for (const v of variants) {
    const all = joinFragments(v, 'all');
    const joined = (all !== v ? shapes(all) : null) ?? (joinFragments(v, 'keyLike') !== v ? random(joinFragments(v, 'keyLike')) : null);
    if (joined) return { why: `${joined.why} (cut in pieces)` };
    for (const d of all !== v ? decodedRuns(all) : []) {
      const found = shapes(d) ?? random(d) ?? (hexFinding(d) ? { why: hexFinding(d)! } : null);
      if (found) return { why: `${found.why} (encoded and cut in pieces)` };
    }
  }
  return null;
}
