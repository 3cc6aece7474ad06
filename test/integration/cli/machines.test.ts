import { describe, expect, it } from 'vitest';
import { runCli } from './cliHarness';

/**
 * `keel machines --json` shows how the catalog's machines nest as the product runs them: which
 * state of which machine invokes which other machine (the permission machine is the turn's child).
 */
describe('keel machines --json', () => {
  it('names the machine each state invokes, and every one it names is in the catalog', async () => {
    const run = await runCli(['machines', '--json']);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const { machines } = JSON.parse(run.stdout()) as { machines: { id: string; states: string[]; invokes: { state: string; src: string; machine?: string }[] }[] };
    const nested = machines.flatMap((m) => m.invokes.filter((i) => i.machine).map((i) => `${m.id}.${i.state} → ${i.machine}`));
    expect(nested.sort()).toEqual(['call.guarded.running → stream', 'task.running → turn', 'turn.permissionCheck → permission', 'turn.streaming.requesting → call'].sort());
    const ids = new Set(machines.map((m) => m.id));
    for (const m of machines) {
      for (const i of m.invokes) {
        if (i.machine) expect(ids.has(i.machine), `${m.id} invokes ${i.machine}`).toBe(true);
        expect(m.states.includes(i.state) || i.state === '(root)', `${m.id}: ${i.state}`).toBe(true);
      }
    }
    expect(machines.find((m) => m.id === 'turn')!.invokes).toContainEqual({ state: 'validatingInput', src: 'validateToolCall' });
  });
});
