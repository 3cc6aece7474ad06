import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cliBundle } from './cliHarness';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function keel(args: string[]): Promise<Ran> {
  const cli = await cliBundle();
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

/**
 * `keel machines --json` shows how the catalog's machines nest as the product runs them: which
 * state of which machine invokes which other machine (the permission machine is the turn's child).
 */
describe('keel machines', () => {
  it('--json names the machine each state invokes, and every one it names is in the catalog', async () => {
    const run = await keel(['machines', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const { machines } = JSON.parse(run.stdout) as { machines: { id: string; states: string[]; invokes: { state: string; src: string; machine?: string }[] }[] };
    const nested = machines.flatMap((m) => m.invokes.filter((i) => i.machine).map((i) => `${m.id}.${i.state} → ${i.machine}`));
    // A run's turn loop: the turn machine in the host's process, or the query machine, which runs it on a worker;
    // a run's phases: the runPhases machine, the task's child from the run's start (spawned by initializing).
    expect(nested.sort()).toEqual(
      [
        'call.guarded.running → stream',
        'task.initializing → runPhases',
        'task.running.loop.inProcess → turn',
        'task.running.loop.onWorker → query',
        'turn.permissionCheck → permission',
        'turn.streaming.requesting → call',
      ].sort(),
    );
    expect(machines.find((m) => m.id === 'task')!.invokes).toContainEqual({ state: 'initializing', src: 'runPhases', spawned: true, machine: 'runPhases' });
    const ids = new Set(machines.map((m) => m.id));
    for (const m of machines) {
      for (const i of m.invokes) {
        if (i.machine) expect(ids.has(i.machine), `${m.id} invokes ${i.machine}`).toBe(true);
        expect(m.states.includes(i.state) || i.state === '(root)', `${m.id}: ${i.state}`).toBe(true);
      }
    }
    expect(machines.find((m) => m.id === 'turn')!.invokes).toContainEqual({ state: 'validatingInput', src: 'validateToolCall' });
  });

  it('--json lists every transition, those that only run actions too, and the nesting of the default path', async () => {
    const run = await keel(['machines', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const { machines, paths } = JSON.parse(run.stdout) as {
      machines: { id: string; transitions: { from: string; to: string | null; event: string; guard?: string; actions: string[] }[] }[];
      paths: { name: string; steps: { from: string; to: string }[] }[];
    };
    const query = machines.find((m) => m.id === 'query')!;
    // The query's CANCEL only runs actions (it remembers the cancel and forwards it to the worker).
    expect(query.transitions).toContainEqual({ from: '(root)', to: null, event: 'CANCEL', actions: ['assign', 'sendTo'] });
    expect(machines.find((m) => m.id === 'pool')!.transitions.filter((t) => t.to === null).length).toBeGreaterThan(0);
    expect(machines.map((m) => m.id)).not.toContain('modelSelection');
    expect(paths.map((p) => p.name)).toEqual(['on workers', 'in the host']);
    expect(paths[0]!.steps.slice(0, 4).map((s) => `${s.from} → ${s.to}`)).toEqual(['task.initializing → runPhases', 'task.running.loop.onWorker → query', 'query.processing → worker.busy', 'worker.busy → turn']);
  });

  it('without --json it lists each machine with its states and what it invokes, then how they nest', async () => {
    const run = await keel(['machines']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^turn: \d+ states, \d+ transitions \(\d+ of them only run actions\)$/m);
    expect(run.stdout).toContain('  invokes: streaming.requesting → call, permissionCheck → permission');
    expect(run.stdout).toContain('  invokes: initializing → runPhases (spawned), ');
    expect(run.stdout).toMatch(/On workers \(.*\):\n {2}task\.initializing → runPhases +\(spawned as the state is entered; it outlives the state\)\n {2}task\.running\.loop\.onWorker → query\n {2}query\.processing → worker\.busy +\(the pool leases the query a worker process\)\n {2}worker\.busy → turn /);
    expect(run.stdout).toMatch(/In the host \(.*\):\n {2}task\.initializing → runPhases +\(spawned as the state is entered; it outlives the state\)\n {2}task\.running\.loop\.inProcess → turn\n/);
  });
});
