import { hasOption, isLiteral, parseOptions, type OptionTable, type ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';
import { gitRepositoryRisk } from './gitRepo';
import { roTable } from './table';
import type { ReadOnlyContext, RO } from './types';

/**
 * git (2.39) sub-commands in their read-only forms. git's own options come first and are exact
 * (`-C`, `-c`, `--git-dir`, `--work-tree`, `-p` are not read-only); each sub-command's options
 * follow parse-options (unambiguous abbreviations, `--no-X`), so every table lists the options
 * that write or run programs too, and an abbreviation resolves against all of them
 * (`--edit-desc` is `--edit-description`). Every operand (revision or path) is path-checked, and
 * the repository itself must not be able to run code (gitRepo.ts). `--contains`, `--merged` and
 * the like take the next word when one follows (parse-options' LASTARG_DEFAULT): modelled as
 * required, so a bare one at the end asks.
 */
/** git's own options (before the sub-command), exact as git.c reads them. */
export const GIT_GLOBAL = roTable(
  'git',
  `v/version h/help! C=! c=! /config-env=! /exec-path=? /html-path /man-path /info-path p/paginate! P/no-pager /no-replace-objects /bare! /git-dir=!
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
const DIFF = `p/patch u s U/unified= /output=! /output-indicator-new= /output-indicator-old= /output-indicator-context= /raw /patch-with-raw /indent-heuristic
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

type Sub = { table: OptionTable<RO>; check?: (a: ParsedArgs<RO>) => boolean; operands?: 'paths' | 'none' };

const SUBS: Record<string, Sub> = {
  status: {
    table: roTable(
      'git status',
      `s/short b/branch /show-stash /porcelain=? /long v/verbose u/untracked-files=? /ignore-submodules=? /ignored=? z /column=? /ahead-behind /renames
       M/find-renames=?`,
      NEG,
    ),
  },
  log: { table: LOG },
  show: { table: LOG },
  whatchanged: { table: LOG },
  diff: { table: DIFF_T },
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
};

/** True when `git …` (words[0] is git) is a read-only form and the repository cannot run code. */
export function gitIsReadOnly(input: readonly ShellWord[], ctx: ReadOnlyContext): boolean {
  const words = input.map((w) => (isLiteral(w) && w.value === '--end-of-options' ? { ...w, value: '--' } : w));
  if (words.some((w) => w.dynamic)) return false;
  const g = parseOptions(GIT_GLOBAL, words, 1);
  if (!g.ok || g.args.options.some((o) => o.effect !== 'safe' || (o.name === '--exec-path' && o.value !== undefined))) return false;
  const subWord = words[g.args.end];
  if (!subWord) return g.args.options.length > 0;
  if (!isLiteral(subWord)) return false;
  const sub = Object.hasOwn(SUBS, subWord.value) ? SUBS[subWord.value] : undefined;
  if (!sub) return false;
  const r = parseOptions(sub.table, words, g.args.end + 1, { uncertain: 'fail' });
  if (!r.ok) return false;
  const a = r.args;
  for (const o of a.options) {
    if (o.effect === 'unsafe' || o.effect === 'readList') return false;
    if (o.effect === 'read' && (!o.valueWord || !isLiteral(o.valueWord) || !ctx.pathOk(o.value ?? ''))) return false;
  }
  if (sub.check && !sub.check(a)) return false;
  if (sub.operands !== 'none') {
    for (const x of a.operands) if (!ctx.pathOk(x.word.value, x.word)) return false;
  }
  if (ctx.cwd === null) return false;
  return gitRepositoryRisk(ctx.cwd, { inside: (abs) => ctx.pathOk(abs), home: ctx.home }) === null;
}
