import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { HookApprovals } from '../core/hooks/approvals';
import { hookSources, loadHooksConfig } from '../core/hooks/config';
import type { ConfiguredHook } from '../core/hooks/types';
import { storageOption } from './args';
import { HOOKS_HELP } from './help';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel hooks list|approve|revoke`: the hooks of a workspace and their approval. A workspace's own
 * hooks (`.claude/`, `.keel/` settings files) run only once approved, per workspace and in their
 * exact form; approvals live in `<keel home>/hook-approvals.json` (--storage, else $KEEL_HOME or ~/.keel).
 * Headless runs can also approve with `keel run --approve-project-hooks` (docs/hooks.md).
 */
export async function hooksCommand(argv: string[]): Promise<number> {
  let values: { workspace?: string | undefined; json?: boolean | undefined; storage?: string | undefined };
  let positionals: string[];
  try {
    ({ values, positionals } = parseCommandLine(argv, { workspace: { type: 'string' }, json: { type: 'boolean' }, storage: { type: 'string' } }, true));
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(HOOKS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('hooks', err);
    throw err;
  }
  const [sub = 'list', ...rest] = positionals;
  if (rest.length > 0) return reportUsage('hooks', new UsageError(`unexpected argument "${rest[0]}"`));
  const workspace = resolve(values.workspace ?? process.cwd());
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) return reportUsage('hooks', new UsageError(`the workspace ${workspace} is not a folder`));
  let keelHome: string;
  try {
    keelHome = storageOption(values.storage, process.env);
  } catch (err) {
    if (err instanceof UsageError) return reportUsage('hooks', err);
    throw err;
  }
  const config = loadHooksConfig(hookSources(workspace));
  const approvals = new HookApprovals(keelHome, workspace);
  for (const p of config.problems) process.stderr.write(`keel hooks: ${p}\n`);
  switch (sub) {
    case 'list':
      return list(config.hooks, approvals, Boolean(values.json));
    case 'approve': {
      const pending = approvals.pending(config.hooks);
      if (pending.length === 0) {
        process.stdout.write(`Nothing to approve: ${workspace} has no hook waiting for approval.\n`);
        return 0;
      }
      approvals.approve(pending);
      process.stdout.write(`Approved ${pending.length} hook${pending.length === 1 ? '' : 's'} of ${workspace}:\n`);
      for (const h of pending) process.stdout.write(`  ${describe(h)}\n`);
      return 0;
    }
    case 'revoke': {
      const n = approvals.revokeAll();
      process.stdout.write(n === 0 ? `No approvals recorded for ${workspace}.\n` : `Revoked ${n} approval${n === 1 ? '' : 's'} for ${workspace}; its hooks will not run until approved again.\n`);
      return 0;
    }
    default:
      return reportUsage('hooks', new UsageError(`unknown subcommand "${sub}" (list, approve or revoke)`));
  }
}

function list(hooks: ConfiguredHook[], approvals: HookApprovals, json: boolean): number {
  const rows = hooks.map((h) => ({
    event: h.event,
    matcher: h.matcher ?? '',
    command: h.command,
    ...(h.args ? { args: h.args } : {}),
    timeout: h.timeout ?? 60,
    scope: h.scope,
    source: h.source,
    state: h.scope === 'user' ? 'trusted' : approvals.mayRun(h) ? 'approved' : 'needs approval',
  }));
  if (json) {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write('No hooks configured.\n');
    return 0;
  }
  for (const r of rows) process.stdout.write(`${r.state.padEnd(14)} ${r.event}${r.matcher ? ` [${r.matcher}]` : ''}: ${r.command}  (${r.source})\n`);
  if (rows.some((r) => r.state === 'needs approval')) process.stdout.write('Approve this workspace\'s hooks with: keel hooks approve\n');
  return 0;
}

export function describe(h: ConfiguredHook): string {
  return `${h.event}${h.matcher ? ` [${h.matcher}]` : ''}: ${h.command}${h.args ? ` ${h.args.join(' ')}` : ''}  (${h.source})`;
}
