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
    // A run's turn loop: the turn machine in the host's process, or the query machine, which runs it on a worker.
    expect(nested.sort()).toEqual(
      ['call.guarded.running → stream', 'task.running.loop.inProcess → turn', 'task.running.loop.onWorker → query', 'turn.permissionCheck → permission', 'turn.streaming.requesting → call'].sort(),
    );
    const ids = new Set(machines.map((m) => m.id));
    for (const m of machines) {
      for (const i of m.invokes) {
        if (i.machine) expect(ids.has(i.machine), `${m.id} invokes ${i.machine}`).toBe(true);
        expect(m.states.includes(i.state) || i.state === '(root)', `${m.id}: ${i.state}`).toBe(true);
      }
    }
    expect(machines.find((m) => m.id === 'turn')!.invokes).toContainEqual({ state: 'validatingInput', src: 'validateToolCall' });
  });

  it('without --json it lists each machine with its states and what it invokes', async () => {
    const run = await keel(['machines']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^turn: \d+ states, \d+ transitions$/m);
    expect(run.stdout).toContain('  invokes: streaming.requesting → call, permissionCheck → permission');
  });
});
