import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskCheckpoints } from '../../../src/core/checkpoints/recorder';

/**
 * A file that holds a key or token is never kept by the checkpoints (docs/persistence.md, "What
 * is not restorable"): Keel's storage holds no secret. The step names it, not restorable, with
 * the reason; an ordinary file of the same step is kept.
 */
const TOKEN = `ghp_${'Zy8x'.repeat(9)}`;

describe('checkpoints and files that hold a secret', () => {
  it('names a file with a token not restorable and keeps none of it; keeps an ordinary file', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'keel-cp-secret-ws-'));
    const dir = join(mkdtempSync(join(tmpdir(), 'keel-cp-secret-st-')), 'checkpoints');
    writeFileSync(join(ws, 'deploy.env'), `GITHUB_TOKEN=${TOKEN}\nREGION=eu-west-1\n`);
    writeFileSync(join(ws, 'notes.txt'), 'plain words, nothing secret\n'.repeat(20));
    const cps = new TaskCheckpoints({ dir, workspace: ws });
    const call = cps.forCall('toolu_1');
    await call.beforeWrite(join(ws, 'deploy.env'), 'REGION=eu-west-1\n');
    await call.beforeWrite(join(ws, 'notes.txt'), 'changed\n');
    const report = await call.report();
    cps.release('toolu_1');
    await cps.close();
    const byPath = new Map(report.files.map((f) => [f.path, f]));
    expect(byPath.get('deploy.env')).toMatchObject({ kept: false, reason: expect.stringMatching(/key or token/) });
    expect(byPath.get('notes.txt')).toMatchObject({ kept: true });
    // Nothing of the token on disk, in any form the packs could hold it (raw or compressed: its
    // file was never handed to the store).
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(join(f.parentPath, f.name), 'latin1')).not.toContain('Zy8xZy8x');
  });
});
