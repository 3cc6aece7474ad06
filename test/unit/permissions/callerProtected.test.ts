import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from '../../../src/core/permissions';
import { TRUST_EVERYTHING } from '../helpers/trustAll';

/**
 * Files a caller protects (the scripts approved hooks and MCP servers run): a write to one asks in
 * every mode, also through a link, and whatever rule or mode would otherwise allow it.
 */
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('protected files supplied by the caller', () => {
  it('a write to one asks in acceptEdits and bypassPermissions, directly and through a link; other files do not', async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-caller-prot-')));
    const ws = join(root, 'ws');
    mkdirSync(join(ws, 'scripts'), { recursive: true });
    writeFileSync(join(ws, 'scripts', 'format.sh'), 'echo ok\n');
    symlinkSync(join(ws, 'scripts', 'format.sh'), join(ws, 'alias.sh'));
    const files = new Map([[join(ws, 'scripts', 'format.sh'), 'writes a script an approved hook runs']]);
    const engine = await createPermissionEngine({ workspace: ws, home: join(root, 'home'), protectedFiles: () => files, trust: TRUST_EVERYTHING });
    const write = (file_path: string, mode: 'acceptEdits' | 'bypassPermissions') =>
      engine.decide({ tool: 'Write', input: { file_path, content: 'x' }, subject: { kind: 'write', tool: 'Write', paths: [join(ws, file_path)], summary: file_path }, readOnly: false }, mode);
    expect(await write('scripts/format.sh', 'acceptEdits')).toMatchObject({ decision: 'ask', reason: 'writes a script an approved hook runs' });
    expect(await write('scripts/format.sh', 'bypassPermissions')).toMatchObject({ decision: 'ask' });
    expect(await write('alias.sh', 'acceptEdits')).toMatchObject({ decision: 'ask', reason: 'writes a script an approved hook runs' });
    expect(await write('scripts/other.sh', 'acceptEdits')).toMatchObject({ decision: 'allow' });
  });
});
