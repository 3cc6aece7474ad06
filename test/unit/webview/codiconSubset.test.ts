import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codepoints, subsetCodicons, usedCodicons } from '../../../scripts/codiconSubset.mjs';

/**
 * The .vsix carries only the codicons the webview names (scripts/codiconSubset.mjs): every icon
 * the webview shows must be named literally, exist in @vscode/codicons, and be in the cut-down
 * font and CSS the build writes.
 */
const ROOT = join(__dirname, '..', '..', '..');
const codicons = dirname(createRequire(__filename).resolve('@vscode/codicons/dist/codicon.css'));
const CSS = readFileSync(join(codicons, 'codicon.css'), 'utf8');
const TTF = readFileSync(join(codicons, 'codicon.ttf'));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : /\.(ts|tsx)$/.test(n) ? [p] : [];
  });
}

describe('the codicons the .vsix carries', () => {
  it('the webview names every icon literally (a built name would be missing from the font)', () => {
    const built = sources(join(ROOT, 'webview')).flatMap((f) => (readFileSync(f, 'utf8').match(/codicon-['"`]\s*\+|codicon-\$\{/g) ?? []).map((m) => `${f}: ${m}`));
    expect(built).toEqual([]);
  });

  it('keeps exactly the named icons, in the CSS and the font, and refuses an unknown one', async () => {
    const names = usedCodicons(join(ROOT, 'webview'));
    expect(names).toContain('send');
    const { css, font, icons } = await subsetCodicons(CSS, TTF, names);
    const kept = codepoints(css);
    expect([...kept.keys()].sort()).toEqual([...icons].sort());
    expect(css).toContain('@font-face');
    expect(css).toContain('codicon-modifier-spin');
    expect(font.length).toBeLessThan(TTF.length / 4);
    await expect(subsetCodicons(CSS, TTF, ['send', 'no-such-icon'])).rejects.toThrow(/no-such-icon/);
  });
});
