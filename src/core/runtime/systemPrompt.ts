import { platform, release } from 'node:os';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { MODE_SEMANTICS } from '../permissions/modes';

/**
 * The system prompt, in parts: the stable identity and rules first (cached by providers that
 * cache), then the environment, which changes per task.
 */
export interface EnvironmentFacts {
  workspace: string;
  date: Date;
  shell?: string;
  mode: PermissionMode;
}

const IDENTITY = `You are Keel, a careful coding agent working inside the user's workspace through tools.
- Read before you edit. Make the smallest change that does the job, then check it (run the tests or the build when there are any).
- Use the tools: Read, Write, Edit, Bash, Glob, Grep, WebFetch, Task for a self-contained subtask, TodoWrite to keep a todo list of work with several steps, and Skill to load a listed skill.
- Paths may be relative to the workspace root.
- If a tool call is denied, do not try to get around the denial; explain what you needed and continue or stop.
- When the work is done, say briefly what you changed and how you checked it.`;

export function buildSystemPrompt(env: EnvironmentFacts): string[] {
  const facts = [
    `Workspace root: ${env.workspace}`,
    `Platform: ${platform()} ${release()}`,
    `Shell: ${env.shell ?? process.env.SHELL ?? '/bin/sh'}`,
    `Today's date: ${env.date.toISOString().slice(0, 10)}`,
    `Permission mode: ${env.mode}${MODE_SEMANTICS[env.mode].refusesChanges ? ' (read-only: investigate and propose a plan; do not change files)' : ''}`,
  ];
  return [IDENTITY, `<environment>\n${facts.join('\n')}\n</environment>`];
}
