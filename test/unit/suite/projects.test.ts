import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refusalOf } from '../../setup/pureUnit';

/**
 * The unit project is pure logic: `npm run test:unit` stays fast because no test in it starts a
 * process or opens a server, and test/setup/pureUnit.ts holds every unit test to that.
 */
describe('the unit project', () => {
  it('refuses to start a process, a server or a worker thread, and says where the test belongs', () => {
    for (const attempt of [
      () => spawn('bash', ['-c', 'true']),
      () => spawnSync('git', ['--version']),
      () => execFile(process.execPath, ['-e', '0']),
      () => createServer().listen(0),
      () => new Worker('0', { eval: true }),
    ]) {
      expect(refusalOf(attempt)).toMatch(/starts no process and opens no server .*integration project \(test\/integration-files\.txt\)/);
    }
  });

  it('lists only test files that exist as integration tests beside the unit tests', () => {
    const INTEGRATION_FILES = readFileSync('test/integration-files.txt', 'utf8')
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean);
    expect(INTEGRATION_FILES.length).toBeGreaterThan(0);
    expect(INTEGRATION_FILES.filter((f) => !existsSync(f) || !f.endsWith('.test.ts'))).toEqual([]);
    expect(INTEGRATION_FILES.filter((f) => f.startsWith('test/integration/'))).toEqual([]);
  });
});

describe('property tests', () => {
  it('run from the seed the run chose and printed (KEEL_FC_SEED or the date), which replays them', () => {
    const seed = Number(process.env.KEEL_FC_SEED);
    expect(Number.isInteger(seed)).toBe(true);
    expect(fc.readConfigureGlobal().seed).toBe(seed);
  });
});
