import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleContext, SecretLintRuleReportHandler, SecretLintSourceCode } from '@secretlint/types';

/**
 * secretlint's recommended rule set (`@secretlint/secretlint-rule-preset-recommend`: AWS, GitHub,
 * GitLab, Slack, OpenAI, Anthropic, npm, private keys, database URLs, SendGrid, Shopify, Hugging
 * Face, Groq, Vault, Vercel, Docker, Figma, …), maintained upstream, driven here through its
 * public rule API (`create(context).file(source)`) rather than through `@secretlint/core`: the
 * rules are plain synchronous regex scans, and calling them directly costs ~1 ms per 30 KB instead
 * of ~5 ms plus a promise per call, so every chunk of live output can be scanned in order.
 *
 * Left out, on purpose: `filter-comments` (a `secretlint-disable` comment in the scanned text would
 * switch detection off — the text is untrusted tool output) and `gcp` (it only looks at `.json` and
 * `.p12` files by name, and reads the file from disk).
 */
export interface SecretlintHit {
  start: number;
  end: number;
  /** The rule's id without the `@secretlint/secretlint-rule-` prefix, e.g. `aws`. */
  rule: string;
}

/**
 * Where the secret a rule reported really is. A few rules report a range that starts at their
 * whole match but has the length of the secret alone (aws: `aws_secret_access_key = <key>`
 * reported as the name and the key's first half); the message data holds the secret itself, so
 * the range is moved onto it when it is found there.
 */
function locate(text: string, start: number, end: number, data: unknown): [number, number] {
  if (typeof data !== 'object' || data === null) return [start, end];
  for (const v of Object.values(data)) {
    if (typeof v !== 'string' || v.length < 8 || text.startsWith(v, start)) continue;
    const at = text.indexOf(v, start);
    if (at !== -1 && at <= end) return [at, at + v.length];
  }
  return [start, end];
}

const SKIPPED = new Set(['@secretlint/secretlint-rule-filter-comments', '@secretlint/secretlint-rule-gcp']);

/** The version of the rules RULE_NEEDS was read from (test/unit/security/secretlintNeeds.test.ts holds them to it). */
export const RULE_NEEDS_VERSION = '12.0.0';

/**
 * What a rule needs in a text to report anything there, read from the rules' own code (version
 * above, with no file path and no options, as they run here): `token`, a regex that finds, in any
 * text where one of the rule's own regexes matches, a piece every such match holds, case for case;
 * `url`: a `://` is enough (the rule's URL regexes have the `i` flag, and `://` has no case).
 * A rule runs only on text that has what it needs; a rule not listed always runs. Why: aws builds
 * its regex on every call, and that regex can start anywhere, so it alone cost ~1 ms per 100 KB
 * of source; the 22 others ~0.3 ms together. Source code rarely holds any of these tokens, and
 * one regex of them all (ANY_TOKEN) says so in ~0.3 ms; only then is each rule's own looked for.
 */
export const RULE_NEEDS: Readonly<Record<string, { token?: RegExp; url?: true }>> = {
  // Only reportAWSSecretAccessKey runs without `enableIDScanRule`:
  // ["']?(?:AWS|aws|Aws)?_?(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)_?(?:KEY|key|Key)…
  aws: { token: /(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)/ },
  // With no file path, both the package-file check (https?://…:x-oauth-basic@github.com/) and
  // npm_… run; `_authToken=` (.npmrc) is listed as well, should a version change which runs.
  npm: { token: /npm_|_authToken=/, url: true },
  // Tokens: \b(?:xoxb|xoxp|xapp|xoxa|xoxo|xoxr)-…; webhooks (flag i): https://hooks.slack.com/services/…
  slack: { token: /xox[bpaor]-|xapp-/, url: true },
  // (?:https?|ftp|ftps)://user:password@…
  basicauth: { url: true },
  // mongodb(+srv)://, (jdbc:)mysql(x)://, postgres(ql):// (flag i).
  'database-connection-string': { url: true },
  github: { token: /gh[pousr]_|github_pat_/ },
  gitlab: { token: /glpat-/ },
  grafana: { token: /glc_|glsa_/ },
  'hashicorp-vault': { token: /hv[sbr]\./ },
  // The others: one regex each, with the literal prefix below (1password: ops_(ey…; openai: both
  // alternatives hold T3BlbkFJ).
  privatekey: { token: /-----BEGIN/ },
  sendgrid: { token: /SG\./ },
  shopify: { token: /shp(?:pa|ca|at|ss)_/ },
  openai: { token: /T3BlbkFJ/ },
  anthropic: { token: /sk-ant-api0/ },
  groq: { token: /gsk_/ },
  huggingface: { token: /hf_/ },
  linear: { token: /lin_api_/ },
  notion: { token: /ntn_/ },
  '1password': { token: /ops_ey/ },
  vercel: { token: /vc[piark]_/ },
  databricks: { token: /dapi/ },
  docker: { token: /dckr_pat_/ },
  figma: { token: /figd_/ },
};

/** Any rule's token: where this finds none, no rule's own `token` is there either. */
const ANY_TOKEN = new RegExp(
  Object.values(RULE_NEEDS)
    .flatMap((n) => (n.token ? [`(?:${n.token.source})`] : []))
    .join('|'),
);

/** Which rules may report anything in `text` (RULE_NEEDS). */
function needsMet(text: string): (id: string) => boolean {
  const url = text.includes('://');
  const anyToken = ANY_TOKEN.test(text);
  return (id) => {
    const needs = RULE_NEEDS[id];
    if (!needs) return true;
    return (needs.url === true && url) || (anyToken && needs.token !== undefined && needs.token.test(text));
  };
}

let sink: SecretlintHit[] | null = null;
let scanned = '';
let currentRule = '';

const context: SecretLintRuleContext = {
  sharedOptions: {},
  // Messages are not needed (Keel names the rule); a translator that builds no text keeps it cheap.
  createTranslator: () => (messageId: string | number | symbol, data?: unknown) => ({ message: String(messageId), messageId: String(messageId), data }),
  report(descriptor) {
    const [start, end] = locate(scanned, descriptor.range[0], descriptor.range[1], descriptor.message.data);
    sink?.push({ start, end, rule: currentRule });
  },
  ignore() {
    // Only filter-comments ignores, and it is not loaded.
  },
};

interface LoadedRule {
  id: string;
  handler: SecretLintRuleReportHandler;
}

let loaded: LoadedRule[] | null = null;

function rules(): LoadedRule[] {
  loaded ??= (recommendedRules as { meta: { id: string; supportedContentTypes: string[] }; create(c: SecretLintRuleContext, o: object): SecretLintRuleReportHandler }[])
    .filter((r) => !SKIPPED.has(r.meta.id) && r.meta.supportedContentTypes.some((t) => t === 'text' || t === 'all'))
    .map((r) => ({ id: r.meta.id.replace('@secretlint/secretlint-rule-', ''), handler: r.create(context, {}) }));
  return loaded;
}

/**
 * Every range of `text` that a recommended secretlint rule reports, in rule order (not sorted).
 * Synchronous; never throws (a rule that throws is skipped for this text).
 */
export function secretlintScan(text: string): SecretlintHit[] {
  const out: SecretlintHit[] = [];
  const source = sourceOf(text);
  sink = out;
  scanned = text;
  const mayReport = needsMet(text);
  try {
    for (const r of rules()) {
      if (!mayReport(r.id)) continue;
      currentRule = r.id;
      try {
        // With no file path and no extension every loaded rule scans synchronously; a promise
        // (which none returns then) is still kept from becoming an unhandled rejection.
        const pending = r.handler.file?.(source);
        if (pending) pending.catch(() => undefined);
      } catch {
        // A rule bug must not stop the others (or the tool result).
      }
    }
  } finally {
    sink = null;
    scanned = '';
  }
  return out;
}

function sourceOf(content: string): SecretLintSourceCode {
  const unsupported = (): never => {
    throw new Error('not available for tool output');
  };
  return {
    hasBOM: false,
    content,
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
}
