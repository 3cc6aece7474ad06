import { mkdirSync, watch } from 'node:fs';
import { liveSockets, readAgents, socketDir, watchSocket } from '../core/agents/statusSocket';
import { statusSummary, type AgentRow } from '../shared/domain/agents';
import { agentStatusWords } from '../shared/words/agents';
import { storageOption } from './args';
import { STATUS_HELP } from './help';
import { followerStdout } from './follow';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel status [--json] [--follow]`: the agents of every Keel process of this user (VS Code windows,
 * `keel run`, `keel loop`), read from their status sockets under $KEEL_HOME/run (docs/hooks.md).
 * `--follow` prints every line those sockets publish (NDJSON: snapshots, every hook event, loop
 * events, board changes) until interrupted, including processes that start later.
 */
export async function statusCommand(argv: string[]): Promise<number> {
  let values: { json?: boolean | undefined; follow?: boolean | undefined; storage?: string | undefined };
  let keelHome: string;
  try {
    ({ values } = parseCommandLine(argv, { json: { type: 'boolean' }, follow: { type: 'boolean' }, storage: { type: 'string' } }, false));
    keelHome = storageOption(values.storage, process.env);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(STATUS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('status', err);
    throw err;
  }
  if (values.follow) return follow(keelHome);
  const agents = await readAgents(keelHome);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ agents, summary: statusSummary(agents) })}\n`);
    return 0;
  }
  if (agents.length === 0) {
    process.stdout.write('No agents: no Keel process is running tasks.\n');
    return 0;
  }
  const now = Date.now();
  for (const a of agents) process.stdout.write(`${line(a, now)}\n`);
  const summary = statusSummary(agents);
  if (summary) process.stdout.write(`${summary}\n`);
  return 0;
}

function line(a: AgentRow, now: number): string {
  const status = agentStatusWords(a);
  const indent = a.parentId ? '  ' : '';
  const figures = `${elapsed(now - a.startedAt).padStart(7)}  ${tokens(a.tokens).padStart(9)}  $${a.costUsd.toFixed(2)}`;
  return `${indent}${status.padEnd(22)} ${figures}  ${a.kind === 'loop' ? 'loop ' : ''}${a.title}  [${a.id}${a.pid ? ` · pid ${a.pid}` : ''}]`;
}

function elapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function tokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k tok` : `${n} tok`;
}

/**
 * `--follow`: every line the status sockets publish, until the first SIGINT or SIGTERM (even
 * while its own reader does not read: see follow.ts). While no Keel process is there, stderr says
 * it waits for one.
 */
async function follow(keelHome: string): Promise<number> {
  const dir = socketDir(keelHome);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const watching = new Set<string>();
  const out = followerStdout('status');
  const connect = () => {
    for (const path of liveSockets(keelHome)) {
      if (watching.has(path) || out.signal.aborted) continue;
      watching.add(path);
      void watchSocket(path, (l) => out.write(`${JSON.stringify(l)}\n`), out.signal).then(() => watching.delete(path));
    }
  };
  connect();
  if (watching.size === 0) process.stderr.write(`keel status: waiting for a Keel process (keel run, keel loop, keel batch, VS Code) using ${keelHome}; Ctrl+C ends\n`);
  // New processes appear as new sockets in the folder.
  const watcher = watch(dir, () => connect());
  await new Promise<void>((resolve) => {
    if (out.signal.aborted) return resolve();
    out.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  watcher.close();
  out.dispose();
  return out.exit();
}
