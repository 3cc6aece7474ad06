import { homedir } from 'node:os';
import type { EngineDecision, PermissionCall } from '../permissions/engine';
import { compilePathPattern } from '../permissions/paths';
import { compileBashPattern, domainMatches, mcpRuleMatches, parseRule, realHost, splitRuleWords, type BashPattern } from '../permissions/rules';
import type { PermissionDecider } from '../runtime/permissionCheck';

/**
 * A command's `allowed-tools` (docs/commands.md): while the run it started lasts, a tool call
 * that none of its rules names is denied; one that a rule names is decided as always (the
 * person's rules, the mode, the question). So `allowed-tools` only ever narrows what the person
 * allows, never widens it — unlike Claude Code, where it also skips the question.
 *
 * Matching is deliberately narrower than the permission engine's: a Bash rule with a specifier
 * matches only a plain command (no `;`, `&&`, `|`, redirections, substitutions or variables)
 * whose words match it; `Read(…)`/`Edit(…)` match when every path of the call does; `Read` covers
 * every reading tool (Read, Grep, Glob, Skill), `Edit` every editing one. `TodoWrite` is always
 * allowed (it touches nothing). A rule that does not parse narrows to nothing.
 */
export interface CommandNarrowing {
  /** The command, as the person reads it (`/review`). */
  command: string;
  /** Its `allowed-tools`, as written. */
  rules: string[];
}

const ALWAYS = new Set(['TodoWrite']);
const SHELL_SYNTAX = /[;&|<>`$(){}\\\n\r*?[\]~#!]/;

interface CompiledEntry {
  tool: string;
  test: (call: PermissionCall) => boolean;
}

/** True when `call` is one of the calls the rules name (see the module comment). */
export function narrowingAllows(rules: readonly string[], call: PermissionCall, workspace: string, home = homedir()): boolean {
  if (ALWAYS.has(call.tool)) return true;
  return compile(rules, workspace, home).some((e) => e.test(call));
}

function compile(rules: readonly string[], workspace: string, home: string): CompiledEntry[] {
  const out: CompiledEntry[] = [];
  for (const raw of rules) {
    const parsed = parseRule(raw);
    if (!parsed.ok) continue;
    const { tool, specifier } = parsed;
    const names = (call: PermissionCall) =>
      tool.startsWith('mcp__')
        ? mcpRuleMatches(tool, call.tool, call.subject.kind === 'mcp' ? call.subject.server : undefined)
        : tool === call.tool || (tool === 'Read' && call.subject.kind === 'read') || (tool === 'Edit' && call.subject.kind === 'write');
    if (specifier === undefined) {
      out.push({ tool, test: names });
      continue;
    }
    if (tool === 'Bash') {
      const pattern = compileBashPattern(specifier);
      out.push({ tool, test: (call) => call.tool === 'Bash' && call.subject.kind === 'execute' && plainCommandMatches(call.subject.command, pattern) });
      continue;
    }
    if (tool === 'WebFetch') {
      const domain = specifier.startsWith('domain:') ? specifier.slice(7) : null;
      out.push({ tool, test: (call) => domain !== null && call.subject.kind === 'network' && call.tool === 'WebFetch' && matchesHost(domain, call.subject.url) });
      continue;
    }
    if (tool === 'Read' || tool === 'Edit' || tool === 'Write') {
      const matches = compilePathPattern(specifier, workspace, { workspace, home });
      out.push({
        tool,
        test: (call) => {
          if (!names(call)) return false;
          const s = call.subject;
          if (s.kind !== 'read' && s.kind !== 'write') return false;
          return s.paths.length > 0 && s.paths.every((p) => matches.test(p));
        },
      });
    }
    // Other tools with a specifier (unknown to Keel) narrow to nothing.
  }
  return out;
}

function matchesHost(domain: string, url: string): boolean {
  const host = realHost(url);
  return host !== null && domainMatches(domain, host);
}

/** A command without shell syntax whose words match the pattern (as the engine matches a simple command). */
export function plainCommandMatches(command: string, pattern: BashPattern): boolean {
  const text = command.trim();
  if (!text || SHELL_SYNTAX.test(text)) return false;
  const words = splitRuleWords(text);
  switch (pattern.kind) {
    case 'exact':
      return words.length === pattern.words.length && words.every((w, i) => w === pattern.words[i]);
    case 'prefix':
      return words.length >= pattern.words.length && pattern.words.every((w, i) => w === words[i]);
    case 'glob':
      return pattern.regex.test(words.join(' '));
  }
}

/**
 * The decider of a task while a command narrows its run: a call the command's `allowed-tools`
 * does not name is denied (saying which command and what it allows); any other is decided by
 * `inner`. `current()` is read at every decision (the narrowing ends with the run). Never throws.
 */
export function narrowedBy(inner: PermissionDecider, current: () => CommandNarrowing | null, workspace: string, home?: string): PermissionDecider {
  return {
    async decide(call, mode): Promise<EngineDecision> {
      const n = current();
      if (n && !narrowingAllows(n.rules, call, workspace, home)) {
        const allowed = n.rules.length ? n.rules.join(', ') : 'no tools';
        return { decision: 'deny', reason: `${n.command} allows only ${allowed} (its allowed-tools)` };
      }
      return inner.decide(call, mode);
    },
    // A search the narrowing allows skips what the person's Read rules keep out, as without it.
    searchExclusions: (root) => inner.searchExclusions(root),
  };
}
