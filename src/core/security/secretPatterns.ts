/**
 * Keel's own secret shapes, for what secretlint's recommended rules (secretlintRules.ts) do not
 * cover or cover only in one exact form: JWTs, every private-key PEM block (encrypted, PGP, short,
 * cut off before its END line), every `sk-ant-…` kind and other `sk-` keys, Stripe, Google API
 * keys, Slack `xoxs-`/`xoxe-`, credentials in URLs, `Authorization:` headers, and values assigned
 * to names that say they are secret (`GITHUB_TOKEN=…`, `"client_secret": "…"`, `password: …`).
 *
 * Each pattern names the part to redact: the whole match, or one capture group (then the name of
 * an assignment or the user of a URL stays readable: `GITHUB_TOKEN=[REDACTED:assignment]`).
 * Every pattern is linear (no nested quantifiers over the same characters), so a hostile 30 KB
 * output cannot make it backtrack for long.
 */
export interface SecretPattern {
  kind: string;
  regex: RegExp;
  /** Capture group to redact; 0 or absent: the whole match. */
  group?: number;
  /** Extra check on the redacted text (drops look-alikes that are not random enough). */
  accept?(value: string): boolean;
  /**
   * Where in `text` a match may start: every position where the regex can match must be listed
   * (more, or twice, is harmless); null: anywhere. secrets.ts then tries the regex only at these
   * positions, in order, which finds exactly the matches a scan of the whole text finds — the
   * regex itself is the same. A list that leaves out a real start loses secrets, so each one says
   * why it cannot (and test/unit/security/secretScanEquivalence.test.ts checks them against a
   * whole scan on generated text). Used where the regex alone costs ~0.2–1 ms per 100 KB.
   */
  starts?(text: string): number[] | null;
}

/**
 * Names that say their value is a secret: the end of the name decides (`*_TOKEN`, not `TOKENIZER`).
 * The look-behind makes a name start only where a word starts, which keeps the scan linear.
 */
const SECRET_NAME_ENDS =
  '(?:api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|master[_-]?key|signing[_-]?key|' +
  'encryption[_-]?key|client[_-]?secret|secret|secrets|token|password|passwd|passphrase|credentials?|_auth|auth[_-]?token)';
const SECRET_NAME = `(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?${SECRET_NAME_ENDS}`;

/** Above this many candidate starts per character of text, a whole scan is cheaper than trying each. */
const MAX_STARTS_PER_CHAR = 1 / 16;

/** `[A-Za-z0-9_.-]` (also under the `i` flag: no other character folds into it). */
function nameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46 || c === 45;
}

function blank(c: number): boolean {
  return c === 32 || c === 9;
}

/** A secret name's end where a run of name characters ends (the `i` flag: any case, as the patterns). */
const NAME_END_AT_RUN_END = new RegExp(`${SECRET_NAME_ENDS}(?![A-Za-z0-9_.-])`, 'gi');

/**
 * Where the three assignment patterns below may start. Why this list holds every start: in each,
 * SECRET_NAME is followed by `=`, `:`, a quote or a blank — never a name character — and its
 * look-behind lets it start only where a run of name characters starts, while its lazy prefix and
 * its endings are all name characters. So the name is a whole run of name characters that ends
 * with one of the endings, and NAME_END_AT_RUN_END finds the end of every such run (its matches lie
 * inside one run, end at the run's end, and the scan resumes there). From the run's start `p`:
 * `["']?${SECRET_NAME}` starts at `p` or `p - 1`; `^[ \t]*${SECRET_NAME}` at the start of the blanks
 * before `p`; `^[ \t]*(?:export[ \t]+)?${SECRET_NAME}` there too, or, when those blanks follow
 * `export` (any case), at the start of the blanks before it.
 */
function secretNameStarts(text: string): number[] | null {
  const out: number[] = [];
  for (const m of text.matchAll(NAME_END_AT_RUN_END)) {
    let p = m.index;
    while (p > 0 && nameChar(text.charCodeAt(p - 1))) p--;
    if (p > 0) out.push(p - 1);
    out.push(p);
    let line = p;
    while (line > 0 && blank(text.charCodeAt(line - 1))) line--;
    out.push(line);
    if (line < p && line >= 6 && text.slice(line - 6, line).toLowerCase() === 'export') {
      let before = line - 6;
      while (before > 0 && blank(text.charCodeAt(before - 1))) before--;
      out.push(before);
    }
    if (out.length > text.length * MAX_STARTS_PER_CHAR) return null;
  }
  return out;
}

/**
 * Where url-password may start: its scheme, `[a-zA-Z][a-zA-Z0-9+.-]{1,20}`, has neither `:` nor
 * `/`, so the first `://` of a match comes 2 to 21 characters after its start.
 */
function urlStarts(text: string): number[] | null {
  const out: number[] = [];
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 1)) {
    for (let s = Math.max(0, at - 21, (out[out.length - 1] ?? -1) + 1); s <= at - 2; s++) out.push(s);
    if (out.length > text.length * MAX_STARTS_PER_CHAR) return null;
  }
  return out;
}

/** Several digits and letters: what a generated key has and a word, a path or a CSS class has not. */
function mixed(value: string): boolean {
  let digits = 0;
  let letters = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters++;
  }
  return digits >= 2 && letters >= 2;
}

const PLACEHOLDER = /^(?:\[REDACTED|<|\$\{|\$\(|%|\{\{)|^(?:x+|\*+|\.+|changeme|change_me|example|placeholder|redacted|undefined|null|none|true|false|your[_-].*|my[_-].*)$/i;

/** A value assigned to a secret-looking name, unless it is a placeholder, a path or a reference. */
function assignedValue(value: string): boolean {
  if (value.length < 8 || PLACEHOLDER.test(value)) return false;
  if (/^(?:\/|~\/|\.\.?\/)/.test(value)) return false;
  return mixed(value) || (value.length >= 16 && /[A-Za-z]/.test(value));
}

export const KEEL_SECRET_PATTERNS: readonly SecretPattern[] = [
  // Any private key block, to its END line or, cut off, to the end of the text.
  { kind: 'private-key', regex: /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g },
  { kind: 'putty-private-key', regex: /PuTTY-User-Key-File-\d+:[^\n]*\n(?:[^\n]*\n){0,4}?Private-Lines: *\d+\n(?:[A-Za-z0-9+/=]+\n?){1,200}/g },
  // Anthropic: sk-ant-api03-…, sk-ant-admin01-…, sk-ant-oat01-… (OAuth), any future kind.
  { kind: 'anthropic-key', regex: /sk-ant-[a-z]{2,10}\d{2}-[A-Za-z0-9_-]{16,}/g },
  // OpenAI (sk-proj-…, sk-svcacct-…, sk-admin-…, legacy sk-…) and the many APIs that copied the shape.
  { kind: 'sk-key', regex: /(?<![A-Za-z0-9_-])sk-(?:[a-z]{2,10}-)?[A-Za-z0-9_-]{24,}/g, accept: mixed },
  { kind: 'jwt', regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: 'github-token', regex: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/g },
  { kind: 'slack-token', regex: /(?<![A-Za-z0-9])xox[abeoprs]-[A-Za-z0-9-]{10,}/g, accept: mixed },
  { kind: 'aws-access-key-id', regex: /(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])/g },
  // secretlint's needs a word boundary after the key, which a key ending in `/` or `+` lacks.
  { kind: 'aws-secret-key', regex: /(?<![A-Za-z0-9_])(?:aws_?)?secret_?access_?key["']?[ \t]*(?::|=>|=)[ \t]*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi, group: 1 },
  { kind: 'stripe-key', regex: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  // SendGrid keys may hold `-` in either part (secretlint's rule allows it in neither).
  { kind: 'sendgrid', regex: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { kind: 'google-api-key', regex: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  // user:password@ in any URL (git remotes with tokens, database URLs): the password only.
  { kind: 'url-password', regex: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s:/@'"]{1,256}:([^\s@/'"]{3,256})@/g, group: 1, accept: (v) => !PLACEHOLDER.test(v), starts: urlStarts },
  { kind: 'auth-header', regex: /\b(?:proxy-)?authorization\s*:\s*(?:bearer|basic|token|bot|digest)\s+([A-Za-z0-9._~+/=-]{8,})/gi, group: 1 },
  // A header, not the user of a URL (`https://x-access-token:…@github.com` is url-password's).
  { kind: 'auth-header', regex: /(?<![A-Za-z0-9_/.-])(?:x-api-key|api-key|x-auth-token|x-goog-api-key|x-access-token)\s*:\s*([^\s"',;@]{8,})/gi, group: 1 },
  // npm: //registry/:_authToken=…, _auth=…
  { kind: 'npm-auth', regex: /(?:^|[:\s])_auth(?:Token)?\s*=\s*([^\s"']{8,})/gm, group: 1, accept: (v) => !PLACEHOLDER.test(v) },
  // NAME=value lines (printenv, env, .env files, `export NAME=…`), quoted or not.
  { kind: 'assignment', regex: new RegExp(`^[ \\t]*(?:export[ \\t]+)?${SECRET_NAME}=(["']?)([^\\s"'\`]+)\\1`, 'gim'), group: 2, accept: assignedValue, starts: secretNameStarts },
  // "name": "value", name = 'value', name: "value" (JSON, code, YAML with quotes).
  { kind: 'assignment', regex: new RegExp(`["']?${SECRET_NAME}["']?[ \\t]*[:=][ \\t]*(["'])([^\\s"'\\\\]{8,})\\1`, 'gi'), group: 2, accept: assignedValue, starts: secretNameStarts },
  // name: value (YAML, config files), the value alone on its line.
  { kind: 'assignment', regex: new RegExp(`^[ \\t]*${SECRET_NAME}:[ \\t]+([^\\s"'#]{8,})[ \\t]*$`, 'gim'), group: 1, accept: assignedValue, starts: secretNameStarts },
];
