import { NOTHING_APPROVED, type ProjectContentGate } from '../core/commands/projectGate';

/**
 * The approval of a workspace's own commands and skills in a headless run (docs/commands.md,
 * "Trust"): the one seam the workspace trust store plugs into. Until that store is there, a
 * workspace's commands and skills are held back and the person is told how to use them anyway
 * (as their own, from `~/.claude/`).
 */
export function cliContentGate(_workspace: string, _keelHome: string): { gate: ProjectContentGate; approveHint: string } {
  return {
    gate: NOTHING_APPROVED,
    approveHint: 'this Keel cannot approve a workspace\'s commands and skills yet: copy the file into ~/.claude/commands/ (or ~/.claude/skills/) to use it as your own',
  };
}
