import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleContext, SecretLintRuleReportHandler, SecretLintSourceCode } from '@secretlint/types';
import type { SecretFinding } from '../../../src/core/security/secrets';

/**
 * The secret scan as it was before it was made cheaper (main at c1ebbf1): Keel's patterns, each
 * tried at every position of the text, and every secretlint rule run on every text. Kept here,
 * copied and frozen, as the oracle the scan of src/core/security must match exactly
 * (secretScanEquivalence.test.ts). Do not "fix" it to follow the product: it is the reference.
 */

interface OldPattern {
  kind: string;
  regex: RegExp;
  group?: number;
  accept?(value: string): boolean;
}

const SECRET_NAME =
  '(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?(?:api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|master[_-]?key|signing[_-]?key|' +
  'encryption[_-]?key|client[_-]?secret|secret|secrets|token|password|passwd|passphrase|credentials?|_auth|auth[_-]?token)';

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

function assignedValue(value: string): boolean {
  if (value.length < 8 || PLACEHOLDER.test(value)) return false;
  if (/^(?:\/|~\/|\.\.?\/)/.test(value)) return false;
  return mixed(value) || (value.length >= 16 && /[A-Za-z]/.test(value));
}

const OLD_LIST: OldPattern[] = [
  { kind: 'private-key', regex: /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g },
  { kind: 'putty-private-key', regex: /PuTTY-User-Key-File-\d+:[^\n]*\n(?:[^\n]*\n){0,4}?Private-Lines: *\d+\n(?:[A-Za-z0-9+/=]+\n?){1,200}/g },
  { kind: 'anthropic-key', regex: /sk-ant-[a-z]{2,10}\d{2}-[A-Za-z0-9_-]{16,}/g },
  { kind: 'sk-key', regex: /(?<![A-Za-z0-9_-])sk-(?:[a-z]{2,10}-)?[A-Za-z0-9_-]{24,}/g, accept: mixed },
  { kind: 'jwt', regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: 'github-token', regex: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/g },
  { kind: 'slack-token', regex: /(?<![A-Za-z0-9])xox[abeoprs]-[A-Za-z0-9-]{10,}/g, accept: mixed },
  { kind: 'aws-access-key-id', regex: /(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])/g },
  { kind: 'aws-secret-key', regex: /(?<![A-Za-z0-9_])(?:aws_?)?secret_?access_?key["']?[ \t]*(?::|=>|=)[ \t]*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi, group: 1 },
  { kind: 'stripe-key', regex: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: 'sendgrid', regex: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { kind: 'google-api-key', regex: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  { kind: 'url-password', regex: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s:/@'"]{1,256}:([^\s@/'"]{3,256})@/g, group: 1, accept: (v) => !PLACEHOLDER.test(v) },
  { kind: 'auth-header', regex: /\b(?:proxy-)?authorization\s*:\s*(?:bearer|basic|token|bot|digest)\s+([A-Za-z0-9._~+/=-]{8,})/gi, group: 1 },
  { kind: 'auth-header', regex: /(?<![A-Za-z0-9_/.-])(?:x-api-key|api-key|x-auth-token|x-goog-api-key|x-access-token)\s*:\s*([^\s"',;@]{8,})/gi, group: 1 },
  { kind: 'npm-auth', regex: /(?:^|[:\s])_auth(?:Token)?\s*=\s*([^\s"']{8,})/gm, group: 1, accept: (v) => !PLACEHOLDER.test(v) },
  { kind: 'assignment', regex: new RegExp(`^[ \\t]*(?:export[ \\t]+)?${SECRET_NAME}=(["']?)([^\\s"'\`]+)\\1`, 'gim'), group: 2, accept: assignedValue },
  { kind: 'assignment', regex: new RegExp(`["']?${SECRET_NAME}["']?[ \\t]*[:=][ \\t]*(["'])([^\\s"'\\\\]{8,})\\1`, 'gi'), group: 2, accept: assignedValue },
  { kind: 'assignment', regex: new RegExp(`^[ \\t]*${SECRET_NAME}:[ \\t]+([^\\s"'#]{8,})[ \\t]*$`, 'gim'), group: 1, accept: assignedValue },
];
const OLD_PATTERNS: readonly OldPattern[] = OLD_LIST.map((p) => ({ ...p, regex: new RegExp(p.regex.source, `${p.regex.flags}d`) }));

// secretlint, every recommended rule (but filter-comments and gcp) on every text.

interface Hit {
  start: number;
  end: number;
  rule: string;
}

function locate(text: string, start: number, end: number, data: unknown): [number, number] {
  if (typeof data !== 'object' || data === null) return [start, end];
  for (const v of Object.values(data)) {
    if (typeof v !== 'string' || v.length < 8 || text.startsWith(v, start)) continue;
    const at = text.indexOf(v, start);
    if (at !== -1 && at <= end) return [at, at + v.length];
  }
  return [start, end];
}

let sink: Hit[] = [];
let scanned = '';
let currentRule = '';
const context: SecretLintRuleContext = {
  sharedOptions: {},
  createTranslator: () => (messageId: string | number | symbol, data?: unknown) => ({ message: String(messageId), messageId: String(messageId), data }),
  report(descriptor) {
    const [start, end] = locate(scanned, descriptor.range[0], descriptor.range[1], descriptor.message.data);
    sink.push({ start, end, rule: currentRule });
  },
  ignore() {},
};

const SKIPPED = new Set(['@secretlint/secretlint-rule-filter-comments', '@secretlint/secretlint-rule-gcp']);
const RULES = (recommendedRules as { meta: { id: string; supportedContentTypes: string[] }; create(c: SecretLintRuleContext, o: object): SecretLintRuleReportHandler }[])
  .filter((r) => !SKIPPED.has(r.meta.id) && r.meta.supportedContentTypes.some((t) => t === 'text' || t === 'all'))
  .map((r) => ({ id: r.meta.id.replace('@secretlint/secretlint-rule-', ''), handler: r.create(context, {}) }));

/** Every hit of every rule, each rule run on the whole text. */
export function oldSecretlintScan(text: string): Hit[] {
  const unsupported = (): never => {
    throw new Error('not available');
  };
  const source: SecretLintSourceCode = {
    hasBOM: false,
    content: text,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: 'text',
    ext: '',
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    locationToRange: unsupported,
    rangeToLocation: unsupported,
    positionToIndex: unsupported,
    indexToPosition: unsupported,
  };
  sink = [];
  scanned = text;
  for (const r of RULES) {
    currentRule = r.id;
    try {
      const pending = r.handler.file?.(source);
      if (pending) pending.catch(() => undefined);
    } catch {
      // as the product: a rule that throws is skipped
    }
  }
  return sink;
}

const KIND_ALIASES: Record<string, string> = { privatekey: 'private-key' };
const URL_RULES = new Set(['basicauth', 'database-connection-string']);
const URL_PASSWORD = /^[a-zA-Z][a-zA-Z0-9+.:-]{1,30}\/\/[^\s:/@]{1,256}:([^\s@/]{1,256})@/;

/** findSecrets as it was (no known values: they did not change). */
export function oldFindSecrets(text: string): SecretFinding[] {
  if (text.length === 0) return [];
  const found: SecretFinding[] = [];
  for (const hit of oldSecretlintScan(text)) {
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
  for (const p of OLD_PATTERNS) {
    for (const m of text.matchAll(p.regex)) {
      const span = m.indices?.[p.group ?? 0];
      if (!span || span[1] <= span[0]) continue;
      if (p.accept && !p.accept(text.slice(span[0], span[1]))) continue;
      found.push({ start: span[0], end: span[1], kind: p.kind });
    }
  }
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

/** Each rule's own hits, by rule (for checking RULE_NEEDS rule by rule). */
export function oldHitsByRule(text: string): Map<string, number> {
  const by = new Map<string, number>();
  for (const h of oldSecretlintScan(text)) by.set(h.rule, (by.get(h.rule) ?? 0) + 1);
  return by;
}
