import { resolve } from 'node:path';
import { defHasName, hasOption, isLiteral, parseOptions, type OptionTable, type ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';
import { gitRepositoryRisk, gitTopLevel } from './gitRepo';
import { roTable } from './table';
import type { CommandVerdict, ReadOnlyContext, RO } from './types';

/**
 * git (2.39) sub-commands in their read-only forms. git's own options come first and are exact
 * (`-c`, `--git-dir`, `--work-tree`, `-p` are not read-only; `-C DIR` moves where paths are
 * read from); each sub-command's options follow parse-options (unambiguous abbreviations,
 * `--no-X`), so every table lists the options that write or run programs too, and an
 * abbreviation resolves against all of them (`--edit-desc` is `--edit-description`). Every
 * operand (revision or path) is path-checked, a command that prints file content searches what
 * it may show, and the repository itself must not be able to run code (gitRepo.ts).
 * `--contains`, `--merged` and the like take the next word when one follows (parse-options'
 * LASTARG_DEFAULT): modelled as required, so a bare one at the end asks.
 */
/** git's own options (before the sub-command), exact as git.c reads them. */
export const GIT_GLOBAL = roTable(
  'git',
  `v/version h/help! C=@ c=! /config-env=! /exec-path=? /html-path /man-path /info-path p/paginate! P/no-pager /no-replace-objects /bare! /git-dir=!
   /work-tree=! /namespace= /super-prefix=! /literal-pathspecs /glob-pathspecs /noglob-pathspecs /icase-pathspecs /no-optional-locks /list-cmds=`,
  { abbreviations: false },
);

const REV = `n= /max-count= /skip= /since= /after= /until= /before= /max-age= /min-age= /author= /committer= /grep-reflog= /grep= /all-match /invert-grep
  i/regexp-ignore-case /basic-regexp E/extended-regexp F/fixed-strings P/perl-regexp /remove-empty /merges /min-parents= /max-parents= /first-parent
  /exclude-first-parent-only /not /all /branches=? /tags=? /remotes=? /glob= /exclude= /exclude-hidden= /reflog /alternate-refs /single-worktree /ignore-missing
  /bisect /stdin /cherry-mark /cherry-pick /left-only /right-only /cherry g/walk-reflogs /merge /boundary /simplify-by-decoration /show-pulls /full-history
  /dense /sparse /simplify-merges /ancestry-path=? /date-order /author-date-order /topo-order /reverse /no-walk=? /do-walk /format= /pretty=? /abbrev-commit
  /oneline /encoding= /expand-tabs=? /notes=? /show-notes=? /standard-notes /show-signature! /relative-date /date= /parents /children /left-right /graph
  /show-linear-break=? c /cc /dd /remerge-diff m /diff-merges= /combined-all-paths t r 0123456789`;
const DIFF = `p/patch u s U/unified= /output=> /output-indicator-new= /output-indicator-old= /output-indicator-context= /raw /patch-with-raw /indent-heuristic
  /minimal /patience /histogram /anchored= /diff-algorithm= /stat=? /stat-width= /stat-name-width= /stat-count= /stat-graph-width= /compact-summary /numstat
  /shortstat X/dirstat=? /cumulative /dirstat-by-file=? /summary /patch-with-stat z /name-only /name-status /submodule=? /color=? /color-moved=?
  /color-moved-ws= /word-diff=? /word-diff-regex= /color-words=? /renames /rename-empty /check /ws-error-highlight= /full-index /binary /abbrev=?
  B/break-rewrites=? M/find-renames=? C/find-copies=? /find-copies-harder D/irreversible-delete l= /diff-filter= S= G= /find-object= /pickaxe-all
  /pickaxe-regex O=< /skip-to= /rotate-to= R /relative=? a/text /ignore-cr-at-eol /ignore-space-at-eol b/ignore-space-change w/ignore-all-space
  /ignore-blank-lines I/ignore-matching-lines= /inter-hunk-context= W/function-context /exit-code /quiet /ext-diff! /textconv /ignore-submodules=?
  /src-prefix= /dst-prefix= /no-prefix /default-prefix /line-prefix= /ita-invisible-in-index /ita-visible-in-index`;
const NEG = { permute: true, negation: 'safe' as const };
const LOG = roTable('git log', `${REV} ${DIFF} /follow /decorate=? /decorate-refs= /decorate-refs-exclude= /clear-decorations /source /mailmap/use-mailmap /full-diff /log-size L=`, NEG);
const DIFF_T = roTable('git diff', `${REV} ${DIFF} /cached/staged /merge-base /no-index /base /ours /theirs`, NEG);
/** REV without the tokens shortlog uses for its own options (-n numbered, -c/--committer grouping). */
const REV_FOR_SHORTLOG = REV.split(/\s+/).filter((t) => !['n=', 'c', '/committer='].includes(t)).join(' ');
const SHORTLOG = roTable('git shortlog', `${REV_FOR_SHORTLOG} c/committer n/numbered s/summary e/email /group= w=?`, NEG);

/**
 * One sub-command's read-only form. `content`: it prints file content (a patch, a blob) unless
 * `content` says otherwise for this parse; `operands`: how its operands read (revisions and
 * pathspecs by default, `none` for names that are not files).
 */
type Sub = { table: OptionTable<RO>; check?: (a: ParsedArgs<RO>) => boolean; operands?: 'paths' | 'none'; content?: (a: ParsedArgs<RO>) => boolean };

const SUBS: Record<string, Sub> = {
  status: {
    table: roTable(
      'git status',
      `s/short b/branch /show-stash /porcelain=? /long v/verbose u/untracked-files=? /ignore-submodules=? /ignored=? z /column=? /ahead-behind /renames
       M/find-renames=?`,
      NEG,
    ),
  },
  log: { table: LOG, content: (a) => patchAsked(a) },
  show: { table: LOG, content: (a) => !noPatch(a) },
  whatchanged: { table: LOG, content: (a) => patchAsked(a) },
  diff: { table: DIFF_T, content: (a) => !noPatch(a) },
  shortlog: { table: SHORTLOG },
  branch: {
    table: roTable(
      'git branch',
      `a/all r/remotes v/verbose l/list /show-current /contains= /no-contains= /merged= /no-merged= /sort= /format= /points-at= /color=? /column=?
       i/ignore-case /omit-empty /abbrev=? q/quiet d/delete! D! m/move! M! c/copy! C! /edit-description! u/set-upstream-to=! /unset-upstream!
       t/track=?! f/force! /create-reflog! /recurse-submodules!`,
      NEG,
    ),
    // A name without --list creates a branch.
    check: (a) => a.operands.length === 0 || hasOption(a, '--list'),
  },
  tag: {
    table: roTable(
      'git tag',
      `l/list n=? /contains= /no-contains= /merged= /no-merged= /points-at= /sort= /format= /color=? /column=? i/ignore-case /omit-empty a/annotate!
       s/sign! u/local-user=! f/force! d/delete! v/verify! m/message=! F/file=! e/edit! /cleanup=! /create-reflog! /trailer=!`,
      NEG,
    ),
    check: (a) => a.operands.length === 0 || hasOption(a, '--list'),
  },
  remote: {
    table: roTable('git remote', 'v/verbose /push /all', NEG),
    // `git remote`, `git remote -v`, `git remote get-url [--push] [--all] NAME`; `show` and the rest contact the network or write.
    check: (a) => a.operands.length === 0 ? !hasOption(a, '--push', '--all') : a.operands[0]?.word.value === 'get-url' && a.operands.length === 2,
    operands: 'none',
  },
  'rev-parse': {
    table: roTable(
      'git rev-parse',
      `/parseopt /sq-quote /keep-dashdash /stop-at-non-option /stuck-long /revs-only /no-revs /flags /no-flags /default= /prefix= /verify q/quiet /sq /short=?
       /not /abbrev-ref=? /symbolic /symbolic-full-name /all /branches=? /tags=? /remotes=? /glob= /exclude= /exclude-hidden= /disambiguate= /local-env-vars
       /path-format= /git-dir /absolute-git-dir /git-common-dir /is-inside-git-dir /is-inside-work-tree /is-bare-repository /is-shallow-repository
       /resolve-git-dir=< /git-path= /show-cdup /show-prefix /show-toplevel /show-superproject-working-tree /shared-index-path /show-object-format=?
       /since= /after= /until= /before=`,
      { permute: true, abbreviations: false },
    ),
  },
  'ls-files': {
    table: roTable(
      'git ls-files',
      `c/cached d/deleted m/modified o/others i/ignored s/stage k/killed u/unmerged /directory /empty-directory /eol z t v f /full-name /recurse-submodules
       /abbrev=? /debug /deduplicate /sparse /format= /exclude-standard x/exclude= X/exclude-from=< /exclude-per-directory= /error-unmatch /with-tree=
       /resolve-undo`,
      NEG,
    ),
  },
  'ls-tree': { table: roTable('git ls-tree', 'd r t l/long z /name-only/name-status /object-only /full-name /full-tree /abbrev=? /format=', NEG) },
  blame: {
    table: roTable(
      'git blame',
      `/incremental b /root /show-stats /score-debug f/show-name n/show-number p/porcelain /line-porcelain c t l s e/show-email w /ignore-rev=
       /ignore-revs-file=< /color-lines /color-by-age /minimal /progress S=< /contents=< C=? M=? L= /abbrev=? /date= /reverse /first-parent /encoding=
       /since= /textconv`,
      NEG,
    ),
  },
  describe: {
    table: roTable('git describe', '/contains /debug /all /tags /long /first-parent /abbrev=? /exact-match /candidates= /match= /exclude= /always /dirty=? /broken=?', NEG),
  },
  'merge-base': { table: roTable('git merge-base', 'a/all /octopus /independent /is-ancestor /fork-point', NEG) },
  'rev-list': {
    table: roTable(
      'git rev-list',
      `${REV} /count /objects /objects-edge /objects-edge-aggressive /object-names /disk-usage=? /unpacked /header /timestamp /bisect-vars /bisect-all
       /indexed-objects /missing= /filter= /filter-provided-objects /exclude-promisor-objects /in-commit-order /no-kept-objects /use-bitmap-index
       /progress= /quiet`,
      NEG,
    ),
  },
  // `git symbolic-ref [-q] [--short] [--no-recurse] NAME` reads; a second operand or -d writes.
  'symbolic-ref': { table: roTable('git symbolic-ref', 'q/quiet d/delete! /short /recurse m=!', NEG), check: (a) => a.operands.length === 1, operands: 'none' },
  // `git stash list [log options]`: the other stash forms change the worktree.
  stash: { table: LOG, check: (a) => a.operands[0]?.word.value === 'list', content: (a) => patchAsked(a), operands: 'none' },
  // `git worktree list`: the other forms add, move or remove worktrees.
  worktree: { table: roTable('git worktree', 'v/verbose /porcelain z /expire=', NEG), check: (a) => a.operands[0]?.word.value === 'list' && a.operands.length === 1, operands: 'none' },
  // `git cat-file -t|-s|-e OBJECT` prints an object's type, size or existence; `-p` and a
  // type print its content; --textconv/--filters run configured programs; batches read names
  // from standard input (any object).
  'cat-file': {
    table: roTable(
      'git cat-file',
      `e p t s /allow-unknown-type /use-mailmap/mailmap /batch=?! /batch-check=?! /batch-command=?! /batch-all-objects! /buffer /follow-symlinks /unordered
       /textconv! /filters! /path=! z`,
      NEG,
    ),
    check: (a) => hasOption(a, '-t', '-s', '-e', '-p') && a.operands.length === 1,
    content: (a) => hasOption(a, '-p'),
  },
  // git grep reads the content of the tracked files below the current folder (or of a revision's
  // tree); -O opens them in a pager it runs (a runner: shell/gitPlan.ts).
  grep: {
    table: roTable(
      'git grep',
      `/cached /no-index /untracked /exclude-standard /recurse-submodules v/invert-match i/ignore-case w/word-regexp a/text I /textconv! r/recursive
       /max-depth= E/extended-regexp G/basic-regexp F/fixed-strings P/perl-regexp n/line-number /column h H /full-name l/files-with-matches/name-only
       L/files-without-match z/null o/only-matching c/count /color=? /break /heading C/context= B/before-context= A/after-context= /threads= p/show-function
       W/function-context f=< e= /and /or /not q/quiet /all-match O/open-files-in-pager=?! /ext-grep m/max-count= 0123456789`,
      NEG,
    ),
    content: () => true,
  },
  // `git config --get/--get-all/--get-regexp/--get-urlmatch/--get-color/--get-colorbool NAME`
  // and `git config NAME` read; a value operand or any other action writes the config.
  config: {
    table: roTable(
      'git config',
      `/global /system /local /worktree f/file=< /blob= /get /get-all /get-regexp /get-urlmatch /replace-all! /add! /unset! /unset-all! /rename-section!
       /remove-section! l/list /fixed-value e/edit! /get-color /get-colorbool t/type= /bool /int /bool-or-int /bool-or-str /path /expiry-date z/null
       /name-only /includes /show-origin /show-scope /default=`,
      NEG,
    ),
    // `--list` prints every setting of every scope (credentials people keep there included): it asks.
    check: (a) => (hasOption(a, '--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool') ? a.operands.length <= 2 : !hasOption(a, '-l') && a.operands.length === 1),
    operands: 'none',
  },
};

/** Options after which a diff-like command prints no patch (unless a patch is asked for too). */
const NO_PATCH = ['--stat', '--numstat', '--shortstat', '--name-only', '--name-status', '--summary', '--dirstat', '--compact-summary', '--raw', '--quiet', '-s', '--exit-code'];
const PATCH = ['-p', '-u', '-U', '--patch', '--cc', '-c', '--remerge-diff', '-m', '--diff-merges', '-L', '--patch-with-raw', '--patch-with-stat', '--word-diff', '--color-words'];

function patchAsked(a: ParsedArgs<RO>): boolean {
  return a.options.some((o) => (o.name === '--diff-merges' ? o.value !== 'off' : PATCH.some((n) => defHasName(o.def, n))));
}

function noPatch(a: ParsedArgs<RO>): boolean {
  return !patchAsked(a) && a.options.some((o) => o.name === '--no-patch' || NO_PATCH.some((n) => defHasName(o.def, n)));
}

/**
 * What `git …` (words[0] is git) reads, for its read-only forms (SUBS): each revision and
 * pathspec operand (a path, checked as a read), `REV:path` (the path, relative to the top of the
 * working tree, `./` to the current folder), and, for a command that prints file content (a
 * patch, a blob) without pathspecs limiting it, everything below the top of the working tree
 * (a search, where only Read deny and ask rules apply: git shows the content of any tracked file).
 * Read-only only when the repository cannot run code either (gitRepo.ts). Other sub-commands
 * are not modelled here (undefined): their runners and file options are planned by
 * shell/gitPlan.ts. Never throws.
 */
export function gitVerdict(input: readonly ShellWord[], ctx: ReadOnlyContext): CommandVerdict | undefined {
  const unknown: CommandVerdict = { readOnly: false, complete: false };
  const words = input.map((w) => (isLiteral(w) && w.value === '--end-of-options' ? { ...w, value: '--' } : w));
  const g = parseOptions(GIT_GLOBAL, words, 1);
  if (!g.ok) return undefined;
  const subWord = words[g.args.end];
  if (!subWord) return { readOnly: g.args.options.length > 0 && g.args.options.every((o) => o.effect === 'safe'), complete: true };
  if (!isLiteral(subWord)) return undefined;
  const sub = Object.hasOwn(SUBS, subWord.value) ? SUBS[subWord.value] : undefined;
  if (!sub) return undefined;
  let readOnly = true;
  // git -C DIR: paths are relative to DIR (several compose); DIR itself is a place git reads.
  let dir: string | undefined;
  for (const o of g.args.options) {
    if (o.name === '-C') {
      if (!o.valueWord || !isLiteral(o.valueWord)) return unknown;
      const v = o.value ?? '';
      dir = dir === undefined || v.startsWith('/') ? v : `${dir}/${v}`;
      if (!ctx.use({ kind: 'read', value: dir })) readOnly = false;
    } else if (o.effect !== 'safe' || (o.name === '--exec-path' && o.value !== undefined)) readOnly = false;
  }
  const rel = (v: string): string => (dir === undefined || v.startsWith('/') ? v : `${dir}/${v}`);
  const r = parseOptions(sub.table, words, g.args.end + 1, { uncertain: 'fail' });
  if (!r.ok) return unknown;
  const a = r.args;
  const values = new Set(a.options.filter((o) => o.effect === 'safe' && o.valueWord?.single).map((o) => o.valueWord));
  if (words.some((w, i) => i > g.args.end && w.dynamic && !values.has(w))) return unknown;
  let complete = true;
  for (const o of a.options) {
    if (o.effect === 'unsafe') readOnly = false;
    else if (o.effect === 'readList' || o.effect === 'opaque') {
      readOnly = false;
      complete = false;
    } else if (o.effect === 'read' || o.effect === 'write') {
      if (!o.valueWord || !isLiteral(o.valueWord)) {
        readOnly = false;
        complete = false;
      } else if (o.effect === 'write') {
        ctx.use({ kind: 'write', value: rel(o.value ?? ''), byRule: false });
        readOnly = false;
      } else if (!ctx.use({ kind: 'read', value: rel(o.value ?? '') })) readOnly = false;
    }
  }
  // A form the check refuses (`git branch NAME`, `git stash push`, `git config K V`) is another
  // command: its files are shell/gitPlan.ts's.
  if (sub.check && !sub.check(a)) return undefined;
  const here = ctx.cwd === null ? null : dir === undefined ? ctx.cwd : resolve(ctx.cwd, dir);
  // git grep searches below the current folder; the others may show any tracked file. Found
  // only when needed (it walks up the folders).
  let found: { top: string | null | undefined } | undefined;
  const topLevel = (): string | null | undefined => (found ??= { top: here === null ? null : subWord.value === 'grep' ? here : gitTopLevel(here) }).top;
  /** A pathspec limits everything shown; `REV:path` shows that path; any other revision shows it all. */
  let limited = false;
  let blobs = false;
  let revisions = false;
  if (sub.operands !== 'none') {
    const dashDash = words.findIndex((w, i) => i > g.args.end && w.value === '--' && isLiteral(w));
    // git grep's first operand is the pattern unless -e or -f gave one.
    const operands = subWord.value === 'grep' && !hasOption(a, '-e', '-f') ? a.operands.slice(1) : a.operands;
    for (const x of operands) {
      const v = x.word.value;
      const pathspec = dashDash >= 0 && x.at > dashDash;
      const revPath = !pathspec && /^[^:]*:/.test(v) && !v.startsWith(':(') ? /^(?:[^:]*|:[0-3]):(.*)$/.exec(v) : null;
      if (revPath) {
        // REV:path names a blob or tree: the path from the top of the working tree (`./` from here).
        const path = revPath[1] ?? '';
        // No repository: git has nothing to show (it fails); unknown: it cannot be checked.
        const top = path.startsWith('./') || path.startsWith('../') ? null : topLevel();
        const under = path.startsWith('./') || path.startsWith('../') ? rel(path) : top ? `${top}/${path}` : top;
        if (under === undefined) {
          complete = false;
          readOnly = false;
        } else if (under === null) {
          // Nothing to read.
        }
        else if (!ctx.use({ kind: path === '' ? 'read' : 'search', value: under })) readOnly = false;
        blobs = true;
        continue;
      }
      if (!ctx.use({ kind: 'read', value: rel(v), word: x.word })) readOnly = false;
      if (pathspec || ctx.exists(rel(v))) {
        // A pathspec limits what is shown to that path (and what is below it).
        if (sub.content?.(a) && !ctx.use({ kind: 'search', value: rel(v) })) readOnly = false;
        limited = true;
      } else revisions = true;
    }
  }
  // Content of every tracked file may be shown: the Read rules must hold for the whole tree.
  if (sub.content?.(a) && !limited && (revisions || !blobs)) {
    const top = topLevel();
    if (top === undefined) {
      complete = false;
      readOnly = false;
    } else if (top !== null) ctx.use({ kind: 'search', value: top, scope: 'rules' });
  }
  if (here === null) return { readOnly: false, complete };
  if (readOnly && gitRepositoryRisk(here, { inside: (abs) => ctx.use({ kind: 'read', value: abs }), home: ctx.home }) !== null) readOnly = false;
  return { readOnly, complete };
}
