import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PermissionFixture } from '../fixture';
import type { BashCase, CorpusGroup, Decision, RealBashCheck } from './types';

/**
 * Paths are what the kernel will open (issue 9): brace and tilde expansion, globs, NUL
 * truncation, input redirects, /dev/tcp, the working directory through cd/pushd/popd (a cd that
 * may fail, CDPATH, expansions that assign), `..` after a symlink — and ordinary path use that
 * must stay allowed. No Bash rule at all: what is allowed here is allowed by the read-only
 * shortcut, whose every path must resolve inside the workspace (or under a Read allow rule).
 *
 * The fixture adds `src/{a.txt,b.ts,sub/c.ts}`, `etc/passwd` (a fake one inside the workspace)
 * and `lnk/` with `rootlink -> /`, `etclink -> /etc`, `up -> ..`, `inlink -> ../src`.
 */
const READS_PASSWD: RealBashCheck = { proves: 'grep -q "^root:" "$OUT"' };
const NO_PASSWD: RealBashCheck = { proves: '! grep -q "^root:" "$OUT"' };

function prepare(fx: PermissionFixture): void {
  mkdirSync(join(fx.ws, 'src', 'sub'), { recursive: true });
  writeFileSync(join(fx.ws, 'src', 'a.txt'), 'hello\n');
  writeFileSync(join(fx.ws, 'src', 'b.ts'), 'export const b = 2;\n');
  writeFileSync(join(fx.ws, 'src', 'sub', 'c.ts'), 'export const c = 3;\n');
  mkdirSync(join(fx.ws, 'etc'));
  writeFileSync(join(fx.ws, 'etc', 'passwd'), 'fake-passwd\n');
  mkdirSync(join(fx.ws, 'lnk'));
  symlinkSync('/', join(fx.ws, 'lnk', 'rootlink'));
  symlinkSync('/etc', join(fx.ws, 'lnk', 'etclink'));
  symlinkSync('..', join(fx.ws, 'lnk', 'up'));
  symlinkSync('../src', join(fx.ws, 'lnk', 'inlink'));
}

type Row = [string, Decision] | [string, Decision, RealBashCheck | string] | [string, Decision, RealBashCheck | undefined, string];

function rows(group: string, list: Row[]): BashCase[] {
  return list.map(([command, expect, proof, note]) => {
    const c: BashCase = { group, command, expect };
    if (typeof proof === 'string') c.note = proof;
    else if (proof) c.realBash = proof;
    if (note) c.note = note;
    return c;
  });
}

const BRACES: Row[] = [
  ["cat {/etc/passwd,'src/a.txt'}", 'ask', READS_PASSWD],
  ['cat {/etc/passwd,src/a.txt}', 'ask', READS_PASSWD],
  ["cat {'/etc/passwd',src/a.txt}", 'ask', READS_PASSWD],
  ['cat {"/etc/passwd",src/a.txt}', 'ask'],
  ['cat /etc/{passwd,hostname}', 'ask', READS_PASSWD],
  ['cat {src,/etc}/passwd', 'ask', READS_PASSWD],
  ['cat /e{t,}c/passwd', 'ask', READS_PASSWD],
  ['cat /{e,}tc/pass{wd,}', 'ask'],
  ['cat {/etc/passwd,}', 'ask', READS_PASSWD],
  ['cat {,/etc/passwd}', 'ask', READS_PASSWD],
  ['cat {src/a.txt,{/etc/passwd,src/b.ts}}', 'ask', READS_PASSWD],
  ['cat /etc/passw{d..d}', 'ask', READS_PASSWD],
  ['cat /etc/pass{v..w}d', 'ask', READS_PASSWD],
  ['cat src/{a.txt,../../outside/secret.txt}', 'ask', { proves: 'grep -q outside "$OUT"' }],
  ['head -n 1 {/etc/passwd,src/a.txt}', 'ask'],
  ['ls {/,src}', 'ask'],
  ['cat /dev/null {/etc/passwd,}', 'ask'],
  ['cat < {/etc/passwd,}', 'ask', READS_PASSWD],
  ['cat {secrets/key.pem,src/a.txt}', 'deny'],
  ['echo x > {a,b}', 'ask', 'bash: ambiguous redirect'],
  // quoted or escaped braces do not expand: a literal (missing) file inside the workspace
  ["cat '{/etc/passwd,src/a.txt}'", 'allow', NO_PASSWD],
  ['cat "{/etc/passwd,src/a.txt}"', 'allow', NO_PASSWD],
  ['cat \\{/etc/passwd,src/a.txt\\}', 'allow', NO_PASSWD],
  ["cat $'{'/etc/passwd,src/a.txt$'}'", 'allow', NO_PASSWD],
  ["cat {/etc/passwd'}'", 'allow', NO_PASSWD],
  ['cat {/etc/passwd}', 'allow', NO_PASSWD],
  // brace words inside the workspace stay allowed
  ['cat src/{a.txt,b.ts}', 'allow', { proves: 'grep -q hello "$OUT" && grep -q "const b" "$OUT"' }],
  ['cat {src/a.txt,src/b.ts}', 'allow'],
  ['wc -l src/{a.txt,sub/c.ts}', 'allow'],
  ['cat src/a.tx{t..t}', 'allow'],
  ['cat {1..3}', 'allow'],
];

const TILDES: Row[] = [
  ['cat ~/other.txt', 'ask', { proves: 'grep -q other "$OUT"' }],
  ['cat ~', 'ask'],
  ['ls ~/../..', 'ask'],
  ['cat ~/docs/../other.txt', 'ask'],
  ['cat ~root/.bashrc', 'ask'],
  ['cat ~+/src/a.txt', 'ask'],
  ['cat ~-/x', 'ask'],
  ['cat {~,/nonexistent}/other.txt', 'ask', { proves: 'grep -q other "$OUT"' }],
  ['cat ~/docs/notes.md', 'allow', 'Read(~/docs/**) allows it'],
  ['head -1 < ~/docs/notes.md', 'allow'],
  ['echo x > ~/docs/new.md', 'ask'],
  ['cd ~ && cat other.txt', 'ask'],
  ['cd && ls', 'ask'],
  ["cat '~/other.txt'", 'ask', undefined, 'conservative: the check reads a leading ~ both ways'],
  ['cat x=~/other.txt', 'allow', NO_PASSWD],
];

const GLOBS: Row[] = [
  ['cat src/*/../../../../../../../../../etc/passwd', 'ask', READS_PASSWD],
  ['cat */../../../../../../../../etc/passwd', 'ask', READS_PASSWD],
  ['cat src/?ub/../../../../../../../../../etc/passwd', 'ask', READS_PASSWD],
  ['cat src/[s]ub/../../../../../../../../../etc/passwd', 'ask', READS_PASSWD],
  ['cat lnk/*/passwd', 'ask', READS_PASSWD],
  ['cat lnk/etc*/passwd', 'ask', READS_PASSWD],
  ['cat l?k/etclink/passwd', 'ask', READS_PASSWD],
  ['cat l*/etclink/host*', 'ask'],
  ['ls lnk/*', 'ask'],
  ['cat lnk/up/*', 'deny', undefined, 'matches lnk/up/link-secret, a link to secrets/key.pem (and lnk/up/link-out, out of the workspace)'],
  ['cat /etc/pass*', 'ask', READS_PASSWD],
  ['cat /*/passwd', 'ask'],
  ['cat /e?c/passwd', 'ask', READS_PASSWD],
  ['grep -r root lnk/*', 'ask'],
  // globs that stay inside
  ['wc -l src/*.ts', 'allow'],
  ['cat src/sub/*.ts', 'allow'],
  ['ls src/*', 'allow'],
  ['cat src/*.nomatch', 'allow', { proves: 'grep -q "No such file" "$OUT"' }],
  ['cat src/[ab].*', 'allow'],
  ['cat lnk/inlink/*.ts', 'allow'],
  ['cat src/**/c.ts', 'allow'],
  ['grep -rn const src/*', 'allow'],
  ['head -n 3 src/*/*.ts', 'allow'],
  ['cat ~/docs/*', 'allow', 'Read(~/docs/**) lets the glob list ~/docs'],
  ['cat */*/*/*/*', 'ask', undefined, 'the glob walks through lnk/rootlink to /: not expanded there'],
  ['cat lnk/*/*', 'ask'],
  ['cat secrets/*', 'deny'],
  ['cat secrets/nomatch*', 'deny'],
];

const NUL: Row[] = [
  ["cat $'../../../../../../../../etc/passwd\\x00/../../../../../../../../x'", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\x00'", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\0/../x'", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\u0000x'", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\U00000000x'", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\0001'", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\c@/x'", 'ask', READS_PASSWD],
  ["cat $'\\x00'/etc/passwd", 'ask', READS_PASSWD],
  ["cat $'/etc/passwd\\x00'src/a.txt", 'ask'],
  ["cat src/a.txt$'\\x00/../../../../../../../../etc/passwd'", 'allow', { proves: 'grep -q hello "$OUT" && ! grep -q "^root:" "$OUT"' }],
  ["cat \"$(printf '/etc/passwd\\0')\"", 'ask'],
];

const REDIRECTS: Row[] = [
  ['cat < /etc/passwd', 'ask', READS_PASSWD],
  ['cat 0< /etc/passwd', 'ask', READS_PASSWD],
  ['cat <> /etc/passwd', 'ask'],
  ['sort < /etc/passwd', 'ask', READS_PASSWD],
  ['{ cat; } < /etc/passwd', 'ask', READS_PASSWD],
  ['cat < lnk/etclink/passwd', 'ask', READS_PASSWD],
  ['cat < lnk/rootlink/etc/passwd', 'ask', READS_PASSWD],
  ['cat < src/../../outside/secret.txt', 'ask', { proves: 'grep -q outside "$OUT"' }],
  ['cat < ~/other.txt', 'ask'],
  ['cat < $F', 'ask'],
  ['exec 3< /etc/passwd; cat <&3', 'ask'],
  ['cat < secrets/key.pem', 'deny'],
  ['wc -l < src/a.txt', 'allow'],
  ['cat < etc/passwd', 'allow', { proves: 'grep -q fake-passwd "$OUT"' }],
  ['cat <<< /etc/passwd', 'allow', NO_PASSWD],
  ['cat < <(echo hi)', 'allow'],
  ["cat <<'EOF'\n/etc/passwd\nEOF", 'allow', NO_PASSWD],
];

const NETWORK: Row[] = [
  ['cat < /dev/tcp/127.0.0.1/80', 'ask', { proves: 'grep -qi "network\\|connection\\|refused" "$OUT"' }],
  ['echo hi > /dev/tcp/127.0.0.1/80', 'ask'],
  ['exec 3<>/dev/tcp/127.0.0.1/80', 'ask'],
  ['echo x >> /dev/udp/127.0.0.1/53', 'ask'],
  ['ls > /dev/tcp/10.0.0.1/1', 'ask'],
  ['cat < //dev/tcp/127.0.0.1/80', 'ask'],
  ['echo x 2> /dev/tcp/127.0.0.1/80', 'ask'],
  ['cd /dev && cat < tcp/127.0.0.1/80', 'ask'],
  ['echo /dev/tcp/127.0.0.1/80', 'allow', 'only a string'],
];

const CD: Row[] = [
  // /proc/self/missing: no test can create it (another suite's HOME=/nonexistent makes that folder exist).
  ['cd /etc; cd /proc/self/missing; cat passwd', 'ask', READS_PASSWD],
  ['cd /etc; cd src; cat passwd', 'ask', READS_PASSWD],
  ['cd /etc; cd package.json; cat passwd', 'ask', READS_PASSWD],
  ['cd /etc || true; cat passwd', 'ask', READS_PASSWD],
  ['cd /etc 2>/dev/null; cat passwd', 'ask', READS_PASSWD],
  ['cd /proc/self/missing && cat passwd', 'ask'],
  ['cd /etc\ncat passwd', 'ask', READS_PASSWD],
  ['pushd /etc && cat passwd', 'ask', READS_PASSWD],
  ['pushd /etc; popd; cat passwd', 'ask', undefined, 'conservative: popd may find the stack empty'],
  ['cd lnk/rootlink && cat etc/passwd', 'ask', READS_PASSWD],
  ['cd -P lnk/rootlink/.. && ls', 'ask', { proves: 'grep -qx etc "$OUT"' }],
  ['cd /etc && cd - && cat passwd', 'ask'],
  ['cd $HOME && cat other.txt', 'ask'],
  ['cd "$(echo /etc)" && cat passwd', 'ask'],
  ['builtin cd /etc; cat passwd', 'ask', READS_PASSWD],
  ['command cd /etc && cat passwd', 'ask', READS_PASSWD],
  ['time cd /etc; cat passwd', 'ask', READS_PASSWD],
  ['time -p cd /etc && cat passwd', 'ask', READS_PASSWD],
  ['! cd /etc; cat passwd', 'ask', READS_PASSWD],
  ['{ cd /etc; }; cat passwd', 'ask', READS_PASSWD],
  ['case x in x) cd /etc;; esac; cat passwd', 'ask', READS_PASSWD],
  ['x=/etc; cd $x; cat passwd', 'ask'],
  ['cd /e*; cat passwd', 'ask', READS_PASSWD],
  ['cd {/etc,}; cat passwd', 'ask', READS_PASSWD],
  ["eval 'cd /etc'; cat passwd", 'ask', READS_PASSWD],
  ['f() { cd /etc; }; f; cat passwd', 'ask'],
  ['for d in /etc; do cd $d; done; cat passwd', 'ask'],
  ['if true; then cd /etc; fi; cat passwd', 'ask'],
  ['cd /etc && ls 2>&1 | cat; cat passwd', 'ask', READS_PASSWD],
  ['cd /etc && ls', 'ask'],
  // a cd in a subshell, a pipeline or the background does not move this shell
  ['(cd /etc); cat passwd', 'allow', NO_PASSWD],
  ['cd /etc | cat passwd', 'allow', NO_PASSWD],
  ['cd /etc & cat passwd', 'allow', NO_PASSWD],
  ['coproc cd /etc; cat passwd', 'allow', NO_PASSWD],
  ['$(cd /etc); cat etc/passwd', 'ask', undefined, 'an empty command substitution as a command name'],
  ['echo "$(cd /etc)"; cat passwd', 'allow', NO_PASSWD],
  // ordinary directory changes stay allowed
  ['cd src && cat a.txt', 'allow', { proves: 'grep -q hello "$OUT"' }],
  ['cd src; cat a.txt', 'allow'],
  ['cd src || echo no; cat a.txt', 'allow'],
  ['cd src; cd sub; cat c.ts', 'allow'],
  ['pushd src && popd && cat package.json', 'allow'],
  ['cd src && cd .. && cat package.json', 'allow'],
  ['cd lnk/rootlink/.. && ls', 'allow', { proves: 'grep -qx etclink "$OUT"' }],
  ['cd lnk/etclink && cd .. && cat etc/passwd', 'allow', NO_PASSWD],
  ['cd src && ls -la', 'allow'],
  ['cd src && ls && cd .. && ls', 'allow'],
  ['cd src; ls; cd ..; ls', 'ask', undefined, 'if the first cd failed, cd .. leaves the workspace'],
];

const CDPATH: Row[] = [
  [': ${CDPATH:=/}; cd etc; cat passwd', 'ask', READS_PASSWD],
  [': ${CDPATH=/}; cd etc && cat passwd', 'ask', READS_PASSWD],
  ['CDPATH=/ cd etc && cat passwd', 'ask', READS_PASSWD],
  ['export CDPATH=/; cd etc; cat passwd', 'ask', READS_PASSWD],
  ['declare CDPATH=/; cd etc; cat passwd', 'ask', READS_PASSWD],
  ['for CDPATH in /; do cd etc; done; cat passwd', 'ask'],
  ['read CDPATH <<< /; cd etc; cat passwd', 'ask'],
  [': ${PATH:=/tmp}; ls', 'ask'],
  ['echo ${IFS:=x}', 'ask'],
  [': $((PATH=0)); ls', 'ask'],
  ['((HOME=1)); cd; ls', 'ask'],
  ['cd etc && cat passwd', 'allow', { proves: 'grep -q fake-passwd "$OUT"' }],
  ['echo ${x:=1}', 'allow'],
  ['echo ${CDPATH:-none}', 'allow'],
];

const DOTDOT: Row[] = [
  ['cat lnk/rootlink/../etc/passwd', 'ask', READS_PASSWD],
  ['cat lnk/etclink/../etc/passwd', 'ask', READS_PASSWD],
  ['cat lnk/etclink/../../etc/passwd', 'ask', READS_PASSWD],
  ['cat lnk/inlink/../../../../../../../../etc/passwd', 'ask', READS_PASSWD],
  ['cat lnk/up/link-out/secret.txt', 'ask', { proves: 'grep -q outside "$OUT"' }],
  ['echo x > lnk/rootlink/../tmp/keel-evil', 'ask'],
  ['wc -c lnk/rootlink/../etc/hostname', 'ask'],
  ['cat ./src/../package.json', 'allow', { proves: 'grep -q "{}" "$OUT"' }],
  ['cat src/sub/../a.txt', 'allow'],
  ['ls lnk/inlink/..', 'allow'],
  ['cat lnk/inlink/../package.json', 'allow', { proves: 'grep -q "{}" "$OUT"' }],
];

const ORDINARY: Row[] = [
  ['cat src/a.txt | head', 'allow', { proves: 'grep -q hello "$OUT"' }],
  ['ls -la src', 'allow'],
  ['head -n 5 src/b.ts src/sub/c.ts', 'allow'],
  ['grep -rn TODO src', 'allow'],
  ["find src -name '*.ts'", 'allow'],
  ['ls src/sub/', 'allow'],
  ['cat package.json > /dev/null', 'allow'],
  ['diff src/a.txt src/b.ts', 'allow'],
  ['stat src', 'allow'],
  ['du -sh src', 'allow'],
  ['cat src/a.txt 2>/dev/null || echo missing', 'allow'],
  ['ls -la | head -5', 'allow'],
  ['tail -n 20 src/b.ts | grep const', 'allow'],
  ['wc -l src/a.txt src/b.ts | sort -n', 'allow'],
  ['cat "src/a.txt"', 'allow'],
  ["cat 'src/sub/c.ts'", 'allow'],
  ['ls .', 'allow'],
];

export const PATHS_GROUP: CorpusGroup = {
  name: 'paths',
  // pushd/popd are allowed by rule only so that their effect on later commands is what is tested.
  settings: { permissions: { allow: ['Read(~/docs/**)', 'Bash(pushd:*)', 'Bash(popd)'], deny: ['Read(./secrets/**)'] } },
  prepare,
  bash: [
    ...rows('path-braces', BRACES),
    ...rows('path-tilde', TILDES),
    ...rows('path-glob', GLOBS),
    ...rows('path-nul', NUL),
    ...rows('path-input-redirect', REDIRECTS),
    ...rows('path-network', NETWORK),
    ...rows('path-cd', CD),
    ...rows('path-cdpath', CDPATH),
    ...rows('path-dotdot-after-link', DOTDOT),
    ...rows('path-ordinary', ORDINARY),
  ],
};
