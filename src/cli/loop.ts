import { existsSync, statSync } from 'node:fs';
import type { LoopEvent, LoopStatus } from '../shared/domain/loop';
import { defaultSettings, existsLoop, LOOP_NAME, uniqueLoopName } from '../core/loop/files';
import { LoopBusy, LoopNotApproved, LoopRunner } from '../core/loop/runner';
import { LinkRefused } from '../core/security/linkFreeFiles';
import { TaskStore } from '../core/store/taskStore';
import { extraWord, providerFor, runArgsFrom, TASK_OPTIONS, type RunArgs } from './args';
import { createCliRuntime } from './cliRuntime';
import { EXIT_BUDGET_REACHED, EXIT_LOOP_LIMIT, EXIT_LOOP_STALLED, EXIT_STORAGE_UNUSABLE, STORAGE_HINT } from './exitCodes';
import { TaskBudget } from '../core/runtime/taskBudget';
import { readUserMaxBudget } from '../core/runtime/budgetSetting';
import { usd } from '../core/machines/turn/budget';
import { LOOP_HELP } from './help';
import { handleSignals } from './signals';
import { TextRenderer } from './textRenderer';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';
import { errorMessage } from '../shared/domain/errors';

/**
 * `keel loop "<goal>"`: runs a goal as a loop of fresh tasks judged after each (docs/loop.md),
 * with the usual `keel run` options for every iteration. `keel loop --resume NAME` continues a
 * loop from its state.json (a stalled one goes on: the person has stepped in). Exit status: 0
 * complete, 1 cancelled (or a failure), 2 bad usage, 3 unusable storage, 4 stalled, 5 stopped at
 * the iteration limit without reaching the goal.
 */
const LOOP_OPTIONS = {
  ...TASK_OPTIONS,
  'max-iterations': { type: 'string' },
  promise: { type: 'string' },
  'stop-word': { type: 'string' },
  name: { type: 'string' },
  checkpoints: { type: 'boolean' },
  resume: { type: 'string' },
} as const;

interface LoopArgs {
  run: RunArgs;
  goal: string;
  /** The loop to create (a goal was given) or to continue (--resume). */
  name: string;
  resume: boolean;
  maxIterations: number | undefined;
  promise: string | undefined;
  stopWord: string | undefined;
  checkpoints: boolean;
}

export function parseLoopArgs(argv: string[], env: NodeJS.ProcessEnv): LoopArgs {
  const { values, positionals } = parseCommandLine(argv, LOOP_OPTIONS, true);
  const [first = '', extra] = positionals;
  if (extra !== undefined) throw new UsageError(extraWord(positionals, 'goal'));
  const goal = first.trim();
  const resume = values.resume?.trim();
  if (values.resume !== undefined && !resume) throw new UsageError('--resume needs the name of a loop');
  if (resume && goal) throw new UsageError('give either a goal (a new loop) or --resume NAME (an existing one), not both');
  if (!resume && !goal) throw new UsageError('no goal given');
  if (resume && (values['max-iterations'] !== undefined || values.promise !== undefined || values['stop-word'] !== undefined || values.name !== undefined || values.checkpoints)) {
    throw new UsageError('--resume continues a loop with its own settings; --max-iterations, --promise, --stop-word, --name and --checkpoints are for a new loop');
  }
  let maxIterations: number | undefined;
  if (values['max-iterations'] !== undefined) {
    maxIterations = Number(values['max-iterations']);
    if (!Number.isInteger(maxIterations) || maxIterations < 1 || maxIterations > 10_000) {
      throw new UsageError(`--max-iterations must be an integer from 1 to 10000 (got "${values['max-iterations']}")`);
    }
  }
  const stopWord = values['stop-word'];
  if (stopWord !== undefined && !/^\S{2,64}$/.test(stopWord)) throw new UsageError(`--stop-word must be one word of 2 to 64 characters without spaces (got "${stopWord}")`);
  const promise = values.promise;
  if (promise !== undefined && (!promise.trim() || promise.includes('</promise>'))) throw new UsageError('--promise needs a text (without "</promise>")');
  const name = resume ?? values.name;
  if (name !== undefined && !LOOP_NAME.test(name)) throw new UsageError(`"${name}" is not a loop name (letters, digits, ".", "_" and "-"; up to 64 characters)`);
  const { resume: _r, 'max-iterations': _m, promise: _p, 'stop-word': _s, name: _n, checkpoints: _c, ...taskValues } = values;
  return {
    run: runArgsFrom(taskValues, goal, undefined, env),
    goal,
    name: name ?? '',
    resume: Boolean(resume),
    maxIterations,
    promise,
    stopWord,
    checkpoints: Boolean(values.checkpoints),
  };
}

export async function loopCommand(argv: string[]): Promise<number> {
  let args: LoopArgs;
  try {
    args = parseLoopArgs(argv, process.env);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(LOOP_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('loop', err);
    throw err;
  }
  const { run } = args;
  if (!existsSync(run.workspace) || !statSync(run.workspace).isDirectory()) return reportUsage('loop', new UsageError(`the workspace ${run.workspace} is not a folder`));
  try {
    new TaskStore(run.storage).prepare();
  } catch (err) {
    process.stderr.write(`keel loop: ${errorMessage(err)}; ${STORAGE_HINT}\n`);
    return EXIT_STORAGE_UNUSABLE;
  }
  if (args.resume && !existsLoop(run.workspace, args.name)) return reportUsage('loop', new UsageError(`no loop named "${args.name}" in ${run.workspace}`));
  if (!args.resume && args.name && existsLoop(run.workspace, args.name)) {
    return reportUsage('loop', new UsageError(`a loop named "${args.name}" already exists; continue it with: keel loop --resume ${args.name}`));
  }

  const cli = await createCliRuntime(run, 'keel loop');
  const write = (line: string) => process.stdout.write(line);
  const json = run.outputFormat === 'stream-json';
  const unsubscribers: (() => void)[] = [];
  // One budget for the whole loop (--max-budget-usd, else maxBudgetUsd in ~/.keel/settings.json):
  // every iteration spends from it; what earlier iterations spent is counted once the loop is open.
  let loopBudget: TaskBudget | undefined;
  let budgetReached: () => void = () => undefined;
  const atBudget = new Promise<'budget'>((resolve) => (budgetReached = () => resolve('budget')));
  const onLoop = (e: LoopEvent) => {
    cli.activity.feed.publish({ kind: 'loop', at: Date.now(), event: e });
    if (json) write(`${JSON.stringify(e)}\n`);
    else write(`${describeLoopEvent(e)}\n`);
  };
  const options = {
    workspace: run.workspace,
    owner: 'keel loop',
    feed: cli.activity.feed,
    // A loop folder is continued only as Keel last wrote it or as the person approved it.
    trust: cli.trust,
    onEvent: onLoop,
    log: (level: 'info' | 'warn' | 'error', message: string) => {
      if (level !== 'info') process.stderr.write(`keel: ${message}\n`);
    },
    host: {
      startIteration: (prompt: string, it: { loopName: string; iteration: number; progressFile: string }) => {
        const task = cli.runtime.startTask({
          prompt,
          title: `${it.loopName}: iteration ${it.iteration}`,
          provider: providerFor(run, cli.mode),
          mode: cli.mode,
          ...(run.maxTurns ? { maxTurns: run.maxTurns } : {}),
          loopProgressFile: it.progressFile,
          ...(loopBudget ? { sharedBudget: loopBudget } : {}),
        });
        // An iteration paused at the loop's budget pauses the loop: nothing more is sent.
        unsubscribers.push(task.subscribe((e) => e.type === 'task' && e.tags?.includes('budgetReached') && budgetReached()));
        if (json) unsubscribers.push(task.subscribe((e) => write(`${JSON.stringify(e)}\n`)));
        else {
          const text = new TextRenderer(write, (line) => process.stderr.write(line));
          unsubscribers.push(task.subscribe((e) => text.render(e)));
          void task.settled().then(() => text.finish());
        }
        return task;
      },
    },
  };
  let runner: LoopRunner;
  try {
    runner = args.resume
      ? LoopRunner.open(options, args.name)
      : LoopRunner.create(options, args.name || uniqueLoopName(run.workspace, args.goal), args.goal, {
          ...defaultSettings(),
          ...(args.maxIterations ? { maxIterations: args.maxIterations } : {}),
          ...(args.stopWord ? { stopWord: args.stopWord } : {}),
          ...(args.promise ? { promise: args.promise } : {}),
          checkpoints: args.checkpoints,
        });
  } catch (err) {
    await cli.dispose();
    const hint = err instanceof LoopNotApproved ? ` (review: keel trust show --workspace ${run.workspace}; approve: keel trust approve --workspace ${run.workspace})` : '';
    process.stderr.write(`keel loop: ${errorMessage(err)}${hint}\n`);
    if (err instanceof LinkRefused) process.stderr.write('  a loop\'s folder must hold plain files: remove the link (check where it pointed first), or give the loop another --name\n');
    return 1;
  }
  const cap = run.maxBudgetUsd ?? readUserMaxBudget().capUsd;
  if (cap !== undefined) loopBudget = new TaskBudget(cap, runner.spentUsd());
  const unhandle = handleSignals({
    cancel: () => runner.cancel(),
    interrupt: (signal) => {
      // The loop keeps its state: `keel loop --resume` starts the cut-off iteration again.
      cli.runtime.interruptAll();
      runner.dispose();
      process.stderr.write(`keel loop: ${signal}: loop "${runner.name}" stopped; continue it with: keel loop --resume ${runner.name}\n`);
    },
  });
  try {
    const stalledBefore = runner.status === 'stalled';
    const first = await Promise.race([runner.run(), atBudget]);
    if (first === 'budget') {
      // The loop keeps its state (as after a signal): `keel loop --resume` runs the cut-off iteration again.
      runner.dispose();
      const spent = loopBudget!.total();
      process.stderr.write(
        `keel loop: "${runner.name}" paused at its budget (spent ${usd(spent)} of ${usd(loopBudget!.capUsd ?? 0)}) before a request that could go over it; ` +
          `continue it with a higher cap: keel loop --resume ${runner.name} --max-budget-usd N\n`,
      );
      return EXIT_BUDGET_REACHED;
    }
    let status: LoopStatus = first;
    // Continuing a stalled loop means the person stepped in: it goes on.
    if (status === 'stalled' && stalledBefore) status = await runner.resume();
    const view = runner.view();
    if (status === 'complete') {
      process.stderr.write(`keel loop: "${view.name}" complete after ${view.iteration} iteration${view.iteration === 1 ? '' : 's'}: ${view.reasons.join('; ')}\n`);
      return 0;
    }
    if (status === 'stopped') {
      process.stderr.write(`keel loop: "${view.name}" stopped: iteration limit reached after ${view.iteration} iteration${view.iteration === 1 ? '' : 's'}; the goal is not reached\n`);
      process.stderr.write(`  its progress is in .keel/loop/${view.name}/progress.md; start a new loop with a higher --max-iterations to go on\n`);
      return EXIT_LOOP_LIMIT;
    }
    if (status === 'stalled') {
      process.stderr.write(`keel loop: "${view.name}" stalled after ${view.iteration} iterations and needs you: ${view.reasons.join('; ')}\n`);
      process.stderr.write(`  edit .keel/loop/${view.name}/anchor.md, progress.md or guardrails.md, then: keel loop --resume ${view.name}\n`);
      // The goal and guardrails are part of the workspace's approval (docs/permissions.md, "Trust").
      process.stderr.write(`  (after an edit of anchor.md or guardrails.md, approve it first: keel trust approve --workspace ${run.workspace})\n`);
      return EXIT_LOOP_STALLED;
    }
    process.stderr.write(`keel loop: "${view.name}" ${status}\n`);
    return 1;
  } catch (err) {
    if (err instanceof LoopBusy) {
      process.stderr.write(`keel loop: ${err.message}\n`);
      return 1;
    }
    if (err instanceof LinkRefused) {
      process.stderr.write(`keel loop: ${err.message}\n  a loop's folder must hold plain files: remove the link (check where it pointed first), or start a new loop\n`);
      return 1;
    }
    throw err;
  } finally {
    unhandle();
    for (const u of unsubscribers) u();
    runner.dispose();
    await cli.dispose();
  }
}

function describeLoopEvent(e: LoopEvent): string {
  switch (e.state) {
    case 'started':
    case 'resumed':
      return `── loop "${e.name}" ${e.state}${e.iteration > 0 ? ` after iteration ${e.iteration}` : ''}`;
    case 'iteration':
      return `── loop "${e.name}": iteration ${e.iteration} (task ${e.taskId})`;
    case 'judged':
      return `── loop "${e.name}": iteration ${e.iteration} judged ${e.verdict}${e.reasons.length ? `: ${e.reasons.join('; ')}` : ''}`;
    case 'guardrail':
      return `── loop "${e.name}": guardrail added: ${e.pattern}`;
    case 'checkpoint':
      return `── loop "${e.name}": checkpoint ${e.ref} (${e.commit.slice(0, 12)})`;
    default:
      return `── loop "${e.name}" ${e.state}${e.reasons.length ? `: ${e.reasons.join('; ')}` : ''}`;
  }
}
