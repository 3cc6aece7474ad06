import type { describeAll as DescribeAll } from '../core/machines/catalog';
import { hideKeysFromProcEnviron } from '../core/security/hideEnvironment';
import { killRunningProcessGroups } from '../core/tools/processRunner';
import { HELP, MACHINES_HELP, VERSION } from './help';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

/**
 * `keel`: the headless entry. Subcommands: run, batch, loop, tasks, memory, permissions, mcp, machines, status, hooks, trust, workers, worker
 * (started by a pool). Exit codes in
 * ./exitCodes.ts (0 success, 1 failed or cancelled, 2 bad usage — one line on stderr:
 * `keel <command>: <problem> (see keel <command> --help)` —, 3 unusable storage, 128 + n on signal n).
 */
async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(HELP);
      return cmd === undefined ? 2 : 0;
    case '-v':
    case '--version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case 'run':
      return (await import('./run')).runCommand(rest);
    case 'tasks':
      return (await import('./tasks')).tasksCommand(rest);
    case 'memory':
      return (await import('./memory')).memoryCommand(rest);
    case 'permissions':
      return (await import('./permissions')).permissionsCommand(rest);
    case 'mcp':
      return (await import('./mcp/commands')).mcpCommand(rest);
    case 'machines':
      return machinesCommand(rest, (await import('../core/machines/catalog')).describeAll);
    case 'loop':
      return (await import('./loop')).loopCommand(rest);
    case 'hooks':
      return (await import('./hooks')).hooksCommand(rest);
    case 'trust':
      return (await import('./trust')).trustCommand(rest);
    case 'status':
      return (await import('./status')).statusCommand(rest);
    case 'workers':
      return (await import('./workers')).workersCommand(rest);
    case 'events':
      return (await import('./events')).eventsCommand(rest);
    case 'batch':
      return (await import('./batch')).batchCommand(rest);
    case 'worker':
      return (await import('./worker')).workerCommand(rest);
    default:
      process.stderr.write(`keel: unknown ${cmd.startsWith('-') ? `option ${cmd}` : `command "${cmd}"`} (see keel --help)\n`);
      return 2;
  }
}

/** `keel machines [--json]`: the state machines as the definitions declare them. */
function machinesCommand(argv: string[], describeAll: typeof DescribeAll): number {
  let json: boolean;
  try {
    json = Boolean(parseCommandLine(argv, { json: { type: 'boolean' } }, false).values.json);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(MACHINES_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('machines', err);
    throw err;
  }
  const all = describeAll();
  if (json) {
    process.stdout.write(`${JSON.stringify(all)}\n`);
    return 0;
  }
  for (const m of all.machines) {
    const nested = m.invokes.filter((i) => i.machine).map((i) => `${i.state} → ${i.machine}${i.spawned ? ' (spawned)' : ''}`);
    const actionOnly = m.transitions.filter((t) => t.to === null).length;
    process.stdout.write(`${m.id}: ${m.states.length} states, ${m.transitions.length} transitions (${actionOnly} of them only run actions)\n  ${m.states.join('\n  ')}\n`);
    if (nested.length) process.stdout.write(`  invokes: ${nested.join(', ')}\n`);
  }
  process.stdout.write('\nHow they nest while a task runs\n');
  for (const p of all.paths) {
    process.stdout.write(`${p.name[0]!.toUpperCase()}${p.name.slice(1)} (${p.when}):\n`);
    const width = Math.max(...p.steps.map((s) => `${s.from} → ${s.to}`.length));
    for (const s of p.steps) process.stdout.write(`  ${`${s.from} → ${s.to}`.padEnd(width)}${s.how ? `  (${s.how})` : ''}\n`.replace(/ +\n$/, '\n'));
  }
  return 0;
}

// First of all: the provider keys this process was started with leave the copy of its environment
// that every process of this user can read (/proc/PID/environ), commands the model runs included
// (security/hideEnvironment.ts). They stay in process.env for Keel itself.
const hiding = hideKeysFromProcEnviron();
if (hiding.problem) process.stderr.write(`keel: could not hide the provider keys from other processes of this user (/proc/${process.pid}/environ): ${hiding.problem}\n`);

// However this process ends — a closed pipe below, an uncaught error, the natural end — a command
// a tool is still running in this process does not outlive it: its process group is killed.
// (Signals interrupt the task first: signals.ts. Commands run by workers: worker.ts.)
process.on('exit', () => killRunningProcessGroups());

// A closed pipe (`keel run … | head`) is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
