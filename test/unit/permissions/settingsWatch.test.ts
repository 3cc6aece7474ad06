import { mkdirSync, mkdtempSync, readFile, rmSync, symlinkSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileWatch } from '../../../src/core/permissions/settingsWatch';

/**
 * The watch that replaced the stat of every settings file before every decision (issue 25): after
 * `await FileWatch.settled()`, any change finished before is reported — a file written, created
 * with its folder, replaced by a rename, a linked file's target rewritten, a folder replaced by a
 * link — and nothing is reported when nothing changed.
 */
let root = '';
let watch: FileWatch | undefined;
afterEach(() => {
  watch?.dispose();
  rmSync(root, { recursive: true, force: true });
});

function setUp(): { file: string } {
  root = mkdtempSync(join(tmpdir(), 'keel-watch-'));
  mkdirSync(join(root, 'ws'));
  const file = join(root, 'ws', '.claude', 'settings.json');
  watch = new FileWatch([file], () => 'unused');
  return { file };
}

const changedNow = async () => {
  await FileWatch.settled();
  return watch!.changed();
};

describe('FileWatch', () => {
  it('nothing changed: nothing reported, however often it is asked', async () => {
    setUp();
    for (let i = 0; i < 5; i++) expect(await changedNow()).toBe(false);
  });

  it('a settings folder and file created, then the file rewritten, then replaced by a rename', async () => {
    const { file } = setUp();
    mkdirSync(join(root, 'ws', '.claude'));
    writeFileSync(file, '{}');
    expect(await changedNow()).toBe(true);
    expect(await changedNow()).toBe(false);
    writeFileSync(file, '{"permissions":{}}');
    expect(await changedNow()).toBe(true);
    writeFileSync(`${file}.tmp`, '{"x":1}');
    await FileWatch.settled();
    watch!.changed();
    renameSync(`${file}.tmp`, file);
    expect(await changedNow()).toBe(true);
  });

  it("a settings file that is a link: its target's rewrite is reported; the folder replaced by a link too", async () => {
    const { file } = setUp();
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'real.json'), '{}');
    mkdirSync(join(root, 'ws', '.claude'));
    symlinkSync(join(elsewhere, 'real.json'), file);
    expect(await changedNow()).toBe(true);
    // The watch re-arms on the change and now follows the link.
    await FileWatch.settled();
    writeFileSync(join(elsewhere, 'real.json'), '{"permissions":{"allow":["Bash"]}}');
    expect(await changedNow()).toBe(true);
    rmSync(join(root, 'ws', '.claude'), { recursive: true });
    symlinkSync(elsewhere, join(root, 'ws', '.claude'));
    expect(await changedNow()).toBe(true);
  });
  it('a change is seen when the caller runs in an I/O callback (the check phase comes before the next poll)', async () => {
    const { file } = setUp();
    mkdirSync(join(root, 'ws', '.claude'));
    writeFileSync(file, '{}');
    expect(await changedNow()).toBe(true);
    // Continue from an I/O callback, as a decision made after a child process or a socket read does.
    const seen = await new Promise<boolean>((resolve, reject) => {
      readFile(file, () => {
        writeFileSync(file, '{"permissions":{"deny":["Bash"]}}');
        changedNow().then(resolve, reject);
      });
    });
    expect(seen).toBe(true);
  });
});
