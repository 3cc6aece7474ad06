import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RULE_NEEDS, RULE_NEEDS_VERSION } from '../../../src/core/security/secretlintRules';
import { containsSecret, findSecrets, redactSecrets } from '../../../src/core/security/secrets';
import { generator, ordinaryCorpus, secretCorpus } from './secretCorpus';
import { oldFindSecrets, oldHitsByRule } from './secretScanOracle';

/**
 * The secret scan was made cheaper (Keel's costly patterns tried only where a match can start,
 * secretlint's rules only on text holding what they need): it must find exactly what the scan
 * before it found — same spans, same kinds — on any text. The oracle is that scan, frozen in
 * secretScanOracle.ts. Texts are generated from the pieces an attacker or a real file would put
 * together: secret-looking names in any case, separators, quotes, values, URLs with a user and a
 * password, every token shape the rules know (and the same cut short), and characters whose
 * case folding is unusual.
 */

const { pick } = generator(23);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64URL = `${ALNUM}-_`;
const HEX = '0123456789abcdef';

/** 1password's shape: base64 of a JSON object that ends in `fQ` (a length one more than a multiple of 3). */
function onePasswordToken(): string {
  let pad = '';
  const json = () => JSON.stringify({ email: `${pick(HEX, 12)}@1passwordserviceaccounts.lcl`, secretKey: pick(ALNUM, 34), srpX: pick(HEX, 64), pad });
  let j = json();
  while (j.length % 3 !== 1) {
    pad += 'x';
    j = json();
  }
  return `ops_${Buffer.from(j).toString('base64')}`;
}

/** Token shapes for the secretlint rules the corpus has none of (each from the rule's regex). */
const extraTokens = [
  `gsk_${pick(ALNUM, 52)}`,
  `lin_api_${pick(ALNUM, 40)}`,
  `ntn_${pick('0123456789', 11)}${pick(ALNUM, 35)}`,
  onePasswordToken(),
  // sendgrid: 69 characters, word characters only in the first two parts.
  `SG.${pick(ALNUM, 22)}.${pick(ALNUM, 43)}`,
  `shpat_${pick(ALNUM, 32)}`,
  `shpss_${pick(ALNUM, 40)}`,
  `vcp_${pick(ALNUM, 24)}`,
  `vck_${pick(ALNUM, 30)}`,
  `dapi${pick(HEX, 32)}`,
  `dckr_pat_${pick(B64URL, 27)}`,
  `figd_${pick(B64URL, 40)}`,
  `hvs.${pick(B64URL, 95)}`,
  `hvb.${pick(B64URL, 140)}`,
  `hvr.${pick(B64URL, 100)}`,
  `glc_${pick(`${ALNUM}+/`, 40)}`,
  `glsa_${pick(ALNUM, 32)}_${pick(HEX, 8)}`,
  `AWS_SECRET_ACCESS_KEY="${pick(`${ALNUM}/+`, 40)}"`,
  `SecretAccessKey: '${pick(`${ALNUM}/+`, 40)}'`,
  `https://${pick(ALNUM, 12)}:x-oauth-basic@github.com/o/r`,
  `mysql://app:${pick(ALNUM, 14)}@db.local/app`,
  `jdbc:mysql://root:${pick(ALNUM, 12)}@10.0.0.2:3306/x`,
  `ftp://deploy1:${pick(ALNUM, 12)}@files.example.org`,
  `postgresql://u:${pick(ALNUM, 16)}@h.example/db`,
  `xapp-1-${pick(ALNUM, 10)}-${pick('0123456789', 12)}-${pick(HEX, 40)}`,
  `npm_${pick(ALNUM, 36)}`,
  `//registry/:_authToken=${pick(HEX, 36)}`,
];
const tokens = [...secretCorpus(23).map((c) => c.context.replace('${S}', c.secret)), ...extraTokens];

const names = [
  'GITHUB_TOKEN', 'client_secret', 'clientSecret', 'my.api-key', 'apikey', 'db_password', 'passwd', 'PASSPHRASE', 'credentials', 'credential',
  '_auth', 'auth-token', 'AUTH_TOKEN', 'secrets', 'aws_secret_access_key', 'secretAccessKey', 'tokenizer', 'token_count', 'x-api-key', 'Authorization',
  'export', 'export ', 'EXPORT\t', 'private_key', 'signing-key', 'encryptionKey', 'masterkey', 'accessKey', 'secret-key',
];
const separators = ['=', ': ', ' = ', '=>', ':', '"', "'", '`', ' ', '\t', '\n', '\r\n', '\r', ',', ';', '{', '}', '(', ')', '\\', '#', '@', '/', '//', '://', '-', '_', '.'];
const odd = ['İ', 'ſ', '\u212a', 'é', '—', '\u2028', '\u2029', 'ß', '\u0130x'];

const flipCase = (s: string, bits: number) => [...s].map((c, i) => ((bits >> i % 30) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');

const value = fc.oneof(
  fc.constantFrom(pick(ALNUM, 8), pick(ALNUM, 20), pick(B64URL, 40), 'changeme', 'xxxxxxxx', '${SECRET}', 'hunter2hunter2', '../path/to/x', 'aaaaaaaaaaaaaaaaaaaa'),
  fc.string({ minLength: 0, maxLength: 24 }),
);
const url = fc
  .tuple(fc.constantFrom('https', 'http', 'git+ssh', 'postgres', 'mongodb+srv', 'redis', 'a', 'x1', 'ftp'), fc.constantFrom('user', 'x-access-token', 'a', ''), value, fc.constantFrom('@host.example.com/p', '@h', '/no-at', ''))
  .map(([scheme, user, pass, rest]) => `${scheme}://${user}:${pass}${rest}`);
const token = fc.tuple(fc.constantFrom(...tokens), fc.nat({ max: 300 }), fc.boolean()).map(([t, n, cut]) => (cut ? t.slice(0, n % (t.length + 1)) : t));
const fragment = fc.oneof(
  { arbitrary: fc.tuple(fc.constantFrom(...names), fc.nat()).map(([n, bits]) => flipCase(n, bits)), weight: 4 },
  { arbitrary: fc.constantFrom(...separators), weight: 6 },
  { arbitrary: value, weight: 3 },
  { arbitrary: url, weight: 2 },
  { arbitrary: token, weight: 2 },
  { arbitrary: fc.constantFrom(...odd), weight: 1 },
  { arbitrary: fc.string({ maxLength: 8 }), weight: 2 },
);
const text = fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join(''));

function same(t: string): void {
  const old = oldFindSecrets(t);
  expect(findSecrets(t), JSON.stringify(t)).toEqual(old);
  expect(containsSecret(t), JSON.stringify(t)).toBe(old.length > 0);
}

describe('the cheaper secret scan finds exactly what the whole-text scan found', () => {
  it('on generated code-like text with names, separators, URLs and tokens (cut short too)', () => {
    fc.assert(
      fc.property(text, (t) => same(t)),
      { numRuns: 3000 },
    );
  });

  it('on long generated texts (many candidates per pattern, and the whole-scan fallback)', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 20, maxLength: 80 }), (parts) => same(parts.join('\n'))),
      { numRuns: 60 },
    );
  });

  it('on texts dense with what the shortcuts look for (each falls back to a whole scan)', () => {
    const dense = [
      'a_key=x '.repeat(400),
      `${'://'.repeat(500)}https://u:${pick(ALNUM, 12)}@h`,
      `${'token: '.repeat(300)}password: ${pick(ALNUM, 16)}`,
      `export ${'secret=1 '.repeat(300)}\nexport API_KEY=${pick(ALNUM, 24)}`,
      'x://'.repeat(300),
    ];
    for (const t of dense) same(t);
  });

  it('on every token shape alone, in a line, and at a line start after blanks and export', () => {
    for (const t of tokens) {
      same(t);
      same(`  ${t}\n`);
      same(`export ${t}`);
      same(`prefix${t}suffix`);
    }
  });

  it("on this repository's own sources, file by file (no finding added, none lost)", () => {
    const root = join(__dirname, '..', '..', '..', 'src');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(ts|tsx|json|md)$/.test(name)) files.push(p);
      }
    };
    walk(root);
    expect(files.length).toBeGreaterThan(50);
    for (const f of files) same(readFileSync(f, 'utf8'));
  });

  it('on the ordinary corpus and on the secret corpus redacted the same way', () => {
    for (const t of ordinaryCorpus()) same(t);
    for (const seed of [1, 2, 3]) {
      for (const c of secretCorpus(seed)) {
        const t = c.context.replace('${S}', c.secret);
        same(t);
        expect(redactSecrets(t)).toBe(redactSecrets(t));
      }
    }
  });
});

describe("secretlint's rules gated by what they need (RULE_NEEDS)", () => {
  it('were read from the version installed (a new version must be read again)', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'node_modules', '@secretlint', 'secretlint-rule-preset-recommend', 'package.json'), 'utf8')) as { version: string };
    expect(pkg.version).toBe(RULE_NEEDS_VERSION);
  });

  it('every gated rule reports one of the samples, and the gated scan finds it', () => {
    const fired = new Set<string>();
    for (const t of tokens) {
      for (const rule of oldHitsByRule(t).keys()) fired.add(rule);
      same(t);
    }
    // Each gated rule is exercised by a real hit, so a wrong gate would show above.
    expect(Object.keys(RULE_NEEDS).filter((rule) => !fired.has(rule))).toEqual([]);
  });
});
