import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision, RealBashCheck } from './types';

/**
 * Issue 22, root cause 2, build and test tools (shell/toolOptions.ts) under rules for them, with
 * `Bash(rm:*)` and `Read(./secrets/**)` denied: `make --eval/-E`, `make SHELL=…`, `go -exec`,
 * `-toolexec`, `cargo --config`, `pytest -p/-o`, `prettier --plugin` are inline code (a rule must
 * name them; their program meets the deny rules); `make -f`/`-C`, `cargo --manifest-path`,
 * `pytest -c` read code (outside the workspace: ask); `go build -o` writes; `pytest --basetemp`
 * empties its folder. make's forms are proved in real GNU make 4.3; go, cargo, pytest and
 * prettier follow their documented option tables.
 */
type Row = [command: string, expect: Decision, check?: RealBashCheck, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] =>
  list.map(([command, expect, realBash, mode]) => ({ group, command, expect, ...(realBash ? { realBash } : {}), ...(mode ? { mode } : {}) }));

const SETTINGS = {
  permissions: {
    allow: ['Bash(make:*)', 'Bash(go test:*)', 'Bash(go build:*)', 'Bash(go run:*)', 'Bash(cargo:*)', 'Bash(npx prettier:*)', 'Bash(pytest:*)', 'Bash(python3 -m pytest:*)'],
    deny: ['Bash(rm:*)', 'Read(./secrets/**)'],
  },
};

function prepare(fx: PermissionFixture): void {
  writeFileSync(join(fx.ws, 'Makefile'), 'all:\n\t@echo built\ncc:\n\t$(CC) x.c\n');
  writeFileSync(join(fx.outside, 'evil.mk'), 'all:\n\ttouch PWNED\n');
}

const PWNED: RealBashCheck = { proves: 'test -e PWNED' };

const ROWS: Row[] = [
  ["make --eval='x: ; touch PWNED' x", 'ask', PWNED],
  ["make -E 'x: ; rm -rf src' x", 'deny', { proves: 'test ! -e src' }],
  ["make --ev='x: ; touch PWNED' x", 'ask'],
  ['make -f ../outside/evil.mk', 'ask', PWNED],
  ['make --file=../outside/evil.mk', 'ask'],
  ['make -C ../outside', 'ask'],
  ["make CC='rm -rf src' cc", 'deny', { proves: 'test ! -e src' }],
  ["make CC='touch PWNED' cc", 'allow', PWNED],
  ['make SHELL=/bin/sh all', 'ask'],
  ['make MAKEFLAGS=-e all', 'ask'],
  ['make -f secrets/key.pem', 'deny'],
  ['make', 'allow'],
  ['make -j4 all', 'allow'],
  ['make -C src', 'allow'],
  ['make -f Makefile all', 'allow'],
  ['make VERBOSE=1 all', 'allow'],
  ["go test -exec 'rm -rf src' ./...", 'deny'],
  ['go test -exec=true ./...', 'ask'],
  ['go test -toolexec=/tmp/x ./...', 'ask'],
  ['go run -exec echo .', 'ask'],
  ['go test ./...', 'allow'],
  ['go test -run TestX -v ./...', 'allow'],
  ['go build -o .git/hooks/pre-commit .', 'ask'],
  ['go build -o ../outside/app .', 'ask'],
  ['go build -o bin/app .', 'allow'],
  ["cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"rm -rf src\"' run", 'deny'],
  ['cargo --config build.rustc-wrapper=/tmp/w build', 'ask'],
  ['cargo build --config ../outside/c.toml', 'ask'],
  ['cargo build --manifest-path ../outside/Cargo.toml', 'ask'],
  ['cargo build --release', 'allow'],
  ['cargo test', 'allow'],
  ['npx prettier --plugin=../outside/p.js --write src', 'ask'],
  ['npx prettier --plugin ./p.js --check src', 'ask'],
  ['npx prettier --write src', 'allow'],
  ['pytest --basetemp=.git', 'ask'],
  ['pytest --basetemp=.git', 'ask', undefined, 'bypassPermissions'],
  ['pytest --basetemp .keel/t', 'ask'],
  ['pytest --basetemp=tmp/pt', 'ask'],
  ['pytest --basetemp=tmp/pt', 'allow', undefined, 'acceptEdits'],
  ['python3 -m pytest --basetemp=.keel', 'ask'],
  ['pytest -p evil_plugin tests', 'ask'],
  ['pytest -o addopts=-pevil tests', 'ask'],
  ['pytest -c ../outside/pytest.ini', 'ask'],
  ['pytest -x -q tests', 'allow'],
  ['python3 -m pytest -k parser', 'allow'],
];

export const BUILD_TOOL_GROUP: CorpusGroup = { name: 'build and test tools: options that run code or name files', settings: SETTINGS, prepare, bash: rows('build-tools', ROWS) };
