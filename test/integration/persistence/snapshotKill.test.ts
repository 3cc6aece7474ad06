import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/core/store/taskStore';

/**
 * kill -9 of a real process while it writes snapshots (and appends to the log): whatever instant
 * it dies at, the task loads with exactly the state a full replay of its log gives, and a later
 * driver goes on writing snapshots. The worker spends most of its time in snapshot writes (about
 * one kill in eight lands between the temp file's creation and its rename, seen by the temp file
 * it leaves); every kill is checked, wherever it landed.
 */
const ID = 'kill-snapshots';
const KILLS = 16;

describe('kill -9 during snapshot writes', () => {
  let dir: string;
  let worker: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-snapkill-'));
    worker = join(dir, 'worker.js');
    await build({ entryPoints: [join(__dirname, 'snapshotKillWorker.ts')], outfile: worker, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves a task that loads with the same state as a full replay of its log', async () => {
    const storage = join(dir, 'store');
    let restoredFromSnapshot = 0;
    for (let k = 0; k < KILLS; k++) {
      const child = spawn(process.execPath, [worker, storage, ID], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<string | number>((res) => child.on('close', (code, signal) => res(signal ?? code ?? -1)));
      await new Promise<void>((res, rej) => {
        child.stdout.on('data', (c: Buffer) => c.toString().includes('ready') && res());
        void exited.then((how) => rej(new Error(`worker ended (${how}) before it was ready: ${err}`)));
      });
      // A random instant in the writing loop: the first snapshot is done, others are in flight.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const warnings: string[] = [];
      const store = new TaskStore(storage, { log: (level, m) => level !== 'info' && warnings.push(m) });
      const full = await new TaskStore(storage, { snapshots: false }).load(ID);
      const restored = await store.snapshotsOf(ID).restore(() => ({ title: full.meta.title, model: full.meta.model }));
      if (restored.snapshot) restoredFromSnapshot++;
      const loaded = await store.load(ID);
      expect(loaded.replay).toEqual(full.replay);
      expect(loaded.replay.events).toBeGreaterThan(0);
      // A write cut by the kill never leaves a damaged file under a snapshot's name. (Only the
      // snapshot warnings — "task ID: snapshot NAME …": the log's own torn last line, which a
      // kill mid-append leaves and the load drops, names the task's folder, which holds
      // "snapshots" in this test's task id.)
      expect(warnings.filter((w) => w.includes(': snapshot '))).toEqual([]);
    }
    expect(restoredFromSnapshot).toBe(KILLS);
    // The killed writers' temp files are cleaned up by the next driver's cleanup.
    await new TaskStore(storage).snapshotsOf(ID).cleanup();
    expect(readdirSync(join(storage, 'tasks', ID, 'snapshots')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 120_000);
});
