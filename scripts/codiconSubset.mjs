// The codicons the chat's webview shows, and only those: scripts/build.mjs writes dist/codicon.ttf
// and dist/codicon.css from @vscode/codicons cut down to the icons the webview's sources name
// (`codicon-<name>` literals), so the .vsix does not carry ~650 glyphs to show ~50. A name the
// sources use that @vscode/codicons does not have fails the build (a typo would otherwise show an
// empty box). Icons must be named literally (`'codicon-send'`, never `'codicon-' + x`):
// test/unit/build/codiconSubset.test.ts holds the webview to that.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import subsetFont from 'subset-font';

/** The `codicon-<name>` literals of every .ts/.tsx file under `dir` (modifiers included). */
export function usedCodicons(dir) {
  const names = new Set();
  const walk = (d) => {
    for (const entry of readdirSync(d)) {
      const p = join(d, entry);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|tsx)$/.test(entry)) for (const m of readFileSync(p, 'utf8').matchAll(/codicon-([a-z0-9]+(?:-[a-z0-9]+)*)/g)) names.add(m[1]);
    }
  };
  walk(dir);
  return [...names].sort();
}

/** Each icon's code point in codicon.css (`.codicon-NAME:before { content: "\ec0f" }`). */
export function codepoints(css) {
  const out = new Map();
  for (const m of css.matchAll(/^\.codicon-([a-z0-9-]+):before \{ content: "\\([0-9a-f]+)" \}$/gm)) out.set(m[1], parseInt(m[2], 16));
  return out;
}

/**
 * The CSS and font for `names`: codicon.css's shared rules (font-face, the base class, the
 * modifiers and the spin animation) with only the named icons' rules; the font with only their
 * glyphs. Throws for a name that is neither an icon nor a modifier.
 */
export async function subsetCodicons(cssText, ttf, names) {
  const points = codepoints(cssText);
  const icons = names.filter((n) => !n.startsWith('modifier-') && n !== 'spin');
  const unknown = icons.filter((n) => !points.has(n));
  if (unknown.length) throw new Error(`codicons: the webview names icons @vscode/codicons does not have: ${unknown.join(', ')}`);
  const keep = new Set(icons);
  const css = cssText
    .split('\n')
    .filter((line) => {
      const m = line.match(/^\.codicon-([a-z0-9-]+):before \{/);
      return !m || keep.has(m[1]);
    })
    .join('\n');
  const text = String.fromCodePoint(...icons.map((n) => points.get(n)));
  const font = await subsetFont(ttf, text, { targetFormat: 'truetype' });
  return { css, font, icons };
}
