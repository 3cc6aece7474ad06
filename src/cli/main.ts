import { describeAll } from '../core/machines/catalog';
import { runCommand } from './run';
import { HELP, VERSION } from './help';

/**
 * `keel`: the headless entry. Subcommands: run, machines. Exit codes: 0 success, 1 the task
 * failed or was cancelled, 2 bad usage.
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
      return runCommand(rest);
    case 'tasks':
      return (await import('./tasks')).tasksCommand(rest);
    case 'permissions':
      return (await import('./permissions')).permissionsCommand(rest);
    case 'mcp':
      return (await import('./mcp')).mcpCommand(rest);
    case 'machines':
      if (rest.includes('--json')) process.stdout.write(`${JSON.stringify(describeAll())}\n`);
      else for (const m of describeAll().machines) process.stdout.write(`${m.id}: ${m.states.length} states, ${m.transitions.length} transitions\n  ${m.states.join('\n  ')}\n`);
      return 0;
    default:
      process.stderr.write(`keel: unknown command "${cmd}"\n\n${HELP}`);
      return 2;
  }
}

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
