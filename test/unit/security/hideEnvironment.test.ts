import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * A process started with provider keys in its environment hides them from /proc/<pid>/environ —
 * what every process of the same user (a command the model runs) can read — and still has them
 * in process.env. A real child process, its /proc read by this one.
 */
const KEY = `sk-ant-api03-${'Hd9_'.repeat(20)}xAA`;
const KEEL_TOKEN = `keel-token-${'p0q1'.repeat(6)}`;
let probe: string;

beforeAll(async () => {
  probe = join(mkdtempSync(join(tmpdir(), 'keel-hide-')), 'probe.cjs');
  await build({ entryPoints: [join(__dirname, '../../fixtures/security/hideProbe.ts')], outfile: probe, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
}, 60_000);

describe.runIf(process.platform === 'linux')('hideKeysFromProcEnviron', () => {
  it('zeroes the keys and every variable holding one in /proc/<pid>/environ; process.env keeps them', async () => {
    const env = { PATH: process.env.PATH, ANTHROPIC_API_KEY: KEY, KEEL_API_TOKEN: KEEL_TOKEN, MY_COPY: `prefix-${KEY}`, OTHER: 'kept' };
    // Before: the exec-time block holds the key (what main showed every process of the user).
    const child = spawn(process.execPath, [probe], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => child.stdout!.setEncoding('utf8').once('data', (d: string) => resolve(d)));
    const seen = JSON.parse(line) as { result: { hidden: string[]; problem: string | null }; key: string | null; holder: string | null; other: string | null };
    const environ = readFileSync(`/proc/${child.pid!}/environ`, 'latin1');
    child.stdin!.end('\n');
    await new Promise((r) => child.once('exit', r));
    expect(seen.result.problem).toBeNull();
    expect(seen.result.hidden.sort()).toEqual(['ANTHROPIC_API_KEY', 'KEEL_API_TOKEN', 'MY_COPY']);
    for (const secret of [KEY, KEEL_TOKEN, 'Hd9_Hd9_']) expect(environ).not.toContain(secret);
    expect(environ).not.toContain('ANTHROPIC_API_KEY=');
    expect(environ).toContain('OTHER=kept');
    expect(environ).toContain(`PATH=${process.env.PATH}`);
    // Keel itself still reads them.
    expect(seen).toMatchObject({ key: KEY, holder: `prefix-${KEY}`, other: 'kept' });
  });

  it('without keys it changes nothing', async () => {
    const child = spawn(process.execPath, [probe], { env: { PATH: process.env.PATH, OTHER: 'kept' }, stdio: ['pipe', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => child.stdout!.setEncoding('utf8').once('data', (d: string) => resolve(d)));
    const environ = readFileSync(`/proc/${child.pid!}/environ`, 'latin1');
    child.stdin!.end('\n');
    await new Promise((r) => child.once('exit', r));
    expect(JSON.parse(line).result).toEqual({ hidden: [], problem: null });
    expect(environ).toBe(`PATH=${process.env.PATH}\0OTHER=kept\0`);
  });
});
