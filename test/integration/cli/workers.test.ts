import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { changesOf, eventually } from '../../unit/helpers/changes';
import { processAlive } from '../../../src/core/locks/processAlive';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Workers as a person uses them: `keel run --workers 1` and `keel batch FILE --workers 2`, the
 * built CLI as a child process, the real Anthropic provider against the fake model server.
 */
let server: FakeModelServer;
let workspace: string;
// Memory off: these tests count the requests of worker runs; the gatekeeper's lesson call after a
// completed run (tested in memory.test.ts) would add one at a time that depends on the scheduling.
const KEY = { ANTHROPIC_API_KEY: 'sk-test-workers', KEEL_MEMORY: 'off' };
const provider = (baseUrl: string) => ['--provider', 'anthropic', '--base-url', baseUrl, '--model', 'claude-test', '--workspace', workspace];

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-workers-ws-'));
});
afterEach(async () => {
  await server.close();
});

describe('keel with worker processes', () => {
  it('keel run --workers 1 runs the task in a worker: tools run there, without the API key', async () => {
    writeFileSync(join(workspace, 'greeting.txt'), 'hello world\n');
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'greeting.txt' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'tr "\\0" " " < /proc/$PPID/cmdline; echo; echo "key=${ANTHROPIC_API_KEY:-none}"; echo "malloc=${MALLOC_MMAP_THRESHOLD_:-none}"' } }] },
      { blocks: [{ type: 'text', text: 'Done in a worker.' }] },
    );
    const run = await runCli(['run', 'look around', ...provider(server.url), '--mode', 'bypassPermissions', '--output-format', 'stream-json', '--workers', '1'], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'tool_result').map((e) => [e.id, e.is_error])).toEqual([['toolu_read', false], ['toolu_bash', false]]);
    const output = ofType(run.events, 'tool_output').map((e) => e.chunk).join('');
    // The command's parent is the worker process, not the CLI.
    // The lean worker bundle beside the CLI's (dist/worker.js), with the worker's V8 options.
    expect(output).toMatch(/--max-semi-space-size=1 --no-wasm-tier-up --no-wasm-dynamic-tiering --max-opt=1 \S+\/worker\.js --worker-id w1/);
    expect(output).toContain('key=none');
    // The worker's own malloc settings (WORKER_ENV) are not passed on to the commands it runs.
    expect(output).toContain('malloc=none');
    expect(run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
    expect(server.requests).toHaveLength(3);
  });

  it('keel batch: two tasks run at once; kill -9 of one worker interrupts that task only', async () => {
    // The first request to arrive stalls mid-answer; the second completes.
    server.enqueue({ blocks: [{ type: 'text', text: 'This answer never finishes because its worker dies.' }], fault: { kind: 'stall', afterEvents: 3 } }, { blocks: [{ type: 'text', text: 'The other task finished.' }] });
    const file = join(workspace, 'tasks.txt');
    writeFileSync(file, 'first task\n\n{"prompt": "second task"}\n');
    const run = await runCli(['batch', file, ...provider(server.url), '--workers', '2'], KEY);
    await eventually(() => server.requests.length === 2, () => `two requests in flight (got ${server.requests.length}; stderr: ${run.stderr()})`, changesOf(server));
    const stalledTask = server.requests[0]!.taskId;
    expect(stalledTask).toBeTruthy();
    await eventually(() => ofType(run.events, 'worker').some((e) => e.taskId === stalledTask), () => 'the stalled task\'s worker line', run.changes);
    const worker = ofType(run.events, 'worker').find((e) => e.taskId === stalledTask)!;
    const pid = worker.pid as number;
    process.kill(pid, 'SIGKILL');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(1);
    expect(processAlive(pid)).toBe(false);
    const dones = ofType(run.events, 'done');
    const byTask = new Map(dones.map((d) => [d.taskId, d.status]));
    expect(byTask.get(stalledTask)).toBe('interrupted');
    expect([...byTask.entries()].filter(([id]) => id !== stalledTask).map(([, s]) => s)).toEqual(['completed']);
    const lost = ofType(run.events, 'error').find((e) => e.taskId === stalledTask)!;
    expect(lost.code).toBe('worker_lost');
    expect(lost.message).toMatch(/The worker running task \S+ stopped \(the worker process exited \(signal SIGKILL\)\)\. The task was interrupted; resume it to continue\. Resume it with: keel run --resume \S+/);
    // Tagged by line, and the interrupted query was never sent again.
    expect(new Set(run.events.filter((e) => e.type === 'done').map((e) => e.line))).toEqual(new Set([1, 3]));
    expect(server.requests).toHaveLength(2);
    expect(run.stderr()).toMatch(/line\s+task\s+status\s+worker/);
    expect(run.stderr()).toMatch(/interrupted/);

    // Resumable: the interrupted task continues from its log, on a worker again.
    server.enqueue({ blocks: [{ type: 'text', text: 'Picked up where it stopped.' }] });
    const resumed = await runCli(['run', '--resume', stalledTask!, ...provider(server.url), '--output-format', 'stream-json', '--workers', '1'], KEY, run.storage);
    const again = await resumed.exit;
    expect(again.code, resumed.stderr()).toBe(0);
    expect(resumed.events.at(-1)).toMatchObject({ type: 'done', taskId: stalledTask, status: 'completed' });
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.taskId).toBe(stalledTask);
  });

  it('a Task call in a worker runs its sub-agent on another worker and the parent resumes with its answer', async () => {
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_task', name: 'Task', input: { description: 'count', prompt: 'count the files' } }] },
      { blocks: [{ type: 'text', text: 'There are 3 files.' }] },
      { blocks: [{ type: 'text', text: 'The sub-agent says 3.' }] },
    );
    // One worker: the parent's holds it while it waits, so the child's starts beyond the size.
    const run = await runCli(['run', 'delegate', ...provider(server.url), '--mode', 'bypassPermissions', '--output-format', 'stream-json', '--workers', '1'], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(server.requests).toHaveLength(3);
    const parent = server.requests[0]!.taskId;
    expect(server.requests[1]!.taskId).not.toBe(parent);
    expect(server.requests[2]!.taskId).toBe(parent);
    // The parent's next request carries the sub-agent's answer as the Task call's result.
    const last = (server.requests[2]!.body as { messages: { content: unknown }[] }).messages.at(-1);
    expect(JSON.stringify(last)).toMatch(/toolu_task.*There are 3 files/);
  });

  it('a call that must ask goes up to the host, whose answer (headless: deny) comes back to the worker', async () => {
    server.enqueue({ blocks: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'touch made-by-worker' } }] }, { blocks: [{ type: 'text', text: 'It was refused.' }] });
    const run = await runCli(['run', 'make a file', ...provider(server.url), '--output-format', 'stream-json', '--workers', '1'], KEY);
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'tool_result').map((e) => [e.id, e.is_error])).toEqual([['toolu_bash', true]]);
    expect(JSON.stringify((server.requests[1]!.body as { messages: unknown[] }).messages.at(-1))).toMatch(/Permission denied: Keel would ask first \(running a command no rule allows\) and a headless run has no one to ask; --mode bypassPermissions, or the allow rule \\"Bash\(touch:\*\)\\"/);
  });

  it('keel workers shows the pool of a running keel run --workers: its worker busy with the task, by pid', async () => {
    server.enqueue({ blocks: [{ type: 'text', text: 'This answer waits.' }], fault: { kind: 'stall', afterEvents: 2 } });
    const run = await runCli(['run', 'wait a while', ...provider(server.url), '--output-format', 'stream-json', '--workers', '1'], KEY);
    await eventually(() => server.requests.length === 1, () => `the request (stderr: ${run.stderr()})`, changesOf(server));
    const taskId = server.requests[0]!.taskId;
    const listed = await runCli(['workers', '--json'], {}, run.storage);
    expect((await listed.exit).code, listed.stderr()).toBe(0);
    const { pools } = JSON.parse(listed.stdout()) as { pools: { ownerPid: number; owner: string; max: number; workers: { id: string; state: string; pid: number; taskId: string; queriesProcessed: number }[] }[] };
    expect(pools).toHaveLength(1);
    expect(pools[0]).toMatchObject({ ownerPid: run.child.pid, owner: 'keel run', max: 1 });
    expect(pools[0]!.workers).toHaveLength(1);
    const w = pools[0]!.workers[0]!;
    expect(w).toMatchObject({ id: 'w1', state: 'busy', taskId });
    expect(processAlive(w.pid)).toBe(true);
    const text = await runCli(['workers'], {}, run.storage);
    await text.exit;
    // Words, not the pool or worker machine's state names.
    expect(text.stdout()).toContain(`keel run (pid ${run.child.pid}): 1 worker, running a task`);
    expect(text.stdout()).toMatch(new RegExp(`Running task ${taskId!.slice(0, 8)}\\s+w1 · pid ${w.pid}`));
    expect(text.stdout()).not.toMatch(/\b(busy|ready|atCapacity|active)\b/);
    run.child.kill('SIGINT');
    await run.exit;
    // The run is gone, and so is its pool.
    const after = await runCli(['workers', '--json'], {}, run.storage);
    await after.exit;
    expect(JSON.parse(after.stdout())).toEqual({ pools: [] });
  });
});
