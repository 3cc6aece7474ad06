import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { compileMatcher } from './matcher';
import { compileIf } from './ifCondition';
import { isHookEventName, PROMPT_HOOK_EVENTS, type ConfiguredHook, type HookEventName, type HookScope } from './types';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The `hooks` sections of the settings files Keel already reads, in Claude Code's schema:
 * `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…",
 * "timeout": 30}]}]}}`. User hooks (`~/.keel/settings.json`) are trusted; the workspace's
 * `.claude/settings.json`, `.claude/settings.local.json`, `.keel/settings.json` and
 * `.keel/settings.local.json` come with the repository and run only once approved (approvals.ts).
 * A hook configured twice runs once. Never throws: what cannot be used is reported in `problems`
 * and left out (a malformed hook never runs, and never stops the others).
 */
export interface HookSource {
  path: string;
  scope: HookScope;
}

export interface HooksConfig {
  hooks: ConfiguredHook[];
  problems: string[];
  /** Identity of the files read (path, mtime, size), to notice changes. */
  stamp: string;
}

/** The files hooks are read from, user first (its copy of a duplicated hook is the one kept). */
export function hookSources(workspace: string, home: string = homedir()): HookSource[] {
  return [
    { path: join(home, '.keel', 'settings.json'), scope: 'user' },
    { path: join(workspace, '.claude', 'settings.json'), scope: 'project' },
    { path: join(workspace, '.claude', 'settings.local.json'), scope: 'local' },
    { path: join(workspace, '.keel', 'settings.json'), scope: 'project' },
    { path: join(workspace, '.keel', 'settings.local.json'), scope: 'local' },
  ];
}

const handlerSchema = z.looseObject({
  type: z.string(),
  command: z.optional(z.string()),
  args: z.optional(z.array(z.string())),
  timeout: z.optional(z.number().check(z.positive())),
  if: z.optional(z.string()),
  prompt: z.optional(z.string()),
  model: z.optional(z.string()),
});
const groupSchema = z.looseObject({ matcher: z.optional(z.string()), hooks: z.array(z.unknown()) });
const fileSchema = z.looseObject({ hooks: z.optional(z.record(z.string(), z.unknown())), disableAllHooks: z.optional(z.boolean()) });

export function fingerprintOf(h: Pick<ConfiguredHook, 'event' | 'matcher' | 'command' | 'args' | 'timeout' | 'if' | 'type' | 'model'>): string {
  const canonical: unknown[] = [h.event, h.matcher ?? '', h.command, h.args ?? null, h.timeout ?? null, h.if ?? null];
  // A prompt hook's text is `command`: what the person approves is exactly the prompt, its type and model.
  if (h.type === 'prompt') canonical.push('prompt', h.model ?? null);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

export function stampOf(sources: HookSource[]): string {
  return sources
    .map((s) => {
      try {
        const st = statSync(s.path);
        return `${s.path}:${st.mtimeMs}:${st.size}`;
      } catch {
        return `${s.path}:-`;
      }
    })
    .join('|');
}

/**
 * Reads every source. `disableAllHooks: true` in the user file turns every hook off; in a
 * workspace file it turns off the workspace's hooks only (a repository cannot switch off the
 * person's own hooks).
 */
export function loadHooksConfig(sources: HookSource[]): HooksConfig {
  const problems: string[] = [];
  const hooks: ConfiguredHook[] = [];
  const seen = new Set<string>();
  let userOff = false;
  let workspaceOff = false;
  for (const src of sources) {
    const json = readJson(src.path, problems);
    if (json === undefined) continue;
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) {
      problems.push(`${src.path}: not a settings object; its hooks are ignored`);
      continue;
    }
    if (parsed.data.disableAllHooks) {
      if (src.scope === 'user') userOff = true;
      else workspaceOff = true;
    }
    for (const [event, groups] of Object.entries(parsed.data.hooks ?? {})) {
      if (!isHookEventName(event)) {
        problems.push(`${src.path}: hooks.${event}: Keel does not fire this event; its hooks are ignored`);
        continue;
      }
      if (!Array.isArray(groups)) {
        problems.push(`${src.path}: hooks.${event} must be a list of matcher groups; ignored`);
        continue;
      }
      groups.forEach((g, gi) => readGroup(src, event, g, `hooks.${event}[${gi}]`, problems, (h) => {
        if (seen.has(h.fingerprint)) return;
        seen.add(h.fingerprint);
        hooks.push(h);
      }));
    }
  }
  const kept = hooks.filter((h) => !userOff && !(workspaceOff && h.scope !== 'user'));
  return { hooks: kept, problems, stamp: stampOf(sources) };
}

function readGroup(src: HookSource, event: HookEventName, raw: unknown, where: string, problems: string[], add: (h: ConfiguredHook) => void): void {
  const group = groupSchema.safeParse(raw);
  if (!group.success) {
    problems.push(`${src.path}: ${where} needs a "hooks" list; ignored`);
    return;
  }
  const matcher = group.data.matcher;
  const compiled = compileMatcher(matcher);
  if (!compiled.ok) {
    problems.push(`${src.path}: ${where}: ${compiled.error}; its hooks never run`);
    return;
  }
  group.data.hooks.forEach((h, hi) => {
    const handler = handlerSchema.safeParse(h);
    const at = `${where}.hooks[${hi}]`;
    if (!handler.success) {
      problems.push(`${src.path}: ${at}: ${handler.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}; ignored`);
      return;
    }
    const d = handler.data;
    if (d.type === 'prompt') {
      if (!PROMPT_HOOK_EVENTS.has(event)) {
        problems.push(`${src.path}: ${at}: "prompt" hooks run only on ${[...PROMPT_HOOK_EVENTS].join(', ')} (as in Claude Code); this hook never runs`);
        return;
      }
    } else if (d.type !== 'command') {
      // Said plainly: Claude Code's "agent" hooks (a sub-agent with tools judges the event) are not
      // run by Keel (docs/hooks.md).
      const what =
        d.type === 'agent'
          ? `"agent" hooks (a sub-agent judging the event) are not supported by Keel: this hook never runs; write it as a "prompt" or "command" hook`
          : `"${d.type}" hooks are not supported by Keel (only "command" and "prompt"); ignored`;
      problems.push(`${src.path}: ${at}: ${what}`);
      return;
    }
    const text = d.type === 'prompt' ? d.prompt : d.command;
    if (!text || !text.trim()) {
      problems.push(`${src.path}: ${at}: a ${d.type} hook needs a "${d.type}"; ignored`);
      return;
    }
    if (d.if !== undefined) {
      const condition = compileIf(d.if);
      if (!condition.ok) {
        problems.push(`${src.path}: ${at}: ${condition.error} (one permission rule, such as "Bash(rm -rf *)"); this hook never runs`);
        return;
      }
    }
    const kind = d.type === 'prompt' ? { type: 'prompt' as const, ...(d.model !== undefined ? { model: d.model } : {}) } : {};
    const args = d.type === 'prompt' ? undefined : d.args;
    const base = { event, matcher, command: text, timeout: d.timeout, ...(args ? { args } : {}), ...(d.if !== undefined ? { if: d.if } : {}), ...kind };
    add({ ...base, scope: src.scope, source: src.path, fingerprint: fingerprintOf(base) });
  });
}

function readJson(path: string, problems: string[]): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') problems.push(`${path}: cannot be read (${errorMessage(err)}); its hooks are ignored`);
    return undefined;
  }
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    problems.push(`${path}: not valid JSON (${errorMessage(err)}); its hooks are ignored`);
    return undefined;
  }
}
