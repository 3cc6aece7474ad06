import { existsSync, statSync } from 'node:fs';
import type { TaskEvent } from '../shared/domain/events';
import { TaskRuntime } from '../core/runtime/taskRuntime';
import { parseRunArgs, UsageError } from './args';
import { HELP } from './help';
import { TextRenderer } from './textRenderer';

/** `keel run`: starts one task, streams its events, exits when it settles. */
export async function runCommand(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseRunArgs(argv, process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`keel run: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  if (!existsSync(args.workspace) || !statSync(args.workspace).isDirectory()) {
    process.stderr.write(`keel run: the workspace ${args.workspace} is not a folder\n`);
    return 2;
  }
  const runtime = new TaskRuntime({
    workspace: args.workspace,
    log: (level, message) => {
      if (level !== 'info') process.stderr.write(`keel: ${message}\n`);
    },
  });
  const task = runtime.startTask({ prompt: args.prompt, provider: args.provider, mode: args.mode, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
  const write = (line: string) => process.stdout.write(line);
  const text = new TextRenderer(write, (line) => process.stderr.write(line));
  const onEvent = (e: TaskEvent) => (args.outputFormat === 'stream-json' ? write(`${JSON.stringify(e)}\n`) : text.render(e));
  const unsubscribe = task.subscribe(onEvent);

  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    task.cancel();
  };
  process.on('SIGINT', onSigint);
  try {
    const done = await task.settled();
    if (done.status === 'failed') {
      // Headless there is nobody to press Retry: the task ends failed.
      task.abandon();
    }
    text.finish();
    return done.status === 'completed' ? 0 : 1;
  } finally {
    process.off('SIGINT', onSigint);
    unsubscribe();
    runtime.dispose();
  }
}
