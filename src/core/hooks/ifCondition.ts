import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { compilePathPattern } from '../permissions/paths';
import { compileBashPattern, domainMatches, parseRule, realHost, type BashPattern } from '../permissions/rules';
import { parseCommandLine } from '../trust/commandWords';

/**
 * A hook's `if` (Claude Code's, docs/hooks.md): one permission rule, in the permission rules'
 * syntax (`Bash(rm -rf *)`, `Edit(src/**)`, `WebFetch(domain:github.com)`), that a tool call must
 * match for the hook to run. Its tool name must be the call's. For Bash the command is read into
 * its simple commands (`a && b`, `a | b`, `FOO=1 git push`): the hook runs when any of them
 * matches; for the file tools the file's path must match; for WebFetch the URL's host. When Keel
 * cannot read the call exactly (a command with substitutions or variables, an input without the
 * field) the condition holds — it fails open as Claude Code does, and the hook itself decides.
 * Pure apart from `homedir()`; never throws.
 */
export type IfCondition = { ok: true; test(toolName: string, toolInput: Record<string, unknown>, cwd: string): boolean } | { ok: false; error: string };

const FILE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Read: ['Read'],
  Edit: ['Edit', 'MultiEdit', 'Write', 'NotebookEdit'],
  Write: ['Write'],
  MultiEdit: ['MultiEdit'],
  NotebookEdit: ['NotebookEdit'],
};

export function compileIf(rule: string, home: string = homedir()): IfCondition {
  // One rule, never a list (`Bash(a *)|Bash(b *)` matches nothing in Claude Code): said, not guessed.
  if (/\)\s*(?:\|\|?|,|&&)\s*[A-Za-z_]+\(/.test(rule)) return { ok: false, error: `"if" holds one permission rule, not a list ("${rule}"): write one hook handler per rule` };
  const parsed = parseRule(rule);
  if (!parsed.ok) return { ok: false, error: `"if": ${parsed.error}` };
  const { tool } = parsed;
  const specifier = 'specifier' in parsed ? parsed.specifier : undefined;
  if (specifier === undefined) return { ok: true, test: (name) => name === tool };
  if (tool === 'Bash') {
    const pattern = compileBashPattern(specifier);
    return { ok: true, test: (name, input) => name === 'Bash' && bashMatches(input.command, pattern) };
  }
  const fileTools = FILE_TOOLS[tool];
  if (fileTools) {
    return {
      ok: true,
      test: (name, input, cwd) => {
        if (!fileTools.includes(name)) return false;
        const path = input.file_path ?? input.notebook_path;
        if (typeof path !== 'string' || !path) return true;
        const abs = isAbsolute(path) ? path : resolve(cwd, path);
        return compilePathPattern(specifier, cwd, { workspace: cwd, home }).test(abs);
      },
    };
  }
  if (tool === 'WebFetch' && specifier.startsWith('domain:')) {
    const domain = specifier.slice('domain:'.length);
    return {
      ok: true,
      test: (name, input) => {
        if (name !== 'WebFetch') return false;
        const host = typeof input.url === 'string' ? realHost(input.url) : null;
        return host === null || domainMatches(domain, host);
      },
    };
  }
  // A specifier Keel cannot check for this tool: the tool name decides (fail open, as above).
  return { ok: true, test: (name) => name === tool };
}

/** Whether any simple command of `command` matches (see the module comment). */
function bashMatches(command: unknown, pattern: BashPattern): boolean {
  if (typeof command !== 'string') return true;
  const parsed = parseCommandLine(command);
  if (parsed.problems.length > 0) return true;
  return parsed.commands.some((c) => {
    // Leading assignments (`FOO=bar git push`) are not the command.
    let words = c.words;
    while (words.length > 0 && words[0]!.literal && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!.text)) words = words.slice(1);
    if (words.length === 0) return false;
    if (words.some((w) => !w.literal)) return true;
    return wordsMatch(
      words.map((w) => w.text),
      pattern,
    );
  });
}

function wordsMatch(words: string[], pattern: BashPattern): boolean {
  switch (pattern.kind) {
    case 'exact':
      return words.length === pattern.words.length && words.every((w, i) => w === pattern.words[i]);
    case 'prefix':
      if (pattern.joined) return words.join(' ').startsWith(pattern.words.join(' '));
      return words.length >= pattern.words.length && pattern.words.every((w, i) => w === words[i]);
    case 'glob':
      return pattern.regex.test(words.join(' '));
  }
}
