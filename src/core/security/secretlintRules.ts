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
  try {
    for (const r of rules()) {
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
