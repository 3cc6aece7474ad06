import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { relative, resolve } from 'node:path';
import { hookSources, loadHooksConfig } from '../core/hooks/config';
import { hookItem, isApproved } from '../core/trust/items';
import { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { hookTimeoutS, type ConfiguredHook } from '../core/hooks/types';
import { storageOption } from './args';
import { HOOKS_HELP } from './help';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel hooks list|approve|revoke`: the hooks of a workspace and their state. A workspace's own
 * hooks (`.claude/`, `.keel/` settings files) run only once the person approved the workspace
 * (docs/permissions.md, "Trust"): `approve` and `revoke` are `keel trust approve` / `revoke`, the
 * one approval of everything the workspace provides (--storage, else $KEEL_HOME, else ~/.keel).
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
  if (sub === 'approve' || sub === 'revoke') {
    const { trustCommand } = await import('./trust');
    return trustCommand([sub, '--workspace', workspace, '--storage', keelHome], sub === 'approve' ? 'keel hooks approve' : undefined);
  }
  if (sub !== 'list') return reportUsage('hooks', new UsageError(`unknown subcommand "${sub}" (list, approve or revoke)`));
  const config = loadHooksConfig(hookSources(workspace));
  for (const p of config.problems) process.stderr.write(`keel hooks: ${p}\n`);
  const trust = new WorkspaceTrust({ workspace, keelHome });
  try {
    return list(config.hooks, (h) => {
      if (h.scope === 'user') return 'trusted';
      const item = hookItem(h, relative(workspace, h.source), { workspace, home: homedir(), ...(process.env.PATH !== undefined ? { pathEnv: process.env.PATH } : {}) });
      if (item.blocked?.length) return 'cannot be approved';
      return isApproved(trust, item) ? 'approved' : 'needs approval';
    }, Boolean(values.json));
  } finally {
    trust.dispose();
  }
}

function list(hooks: ConfiguredHook[], stateOf: (h: ConfiguredHook) => string, json: boolean): number {
  const rows = hooks.map((h) => ({
    event: h.event,
    matcher: h.matcher ?? '',
    ...(h.if !== undefined ? { if: h.if } : {}),
    ...(h.type === 'prompt' ? { type: 'prompt', prompt: h.command, ...(h.model ? { model: h.model } : {}) } : { command: h.command }),
    ...(h.args ? { args: h.args } : {}),
    timeout: hookTimeoutS(h),
    scope: h.scope,
    source: h.source,
    state: stateOf(h),
  }));
  if (json) {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write('No hooks configured.\n');
    return 0;
  }
  for (const r of rows) {
    const what = 'prompt' in r ? `prompt ${JSON.stringify(r.prompt)}` : r.command;
    process.stdout.write(`${r.state.padEnd(14)} ${r.event}${r.matcher ? ` [${r.matcher}]` : ''}${r.if ? ` if ${r.if}` : ''}: ${what}  (${r.source})\n`);
  }
  if (rows.some((r) => r.state === 'needs approval')) process.stdout.write("Review what this workspace provides with keel trust show; approve it with keel trust approve\n");
  return 0;
}

export function describe(h: ConfiguredHook): string {
  const what = h.type === 'prompt' ? `prompt ${JSON.stringify(h.command)}` : `${h.command}${h.args ? ` ${h.args.join(' ')}` : ''}`;
  return `${h.event}${h.matcher ? ` [${h.matcher}]` : ''}${h.if ? ` if ${h.if}` : ''}: ${what}  (${h.source})`;
}
