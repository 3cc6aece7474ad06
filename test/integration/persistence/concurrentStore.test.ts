import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { buildCli, runCli, startCli } from './cliHelpers';

/**
 * Many processes on one store at once, as a user with several terminals (or windows) has them:
 * 20 `keel run` and, all the while, several `keel tasks list` in a loop. A listing must never
 * take a task that is being created or driven for a damaged one: nothing may be quarantined, no
 * meta rebuilt, no warning printed, and in the end every task is listed completed.
 */
const RUNS = 20;
const LISTERS = 4;

describe('concurrent keel run and keel tasks list on one storage', () => {
  let dir: string;
  let cli: string;
  let server: FakeModelServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-concurrent-'));
    cli = await buildCli(dir);
    server = await startFakeModelServer({ fallback: { blocks: [{ type: 'text', text: 'All done here, nothing else to add.' }], chunkSize: 4, delayMs: 2 } });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('quarantines nothing, rebuilds nothing, warns about nothing, and lists every task completed', async () => {
    const storage = join(dir, 'store');
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    mkdirSync(storage); // a --storage folder must exist
    const env = { ANTHROPIC_API_KEY: 'test-key', HOME: dir };
    const runs = Array.from({ length: RUNS }, (_, i) =>
      startCli(cli, ['run', `task number ${i}`, '--provider', 'anthropic', '--base-url', server.url, '--workspace', ws, '--storage', storage, '--output-format', 'stream-json'], env),
    );
    let running = true;
    const listerErrors: string[] = [];
    let listings = 0;
    const listers = Array.from({ length: LISTERS }, async () => {
      while (running) {
        const listed = await runCli(cli, ['tasks', 'list', '--json', '--all', '--storage', storage], env);
        listings++;
        if (listed.code !== 0 || listed.stderr.trim()) listerErrors.push(`exit ${listed.code}: ${listed.stderr.trim()}`);
      }
    });
    const exits = await Promise.all(runs.map((r) => r.exited));
    running = false;
    await Promise.all(listers);

    const runErrors = runs.map((r) => r.stderr().trim()).filter(Boolean);
    expect(runErrors).toEqual([]);
    expect(exits).toEqual(Array.from({ length: RUNS }, () => 0));
    expect(listings).toBeGreaterThanOrEqual(LISTERS);
    expect(listerErrors).toEqual([]);
    const quarantine = join(storage, 'quarantine');
    expect(existsSync(quarantine) ? readdirSync(quarantine) : []).toEqual([]);

    const final = await runCli(cli, ['tasks', 'list', '--json', '--all', '--storage', storage], env);
    expect(final.stderr).toBe('');
    const tasks = JSON.parse(final.stdout) as { id: string; status: string; title: string }[];
    expect(tasks).toHaveLength(RUNS);
    expect(tasks.map((t) => t.status)).toEqual(Array.from({ length: RUNS }, () => 'completed'));
    expect(new Set(tasks.map((t) => t.title))).toEqual(new Set(Array.from({ length: RUNS }, (_, i) => `task number ${i}`)));
  }, 300_000);
});

describe('the store itself under concurrent creators and listers', () => {
  it('four processes recording 40 tasks each while three list in a loop: nothing quarantined, no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-store-race-'));
    try {
      const worker = join(dir, 'worker.js');
      await build({ entryPoints: [join(__dirname, 'storeRaceWorker.ts')], outfile: worker, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
      const storage = join(dir, 'store');
      const run = (role: string, n: number) =>
        promisify(execFile)(process.execPath, [worker, storage, role, String(n)]).then(({ stdout }) => JSON.parse(stdout) as { problems: string[]; warnings: string[] });
      const results = await Promise.all([...Array.from({ length: 4 }, () => run('creator', 40)), ...Array.from({ length: 3 }, () => run('lister', 60))]);
      expect(results.flatMap((r) => r.problems)).toEqual([]);
      expect(results.flatMap((r) => r.warnings)).toEqual([]);
      expect(existsSync(join(storage, 'quarantine'))).toBe(false);
      const ids = readdirSync(join(storage, 'tasks'));
      expect(ids).toHaveLength(160);
      const statusOf = (id: string) => (JSON.parse(readFileSync(join(storage, 'tasks', id, 'meta.json'), 'utf8')) as { status: string }).status;
      expect(ids.map(statusOf)).toEqual(ids.map(() => 'completed'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
