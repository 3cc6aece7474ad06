import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionMode } from '../../../../src/core/runtime/types';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision, RealBashCheck } from './types';

/**
 * Issue 22, root cause 2: a Bash rule says which program, never which files. With rules for
 * the file commands themselves (`Bash(tee:*)`, `Bash(cp:*)`, `Bash(sed:*)` …), their read
 * sources and write targets are still decided by Read and Edit rules, protected places and the
 * workspace boundary: a write the command exists to make (cp's destination, `sed -i`'s file) is
 * covered by the rule inside the workspace; one named by an option or a script (`sed w`) is like
 * a redirection (an Edit rule or acceptEdits covers it); a protected place asks in every mode;
 * sed's `e` runs a command (it asks). The real-bash checks prove that each hole does what it
 * says, in real coreutils 9.1, sed 4.9, xxd, tar 1.34 and rsync.
 */
type Row = [command: string, expect: Decision, check?: RealBashCheck, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] =>
  list.map(([command, expect, realBash, mode]) => ({ group, command, expect, ...(realBash ? { realBash } : {}), ...(mode ? { mode } : {}) }));

const TOOLS = ['tee', 'cp', 'mv', 'ln', 'install', 'touch', 'mkdir', 'rmdir', 'truncate', 'dd', 'chmod', 'sed', 'xxd', 'base64', 'od', 'tar', 'rsync', 'cat', 'head', 'shred', 'unlink'];
const SETTINGS = {
  permissions: {
    allow: TOOLS.map((t) => `Bash(${t}:*)`),
    deny: ['Read(./secrets/**)', 'Edit(./.env)'],
  },
};

function prepare(fx: PermissionFixture): void {
  mkdirSync(join(fx.ws, 'src', 'empty'), { recursive: true });
  writeFileSync(join(fx.ws, 'src', 'a.hex'), '00000000: 6b65 656c                                keel\n');
  writeFileSync(join(fx.ws, '.env'), 'TOKEN=x\n');
}

const WRITES: Row[] = [
  // tee: every operand is written.
  ['tee .keel/settings.local.json', 'ask', { proves: 'test -e .keel/settings.local.json' }],
  ['tee .keel/settings.local.json', 'ask', undefined, 'bypassPermissions'],
  ['tee -a .claude/settings.json', 'ask'],
  ['tee KEEL.md', 'ask', undefined, 'bypassPermissions'],
  ['tee ../outside/x.txt', 'ask'],
  ['tee src/out.txt', 'allow'],
  ['tee /dev/null', 'allow'],
  ['tee .env', 'deny'],
  // cp: its destination (or DEST/name when DEST is a folder); its sources are read.
  ['cp src/a.ts .git/config', 'ask', { proves: 'grep -q export .git/config' }],
  ['cp src/a.ts .git/config', 'ask', undefined, 'bypassPermissions'],
  ['cp -t .git src/a.ts', 'ask'],
  ['cp --target-directory=.keel src/a.ts', 'ask'],
  ['cp -r src .vscode', 'ask'],
  ['cp src/a.ts KEEL.md', 'ask', undefined, 'acceptEdits'],
  ['cp src/a.ts ../outside/a.ts', 'ask'],
  ['cp src/a.ts .env', 'deny'],
  ['cp src/a.ts src/b.ts', 'allow'],
  ['cp -r src copy', 'allow'],
  ['cp -s ../outside/secret.txt src/link', 'allow'],
  ['cp --backup -S .md src/a.ts KEEL', 'ask'],
  // mv: the source leaves its place (its tree too), the destination receives it.
  ['mv .keel/settings.json elsewhere.json', 'ask', { proves: 'test ! -e .keel/settings.json' }],
  ['mv .keel parked', 'ask', undefined, 'bypassPermissions'],
  ['mv src/a.ts .vscode/tasks.json', 'ask'],
  ['mv src ../outside/src', 'ask'],
  ['mv src/a.ts src/b.ts', 'allow'],
  ['mv src/empty src/full', 'allow'],
  // ln: the link name; a hard link makes its target writable (and readable) under a new name.
  ['ln src/a.ts AGENTS.md', 'ask'],
  ['ln .keel/settings.json src/s.json', 'ask', { proves: 'test "$(stat -c %h src/s.json)" = 2' }],
  ['ln -t .git src/a.ts', 'ask'],
  ['ln -s ../.keel/settings.local.json src/x', 'allow'],
  ['ln -s src/a.ts', 'allow'],
  ['ln src/a.ts src/hard.ts', 'allow'],
  // install: like cp; -d makes folders.
  ['install -D -m 755 src/a.ts .git/hooks/pre-commit', 'ask', { proves: 'test -x .git/hooks/pre-commit' }],
  ['install -d .keel/more', 'ask'],
  ['install src/a.ts bin-a', 'allow'],
  // touch, mkdir, rmdir, truncate, shred, unlink.
  ['touch .keel/settings.local.json', 'ask'],
  ['touch CLAUDE.md', 'ask', undefined, 'bypassPermissions'],
  ['touch src/new.ts', 'allow'],
  ['touch src/new.ts', 'allow', undefined, 'acceptEdits'],
  ['touch ../x', 'ask'],
  ['mkdir -p .claude/commands', 'ask'],
  ['mkdir -p build/out', 'allow'],
  ['rmdir .vscode', 'ask'],
  ['rmdir src/empty', 'allow'],
  ['truncate -s 0 .keel/settings.json', 'ask', { proves: 'test ! -s .keel/settings.json' }],
  ['truncate -s 0 src/a.ts', 'allow'],
  ['shred -u .keel/settings.json', 'ask'],
  ['unlink KEEL.md', 'ask'],
  // dd: if= is read, of= written.
  ['dd if=src/a.ts of=.git/config', 'ask'],
  ['dd if=secrets/key.pem of=src/k', 'deny'],
  ['dd if=/dev/zero of=src/z bs=1 count=1', 'allow'],
  // chmod: changing a hook's mode is changing it.
  ['chmod +x .git/hooks/pre-commit', 'ask'],
  ['chmod -R 777 .keel', 'ask'],
  ['chmod +x src/a.ts', 'allow'],
  ['chmod -x src/a.ts', 'allow'],
];

const READS: Row[] = [
  ['cp secrets/key.pem src/leak.txt', 'deny', { proves: 'grep -q KEY src/leak.txt' }],
  ['cp -r secrets src/s2', 'deny'],
  ['mv secrets/key.pem src/k', 'deny'],
  ['ln secrets/key.pem src/k', 'deny'],
  ['base64 secrets/key.pem', 'deny', { proves: 'base64 -d "$OUT" | grep -q KEY' }],
  ['xxd secrets/key.pem', 'deny'],
  ['od -c secrets/key.pem', 'deny'],
  ['cat secrets/key.pem', 'deny'],
  ['head -c 3 link-secret', 'deny'],
  ['cat ../outside/secret.txt', 'ask'],
  ['base64 /etc/hostname', 'ask'],
  ['cat src/a.ts', 'allow'],
  ['base64 src/a.ts', 'allow'],
  ['base64 -d src/a.hex', 'allow'],
  ['od -An -tx1 src/a.ts', 'allow'],
  ['xxd src/a.ts', 'allow'],
];

const SED_AND_DATA: Row[] = [
  // sed's script: w/W write, r/R read, e runs a command.
  ["sed -n 'w .keel/x' src/a.ts", 'ask', { proves: 'test -s .keel/x' }],
  ["sed -n '/x/W .git/x' src/a.ts", 'ask'],
  ["sed 's/a/b/w .claude/x' src/a.ts", 'ask'],
  ["sed 's/a/b/ w .claude/x' src/a.ts", 'ask'],
  ["sed -n 'w out.txt' src/a.ts", 'ask'],
  ["sed -n 'w out.txt' src/a.ts", 'allow', undefined, 'acceptEdits'],
  ["sed -n 'w /dev/stdout' src/a.ts", 'allow'],
  ["sed -n '1e touch PWNED' src/a.ts", 'ask', { proves: 'test -e PWNED' }],
  ["sed 's/export/touch PWNED;/e' src/a.ts", 'ask', { proves: 'test -e PWNED' }],
  ["sed -e p -e '1e id' src/a.ts", 'ask'],
  ["sed -n --expression='w .keel/x' src/a.ts", 'ask'],
  ["sed -n -e '$!d' -e 'w .keel/x' src/a.ts", 'ask'],
  ["sed -n '/x/{w .keel/x\n}' src/a.ts", 'ask'],
  ["sed --in-place=.bak 's/a/b/' src/a.ts", 'allow'],
  ["sed -n 'r secrets/key.pem' src/a.ts", 'deny', { proves: 'grep -q KEY "$OUT"' }],
  ["sed 'R ../outside/secret.txt' src/a.ts", 'ask'],
  ['sed -f script.sed src/a.ts', 'ask'],
  ['sed -n 1,5p src/a.ts', 'allow'],
  ["sed -n '$=' src/a.ts", 'allow'],
  ["sed -n '/export/{p;q}' src/a.ts", 'allow'],
  ["sed ':a;N;$!ba;s/\\n/ /g' src/a.ts", 'allow'],
  ['sed --sandbox -n p src/a.ts', 'allow'],
  ["sed 'y/abc/xyz/' src/a.ts", 'allow'],
  ["sed '1i\\\nheader' src/a.ts", 'allow'],
  // sed -i edits its files (what a rule for sed allows), and leaves its backup.
  ["sed -i 's/a/b/' .keel/settings.json", 'ask', { proves: 'grep -q b .keel/settings.json' }],
  ["sed -i 's/a/b/' src/a.ts", 'allow'],
  ["sed -i.bak 's/a/b/' src/a.ts", 'allow'],
  ["sed -i.md 's/a/b/' KEEL", 'ask'],
  ["sed -i 's/a/b/' secrets/key.pem", 'deny'],
  // xxd: the second operand is written.
  ['xxd -r src/a.hex .keel/b', 'ask', { proves: 'grep -q keel .keel/b' }],
  ['xxd -r -p src/a.hex src/a.bin', 'allow'],
  ['xxd -r -c16 src/a.hex .git/x', 'ask'],
  ['xxd -c 16 src/a.ts', 'allow'],
  // tar: extracting writes names only the archive knows.
  ['tar -xf src/evil.tar', 'ask', { setup: "mkdir -p t/.keel && echo '{}' > t/.keel/settings.local.json && tar -cf src/evil.tar -C t .keel && rm -rf t", proves: 'test -e .keel/settings.local.json' }],
  ['tar -xf src/evil.tar', 'ask', undefined, 'bypassPermissions'],
  ['tar xf src/evil.tar -C ../outside/x', 'ask'],
  ['tar --extract --file=src/evil.tar', 'ask'],
  ['tar --directory=.git -xf src/evil.tar', 'ask', undefined, 'bypassPermissions'],
  ['tar --create --file=.keel/x.tar src', 'ask'],
  ['tar -tf src/evil.tar', 'allow'],
  ['tar -xOf src/evil.tar', 'allow'],
  ['tar -czf src/a.tgz src', 'allow'],
  ['tar -czf .keel/a.tgz src', 'ask'],
  ['tar -cf out.tar secrets', 'deny'],
  ['tar -cf out.tar .', 'ask'],
  // rsync: local sources are read whole; they land below the destination.
  ['rsync -a src/ .git/hooks/', 'ask', { proves: 'test -e .git/hooks/a.ts' }],
  ['rsync -a --delete src/empty/ .keel/', 'ask'],
  ['rsync -a secrets/ src/s/', 'deny'],
  ['rsync -a src/ copy/', 'allow'],
  ['rsync -a src copy', 'allow'],
  ['rsync -av src/ ../outside/c/', 'ask'],
];

export const FILE_COMMAND_GROUPS: CorpusGroup[] = [
  { name: 'file commands: what they write, under rules for them', settings: SETTINGS, prepare, bash: rows('file-writes', WRITES) },
  { name: 'file commands: what they read, under rules for them', settings: SETTINGS, prepare, bash: rows('file-reads', READS) },
  { name: 'sed, xxd, tar and rsync: scripts and archives', settings: SETTINGS, prepare, bash: rows('file-scripts', SED_AND_DATA) },
];

/** The same files when a runner or a wrapper runs the command: whichever rule allowed that. */
const BEHIND: Row[] = [
  ['strace -f cp src/a.ts .git/config', 'ask'],
  ['strace -f cp secrets/key.pem src/k', 'deny'],
  ['strace -f git commit --allow-empty -F secrets/key.pem', 'deny'],
  ["xvfb-run make -E 'x: ; rm -rf src' x", 'deny'],
  ['timeout 5 tee .keel/settings.local.json', 'ask'],
  ['timeout 5 tee src/out.txt', 'allow'],
  ['nice -n 5 cp src/a.ts KEEL.md', 'ask', undefined, 'bypassPermissions'],
  ['sudo cp src/a.ts .vscode/tasks.json', 'ask'],
  ['strace -f cp src/a.ts src/b.ts', 'allow'],
  ['strace -f git commit -m ok', 'allow'],
];

FILE_COMMAND_GROUPS.push({
  name: 'file commands behind runners and wrappers',
  settings: { permissions: { allow: ['Bash(strace:*)', 'Bash(xvfb-run:*)', 'Bash(tee:*)', 'Bash(cp:*)', 'Bash(sudo cp:*)', 'Bash(git commit:*)'], deny: ['Bash(rm:*)', 'Read(./secrets/**)'] } },
  prepare,
  bash: rows('file-behind-runners', BEHIND),
});
