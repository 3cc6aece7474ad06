/**
 * Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`. Parsing is pure; a
 * malformed rule comes back as a problem, never as a rule that matches more than written.
 */
export type RuleBehavior = 'allow' | 'ask' | 'deny';

export interface PermissionRule {
  behavior: RuleBehavior;
  tool: string;
  /** Undefined: the whole tool. */
  specifier?: string;
  /** The rule as written, for messages and `EngineDecision.rule`. */
  raw: string;
  /** The settings file it came from. */
  source: string;
  /** The folder `/path` patterns are relative to (the project holding the settings file). */
  projectRoot: string;
}

export type ParsedRule = { ok: true; tool: string; specifier?: string } | { ok: false; error: string; tool?: string };

const TOOL_NAME = /^(?:[A-Z][A-Za-z0-9]*|mcp__[A-Za-z0-9_-]+(?:__\*)?)$/;

/** Parses `Tool` / `Tool(specifier)`. */
export function parseRule(raw: string): ParsedRule {
  const text = raw.trim();
  if (!text) return { ok: false, error: 'empty rule' };
  const open = text.indexOf('(');
  if (open < 0) {
    if (text.includes(')')) return { ok: false, error: `unbalanced parenthesis in "${raw}"` };
    if (!TOOL_NAME.test(text)) return { ok: false, error: `"${raw}" is not a tool name (tool names look like Bash, Read, mcp__server__tool)` };
    return { ok: true, tool: text };
  }
  const tool = text.slice(0, open);
  if (!TOOL_NAME.test(tool)) return { ok: false, error: `"${tool}" is not a tool name in "${raw}"` };
  if (!text.endsWith(')')) return { ok: false, error: `"${raw}" does not end with ")"`, tool };
  const specifier = text.slice(open + 1, -1);
  if (!specifier.trim()) return { ok: false, error: `"${raw}" has an empty specifier; write "${tool}" for the whole tool`, tool };
  // `Tool(*)` is the whole tool, as in Claude Code (`Bash(*)`, `WebFetch(*)`).
  if (specifier.trim() === '*') return { ok: true, tool };
  if (tool === 'WebFetch' && !/^domain:[^\s/]+$/.test(specifier)) return { ok: false, error: `WebFetch rules look like WebFetch(domain:example.com), got "${raw}"`, tool };
  return { ok: true, tool, specifier };
}

/** A Bash rule specifier, prepared for matching against a command's words. */
/**
 * `prefix` with `joined`: written with `:*` after a word that ends in punctuation
 * (`Bash(curl http://github.com/:*)`, as in Claude Code's documentation): the command's word may
 * go on after it (`http://github.com/org/repo`); otherwise prefixes stop at a word boundary
 * (`npm run:*` is not `npm runx`).
 */
export type BashPattern = { kind: 'exact'; words: string[] } | { kind: 'prefix'; words: string[]; joined?: boolean } | { kind: 'glob'; regex: RegExp; literalWords: string[] };

/** Splits a rule specifier into words with shell-like quoting. */
export function splitRuleWords(spec: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: string | null = null;
  for (let i = 0; i < spec.length; i++) {
    const ch = spec[i] as string;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < spec.length) cur += spec[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      has = true;
    } else if (ch === '\\' && i + 1 < spec.length) {
      cur += spec[++i];
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (has || cur) out.push(cur);
  return out;
}

/** Compiles a Bash specifier: `git status` exact, `npm run:*` or `npm run *` prefix, `git * main` glob. */
export function compileBashPattern(spec: string): BashPattern {
  const s = spec.trim();
  if (s.endsWith(':*')) {
    const words = splitRuleWords(s.slice(0, -2));
    const last = words[words.length - 1] ?? '';
    return { kind: 'prefix', words, ...(!/\s$/.test(s.slice(0, -2)) && /[^A-Za-z0-9_]$/.test(last) ? { joined: true } : {}) };
  }
  if (s.endsWith(' *') && !s.slice(0, -2).includes('*')) return { kind: 'prefix', words: splitRuleWords(s.slice(0, -2)) };
  if (s.includes('*')) {
    const words = splitRuleWords(s);
    const source = words.map((w) => w.split('*').map(escapeRegex).join('[^\\u0000]*')).join(' ');
    const literalWords: string[] = [];
    for (const w of words) {
      if (w.includes('*')) break;
      literalWords.push(w);
    }
    return { kind: 'glob', regex: new RegExp(`^${source}$`, 's'), literalWords };
  }
  return { kind: 'exact', words: splitRuleWords(s) };
}

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** MCP rules: `mcp__server` (every tool of it), `mcp__server__tool`, `mcp__server__*`. */
export function mcpRuleMatches(ruleTool: string, callTool: string, server: string | undefined): boolean {
  if (ruleTool === callTool) return true;
  const srv = server ?? /^mcp__(.+?)__/.exec(callTool)?.[1];
  if (!srv) return false;
  return ruleTool === `mcp__${srv}` || ruleTool === `mcp__${srv}__*`;
}

/**
 * Does `host` (the URL's real hostname, lower case, no trailing dot) match `domain:pattern`?
 * `example.com` matches that host only; `*.example.com` matches its subdomains.
 */
export function domainMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p === '*') return true;
  if (p.startsWith('*.')) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return h === p;
}

/** The real host a fetch of `url` would contact, as WHATWG URL parsing (and fetch) sees it. */
export function realHost(url: string): string | null {
  try {
    const u = new URL(url);
    return u.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  } catch {
    return null;
  }
}

/**
 * Why a rule that parses can never match anything, with the nearest form that would, or null.
 * Reported where the person reads settings problems (`keel permissions check`, the CLI's and
 * VS Code's warnings), never silently dropped:
 * - an allow rule holding shell operators (`Bash(git log | head)`): rules match each command of
 *   a call; deny and ask rules with operators do match the whole call (pipelineRules.ts);
 * - a prefix whose words hold `*` (`Bash(scp * *:*)`): prefix words are literal;
 * - a command name holding `:` (`Bash(rm:-rf:/)`, an old colon syntax): no command has that name;
 * - `:*` anywhere but at the end (`Bash(npm:* test)`).
 * `operatorParts` is passed in (pipelineRules.ts) to keep this module free of the shell code.
 */
export function ruleNeverMatches(behavior: RuleBehavior, tool: string, specifier: string | undefined, operatorParts: (spec: string) => string[] | null): string | null {
  if (tool !== 'Bash' || specifier === undefined) return null;
  const spec = specifier.trim();
  const parts = operatorParts(spec);
  if (parts && behavior === 'allow') {
    const each = parts.map((p) => `Bash(${splitRuleWords(p)[0] ?? p}:*)`).join(', ');
    return `Bash(${spec}) never matches: a rule matches each command of a call, not a pipeline or list; allow each command instead (${each})`;
  }
  if (parts) return null;
  const mid = spec.indexOf(':*');
  if (mid >= 0 && mid !== spec.length - 2) {
    return `Bash(${spec}) never matches: ":*" only means "and anything after" at the end; write Bash(${spec.replace(/:\*/g, ' *')})`;
  }
  const prefix = spec.endsWith(':*');
  const words = splitRuleWords(prefix ? spec.slice(0, -2) : spec);
  const first = words[0] ?? '';
  if (first.includes(':') && !first.slice(0, first.indexOf(':')).includes('/')) {
    const spaced = spec.replace(/:\*$/, '').split(':').join(' ');
    return `Bash(${spec}) never matches: no command is named "${first}"; write Bash(${spaced}${prefix ? ':*' : ''})`;
  }
  if (prefix && words.some((w) => /[*?]/.test(w))) {
    return `Bash(${spec}) never matches: the words before ":*" are matched literally; write Bash(${spec.slice(0, -2).trimEnd()} *) to match any words there`;
  }
  return null;
}
