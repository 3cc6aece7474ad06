import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandRuns } from '../../../src/core/trust/commandFiles';
import { parseCommandLine } from '../../../src/core/trust/commandWords';

/**
 * What a hook's or a server's command runs from the disk (trust/commandFiles.ts), on a real
 * workspace: which files an approval covers, and which commands cannot be resolved at all.
 */
let ws: string;
const files: Record<string, string> = {
  'scripts/fmt.sh': 'source scripts/lib.sh\nnode tools/fmt.js "$@"\n',
  'scripts/lib.sh': 'X=1\n',
  'tools/fmt.js': "const h = require('./helpers');\nimport('./late.mjs');\n",
  'tools/helpers.js': '',
  'tools/late.mjs': "export * from './deep.ts';\n",
  'tools/deep.ts': '',
  'tools/main.py': 'from pkg import thing\nimport util\n',
  'tools/util.py': '',
  'pkg/__init__.py': '',
  'node_modules/fmt/cli.js': "require('./core');\n",
  'node_modules/fmt/core.js': '',
  'package.json': JSON.stringify({ scripts: { lint: 'eslint .', pretest: 'node tools/fmt.js', test: 'vitest run' } }),
  'node_modules/eslint/bin.js': '',
  'node_modules/vitest/vitest.mjs': '',
  'Makefile': 'all:\n\ttrue\n',
  'data/app.db': 'binary-ish data',
  'bin/tool': '#!/bin/sh\necho\n',
};

beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), 'keel-cmdfiles-'));
  for (const [p, t] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, p)), { recursive: true });
    writeFileSync(join(ws, p), t);
  }
  chmodSync(join(ws, 'bin/tool'), 0o755);
  mkdirSync(join(ws, 'node_modules/.bin'), { recursive: true });
  symlinkSync('../fmt/cli.js', join(ws, 'node_modules/.bin/fmt'));
  symlinkSync('../eslint/bin.js', join(ws, 'node_modules/.bin/eslint'));
  symlinkSync('../vitest/vitest.mjs', join(ws, 'node_modules/.bin/vitest'));
});
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const shown = (shell: string) => {
  const r = commandRuns({ shell }, { workspace: ws, home: '/nonexistent-home' });
  return { files: r.files.map((f) => f.display).sort(), unresolved: r.unresolved, notes: r.notes };
};

describe('the files a command runs', () => {
  it.each([
    ['bash scripts/fmt.sh', ['scripts/fmt.sh', 'scripts/lib.sh', 'tools/deep.ts', 'tools/fmt.js', 'tools/helpers.js', 'tools/late.mjs']],
    ['node tools/fmt.js', ['tools/deep.ts', 'tools/fmt.js', 'tools/helpers.js', 'tools/late.mjs']],
    ['python3 tools/main.py', ['pkg/__init__.py', 'tools/main.py', 'tools/util.py']],
    ['python -m tools.main', ['pkg/__init__.py', 'tools/main.py', 'tools/util.py']],
    ['npx fmt --write .', ['node_modules/.bin/fmt', 'node_modules/fmt/core.js']],
    ['npm run lint', ['node_modules/.bin/eslint', 'package.json (script "lint")']],
    ['npm test', ['node_modules/.bin/vitest', 'package.json (script "test")', 'tools/deep.ts', 'tools/fmt.js', 'tools/helpers.js', 'tools/late.mjs']],
    ['yarn lint', ['node_modules/.bin/eslint', 'package.json (script "lint")']],
    ['make', ['Makefile']],
    ['timeout 10 nice -n 5 node tools/fmt.js', ['tools/deep.ts', 'tools/fmt.js', 'tools/helpers.js', 'tools/late.mjs']],
    ['sqlite-tool --db data/app.db', []],
    ['./bin/tool', ['bin/tool']],
    ['bash -c "node tools/fmt.js && ./bin/tool"', ['bin/tool', 'tools/deep.ts', 'tools/fmt.js', 'tools/helpers.js', 'tools/late.mjs']],
    ['echo "$(cat x)" | jq .', []],
  ])('%s', (command, expected) => {
    const r = shown(command);
    expect(r.unresolved).toEqual([]);
    expect(r.files).toEqual(expected);
  });

  it('a script named but not there yet is part of the approval (its creation is a change)', () => {
    const r = commandRuns({ shell: 'bash scripts/missing.sh' }, { workspace: ws, home: '/h' });
    expect(r.files).toEqual([expect.objectContaining({ display: 'scripts/missing.sh', digest: 'absent' })]);
  });

  it('npx of a package that is not installed is fetched from the registry: said, not a workspace file', () => {
    const r = shown('npx -y @modelcontextprotocol/server-filesystem /tmp');
    expect(r.files).toEqual([]);
    expect(r.notes.join(' ')).toMatch(/fetched from the npm registry/);
  });

  it.each([
    ['bash "$X"', /computed/],
    ['$(which node) tools/fmt.js', /computed/],
    ['eval "$CMD"', /eval/],
    ['node -e "$CODE"', /computed/],
    ['npx "$PKG"', /computed/],
    ['npm run "$S"', /computed/],
    ['source "$F"', /computed/],
    ['LD_PRELOAD=x.so node tools/fmt.js', /sets LD_PRELOAD/],
    ["echo 'unterminated", /unterminated/],
    ['bash scripts/*.sh', /computed|pattern/],
  ])('%s cannot be resolved', (command, why) => {
    expect(shown(command).unresolved.join(' ')).toMatch(why);
  });
});

describe('reading a command line', () => {
  it('splits simple commands, keeps quoted words whole and marks computed ones', () => {
    const p = parseCommandLine(`a 'b c' "d $X" e\\ f; g | h && i $(j k) \`l\``, { X: 'x' });
    expect(p.problems).toEqual([]);
    expect(p.commands.map((c) => c.words.map((w) => (w.literal ? w.text : `<${w.text}>`)))).toEqual([
      ['a', 'b c', 'd x', 'e f'],
      ['g'],
      ['h'],
      ['j', 'k'],
      ['l'],
      ['i', '<$(j k)>', '<`l`>'],
    ]);
  });
});
