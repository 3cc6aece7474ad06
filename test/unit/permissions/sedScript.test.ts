import { describe, expect, it } from 'vitest';
import { sedEffects } from '../../../src/core/permissions/readOnly/sed';

/** sed scripts are code (issue 22, item 2): the files they read and write, and whether they run commands. */
describe('sedEffects', () => {
  it('finds w, W, r, R and the w flag, file names running to the end of the line', () => {
    expect(sedEffects('w out.txt')).toEqual({ reads: [], writes: ['out.txt'], runs: false });
    expect(sedEffects('/x/W a b; p')).toEqual({ reads: [], writes: ['a b; p'], runs: false });
    expect(sedEffects('s/a/b/gw .keel/x')?.writes).toEqual(['.keel/x']);
    expect(sedEffects('s/a/b/ w f')?.writes).toEqual(['f']);
    expect(sedEffects('1r /etc/passwd\np')).toEqual({ reads: ['/etc/passwd'], writes: [], runs: false });
    expect(sedEffects('$R f')?.reads).toEqual(['f']);
  });

  it('finds e and the e flag', () => {
    expect(sedEffects('1e touch x')?.runs).toBe(true);
    expect(sedEffects('s/x/id/e')?.runs).toBe(true);
    expect(sedEffects('s|a|b|ge')?.runs).toBe(true);
    expect(sedEffects('e')?.runs).toBe(true);
  });

  it('reads ordinary scripts as harmless (delimiters, labels, blocks, text, y)', () => {
    for (const s of ['1,5p', '$=', '/x/{p;q}', ':a;N;$!ba;s/\\n/ /g', 's|/usr|/opt|g', 's/a\\/w/b/', 'y/abc/xyz/', '1i\\\nheader', 'a text; w not a file', '#n\np', '0~2d', '/a/,+2d', '\\,x,d', 's/x/y/2']) {
      expect(sedEffects(s), s).toEqual({ reads: [], writes: [], runs: false });
    }
  });

  it('refuses what it cannot read', () => {
    expect(sedEffects('s/a/b')).toBeNull();
    expect(sedEffects('k')).toBeNull();
    expect(sedEffects('w')).toBeNull();
  });
});
