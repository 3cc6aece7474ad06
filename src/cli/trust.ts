import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { statusLines, stateOf, itemLines } from '../core/trust/describe';
import { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { storageOption } from './args';
import { TRUST_HELP } from './help';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel trust [show|approve|revoke]`: the one approval of everything a workspace provides that
 * loosens permissions or runs code (docs/permissions.md, "Trust"): its settings' allow rules,
 * additional directories, looser mode and env, its hooks and MCP servers with the files they run,
 * its instructions files, committed memories and loop folders. `show` lists each with its state;
 * `approve` approves exactly what it lists (with `--fingerprint`, only if nothing changed since
 * the person looked); `revoke` forgets the workspace's approval. Headless runs never approve by
 * themselves; `keel hooks approve` and `keel mcp approve` are this command's `approve`.
 */
export async function trustCommand(argv: string[], alias?: string): Promise<number> {
  let values: { workspace?: string | undefined; json?: boolean | undefined; storage?: string | undefined; fingerprint?: string | undefined };
  let positionals: string[];
  try {
    const options = { workspace: { type: 'string' }, json: { type: 'boolean' }, storage: { type: 'string' }, fingerprint: { type: 'string' } } as const;
    ({ values, positionals } = parseCommandLine(argv, options, true));
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(TRUST_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('trust', err);
    throw err;
  }
  const [sub = 'show', ...rest] = positionals;
  if (rest.length > 0) return reportUsage('trust', new UsageError(`unexpected argument "${rest[0]}"`));
  const workspace = resolve(values.workspace ?? process.cwd());
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) return reportUsage('trust', new UsageError(`the workspace ${workspace} is not a folder`));
  // A --storage that is not there is bad usage: approvals written to a typo would never be read.
  let keelHome: string;
  try {
    keelHome = storageOption(values.storage, process.env);
  } catch (err) {
    if (err instanceof UsageError) return reportUsage('trust', err);
    throw err;
  }
  const trust = new WorkspaceTrust({ workspace, keelHome });
  const command = `keel trust approve --workspace ${quote(workspace)}${values.storage ? ` --storage ${quote(keelHome)}` : ''}`;
  try {
    switch (sub) {
      case 'show':
        return show(trust, command, Boolean(values.json));
      case 'approve':
        return await approve(trust, values.fingerprint, alias);
      case 'revoke': {
        const n = await trust.revoke();
        const items = `${n} item${n === 1 ? '' : 's'}`;
        process.stdout.write(n === 0 ? `Nothing was approved in ${workspace}.\n` : `Revoked the approval of ${workspace} (${items}): what it provides is held back until you approve it again.\n`);
        return 0;
      }
      default:
        return reportUsage('trust', new UsageError(`unknown subcommand "${sub}" (show, approve or revoke)`));
    }
  } finally {
    trust.dispose();
  }
}

function show(trust: WorkspaceTrust, command: string, json: boolean): number {
  const status = trust.status();
  if (json) {
    const items = status.manifest.items.map((i) => ({
      id: i.id,
      kind: i.kind,
      summary: i.summary,
      source: i.source,
      state: stateOf(status, i),
      details: i.details,
      ...(i.blocked ? { blocked: i.blocked } : {}),
    }));
    const { workspace, fingerprint, problems } = status.manifest;
    process.stdout.write(`${JSON.stringify({ workspace, fingerprint, otherRepository: status.otherRepository, restricted: status.restricted, items, problems })}\n`);
    return 0;
  }
  process.stdout.write(`${statusLines(status, command).join('\n')}\n`);
  return 0;
}

async function approve(trust: WorkspaceTrust, fingerprint: string | undefined, alias: string | undefined): Promise<number> {
  const manifest = trust.manifest();
  if (fingerprint !== undefined && !manifest.fingerprint.startsWith(fingerprint)) {
    process.stderr.write(`keel trust: the workspace changed since you looked (its fingerprint is now ${manifest.fingerprint.slice(0, 16)}): nothing approved; look again with keel trust show\n`);
    return 1;
  }
  const before = trust.status(manifest);
  const approved = await trust.approve(manifest);
  const items = approved ?? [];
  if (alias) process.stdout.write(`(${alias} approves everything this workspace provides, as keel trust approve does.)\n`);
  if (items.length === 0) process.stdout.write(`Nothing to approve: ${manifest.workspace} provides nothing that loosens permissions or runs code.\n`);
  else {
    process.stdout.write(`Approved for ${manifest.workspace}, exactly as it is now:\n`);
    for (const i of items) process.stdout.write(`${itemLines(before, i).join('\n')}\n`);
  }
  if (before.blocked.length) {
    process.stdout.write('Not approved (Keel cannot tell what these run):\n');
    for (const i of before.blocked) process.stdout.write(`${itemLines(before, i).join('\n')}\n`);
  }
  return 0;
}

function quote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
