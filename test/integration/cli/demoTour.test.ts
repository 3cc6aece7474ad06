import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * `keel run --provider demo` as a newcomer without a key runs it: the built CLI as a child
 * process, on a copy of the sample workspace. Headless nobody can answer a prompt, so the mode
 * decides: acceptEdits lets the tour's edit land, default denies it; the command is denied in
 * both, and the tour's last words say what happened. The tour completes either way (exit 0).
 */
const SAMPLE = resolve(__dirname, '../../../examples/sample-workspace');
const GREET = 'src/greet.ts';

function sampleCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-cli-demo-'));
  cpSync(SAMPLE, dir, { recursive: true });
  return dir;
}

async function tour(mode: string) {
  const workspace = sampleCopy();
  const before = readFileSync(join(workspace, GREET), 'utf8');
  const run = await runCli(['run', 'What can Keel do?', '--provider', 'demo', '--mode', mode, '--workspace', workspace, '--output-format', 'stream-json']);
  const { code } = await run.exit;
  const text = ofType(run.events, 'text')
    .map((e) => String(e.delta))
    .join('');
  return { code, run, text, before, after: readFileSync(join(workspace, GREET), 'utf8') };
}

beforeAll(async () => {
  await cliBundle();
}, 120_000);

describe('keel run --provider demo: the tour, headless', () => {
  it('--mode acceptEdits: the edit lands, the command is denied, exit 0', async () => {
    const t = await tour('acceptEdits');
    expect(t.code, t.run.stderr()).toBe(0);
    expect(t.after).not.toBe(t.before);
    expect(t.after).toContain('name = name.trim();');
    expect(ofType(t.run.events, 'tool_call').map((e) => e.name)).toEqual(['Read', 'Edit', 'Bash']);
    expect(ofType(t.run.events, 'tool_result').map((e) => e.is_error)).toEqual([false, false, true]);
    expect(ofType(t.run.events, 'assistant_start')[0]).toMatchObject({ model: 'demo model' });
    expect(t.text).toContain('The edit is in');
    expect(t.text).toContain('The command was denied');
    expect(t.run.events.at(-1)).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('--mode default: the edit and the command are denied, the file is unchanged, exit 0', async () => {
    const t = await tour('default');
    expect(t.code, t.run.stderr()).toBe(0);
    expect(t.after).toBe(t.before);
    const decided = ofType(t.run.events, 'permission').filter((e) => e.decision === 'deny');
    expect(decided.map((e) => [e.tool, e.decision])).toEqual([
      ['Edit', 'deny'],
      ['Bash', 'deny'],
    ]);
    expect(t.text).toContain('The edit was denied');
    expect(t.text).toContain('denied, so nothing changed');
  });

  it('--mode plan: the mode refuses the edit and the tour says so; tasks show says "demo model"', async () => {
    const t = await tour('plan');
    expect(t.code, t.run.stderr()).toBe(0);
    expect(t.after).toBe(t.before);
    expect(ofType(t.run.events, 'tool_call').map((e) => e.name)).toEqual(['Read', 'Edit']);
    expect(t.text).toContain('**Plan** mode');
    const id = String(ofType(t.run.events, 'done')[0]?.taskId);
    const storage = t.run.storage;
    const show = await runCli(['tasks', 'show', id], {}, storage);
    expect((await show.exit).code).toBe(0);
    expect(show.stdout()).toContain('model:     demo model');
  });
});
