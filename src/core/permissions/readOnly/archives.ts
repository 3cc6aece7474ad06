import { defHasName, hasOption, type Operand, type ParsedArgs } from '../shell/options';
import type { ShellWord } from '../shell/words';
import { roTable } from './table';
import type { FileUse, OperandUses, ReadOnlySpec, RO } from './types';

/**
 * tar (GNU tar 1.34) and rsync (3.2–3.5), from their `--help`. Options that run programs
 * (`tar -I/--to-command/-F/--checkpoint-action`, `rsync -e/--rsync-path`) are inline code
 * (shell/execOptions.ts); here, what each reads and writes:
 * - tar: the archive (`-f`, default standard input/output) is written by `-c`, read and written
 *   by `-r -u -A --delete`, read by `-t -x -d`; `-c` reads every operand and everything below
 *   it, from the folder the last `-C DIR` before it names; `-x` writes names Keel cannot see
 *   (they are in the archive) below each `-C DIR` (or the working directory, or anywhere with
 *   `-P`), unless `-O` sends them to standard output; `--remove-files` deletes what it added.
 *   A remote archive (`host:file`) runs a remote shell: opaque. `-T` (names from a file) and
 *   `-d` (compares members Keel cannot name) leave the files unknown.
 * - rsync: local sources are read whole and land below the destination (`src/` its content,
 *   `src` itself, `-R` its full name); `--delete*` removes below the destination,
 *   `--remove-source-files` the sources; remote paths (`host:path`, `rsync://`) are the
 *   network, not files; option files are read or written as named.
 */
const TAR = roTable(
  'tar',
  `A/catenate/concatenate c/create /delete d/diff/compare r/append /test-label t/list u/update x/extract/get /check-device g/listed-incremental=@
   G/incremental /hole-detection= /ignore-failed-read /level= /no-check-device /no-seek n/seek /occurrence=? /sparse-version= S/sparse /add-file=@
   C/directory=@ /exclude= /exclude-backups /exclude-caches /exclude-caches-all /exclude-caches-under /exclude-ignore= /exclude-ignore-recursive=
   /exclude-tag= /exclude-tag-all= /exclude-tag-under= /exclude-vcs /exclude-vcs-ignores /no-null /no-recursion /no-unquote /no-verbatim-files-from
   /null /recursion T/files-from=* /unquote /verbatim-files-from X/exclude-from=< /anchored /ignore-case /no-anchored /no-ignore-case /no-wildcards
   /no-wildcards-match-slash /wildcards /wildcards-match-slash /keep-directory-symlink /keep-newer-files k/keep-old-files /no-overwrite-dir
   /one-top-level=?@ /overwrite /overwrite-dir /recursive-unlink /remove-files /skip-old-files U/unlink-first W/verify /ignore-command-error
   /no-ignore-command-error O/to-stdout /to-command=! /atime-preserve=? /clamp-mtime /delay-directory-restore /group= /group-map=< /mode= /mtime=
   m/touch /no-delay-directory-restore /no-same-owner /no-same-permissions /numeric-owner /owner= /owner-map=< p/preserve-permissions/same-permissions
   /same-owner /sort= s/preserve-order/same-order /acls /no-acls /no-selinux /no-xattrs /selinux /xattrs /xattrs-exclude= /xattrs-include=
   /force-local f/file=@ F/info-script/new-volume-script=! L/tape-length= M/multi-volume /rmt-command=! /rsh-command=! /volno-file=> b/blocking-factor=
   B/read-full-records i/ignore-zeros /record-size= H/format= /old-archive/portability /pax-option= /posix V/label= a/auto-compress
   I/use-compress-program=! j/bzip2 J/xz /lzip /lzma /lzop /no-auto-compress /zstd z/gzip/gunzip/ungzip Z/compress/uncompress /backup=? /hard-dereference
   h/dereference K/starting-file= /newer-mtime= N/newer/after-date= /one-file-system P/absolute-names /suffix= /strip-components= /transform/xform=
   /checkpoint=? /checkpoint-action=! /full-time /index-file=> l/check-links /no-quote-chars= /quote-chars= /quoting-style= R/block-number
   /show-defaults /show-omitted-dirs /show-snapshot-field-ranges /show-transformed-names/show-stored-names /totals=? /utc v/verbose /warning=
   w/interactive/confirmation o ?/help /restrict /usage /version`,
  { permute: true },
);

/** tar's traditional first word (`tar xzf a.tar`): a cluster of letters whose arguments follow in order. */
function tarWords(words: ShellWord[]): ShellWord[] | null {
  const first = words[1];
  if (!first || first.dynamic || first.glob || first.value.startsWith('-') || !/^[A-Za-z]+$/.test(first.value)) return words;
  const out: ShellWord[] = [words[0] as ShellWord];
  let next = 2;
  for (const c of first.value) {
    const def = TAR.shorts.get(c);
    if (!def) return null;
    out.push({ ...first, value: `-${c}`, fields: [`-${c}`] });
    if (def.arg === 'required') {
      const arg = words[next++];
      if (!arg) return null;
      out.push(arg);
    }
  }
  out.push(...words.slice(next));
  return out;
}

/** A path relative to the folder `dir` (as written) that tar has moved to. */
const under = (dir: string | undefined, value: string): string => (dir === undefined || value.startsWith('/') ? value : `${dir}/${value}`);

/** The options of `a` that are `name` however written (`-C`, `--directory`, `--dir`). */
const named = (a: ParsedArgs<RO>, name: string) => a.options.filter((o) => defHasName(o.def, name));

function tarUses(a: ParsedArgs<RO>): OperandUses {
  const mode = ['-A', '-c', '-d', '-r', '-t', '-u', '-x', '-G', '--delete', '--test-label'].find((m) => hasOption(a, m));
  if (mode === '-d' || mode === '-G' || hasOption(a, '-T')) return null;
  const archive = named(a, '-f').pop()?.value;
  if (archive !== undefined && /^[^/]*:/.test(archive) && !hasOption(a, '--force-local')) return { opaque: `tar reaches a remote archive (${archive}) through a remote shell` };
  const uses: FileUse[] = [];
  if (archive !== undefined && archive !== '-') {
    if (mode === '-c') uses.push({ kind: 'write', value: archive, byRule: true });
    else if (mode === '-t' || mode === '-x' || mode === '--test-label') uses.push({ kind: 'read', value: archive });
    else uses.push({ kind: 'read', value: archive }, { kind: 'write', value: archive, byRule: true });
  }
  for (const o of named(a, '-g')) {
    if (o.value !== undefined) uses.push({ kind: 'read', value: o.value }, { kind: 'write', value: o.value, byRule: false });
  }
  const dirs = named(a, '-C');
  const dirBefore = (at: number): string | undefined => dirs.filter((d) => d.at < at).pop()?.value;
  if (mode === '-c' || mode === '-r' || mode === '-u') {
    const added = [
      ...a.operands.map((x) => ({ value: under(dirBefore(x.at), x.word.value), at: x.at })),
      ...named(a, '--add-file').map((o) => ({ value: under(dirBefore(o.at), o.value ?? ''), at: o.at })),
    ];
    for (const x of added) {
      uses.push({ kind: 'search', value: x.value });
      if (hasOption(a, '--remove-files')) uses.push({ kind: 'writeTree', value: x.value, byRule: true });
    }
  } else if (mode === '-A') {
    for (const x of a.operands) uses.push({ kind: 'read', value: x.word.value, word: x.word });
  } else if (mode === '-x' && !hasOption(a, '-O')) {
    const top = named(a, '--one-top-level')[0];
    const targets = hasOption(a, '-P') ? ['/'] : dirs.length > 0 ? dirs.map((d) => d.value ?? '.') : ['.'];
    for (const t of targets) uses.push({ kind: 'writeBelow', value: top?.value !== undefined ? under(t, top.value) : t, byRule: true });
  }
  return uses;
}

const RSYNC = roTable(
  'rsync',
  `v/verbose /info= /debug= /stderr= q/quiet /no-motd c/checksum a/archive r/recursive /inc-recursive/i-r /relative R /no-implied-dirs b/backup
   /backup-dir=@ /suffix= u/update /inplace /append /append-verify d/dirs /old-dirs/old-d /mkpath l/links L/copy-links /copy-unsafe-links /safe-links
   /insecure-links /confine-root= /munge-links k/copy-dirlinks K/keep-dirlinks H/hard-links p/perms E/executability /chmod= A/acls X/xattrs o/owner
   g/group /devices /copy-devices /write-devices /specials D t/times U/atimes /open-noatime N/crtimes O/omit-dir-times J/omit-link-times /super
   /fake-super S/sparse /preallocate n/dry-run W/whole-file /checksum-choice/cc= x/one-file-system B/block-size= e/rsh=! /rsync-path=! /existing
   /ignore-non-existing /ignore-existing /remove-source-files /del /delete /delete-before /delete-during /delete-delay /delete-after /delete-excluded
   /ignore-missing-args /delete-missing-args /ignore-errors /force /max-delete= /max-size= /min-size= /max-alloc= /partial /partial-dir=> /delay-updates
   m/prune-empty-dirs /numeric-ids /usermap= /groupmap= /chown= /timeout= /contimeout= I/ignore-times /size-only /modify-window= T/temp-dir=>
   y/fuzzy /compare-dest=< /copy-dest=< /link-dest=< z/compress /compress-choice/zc= /compress-level/zl= /compress-threads= /skip-compress=
   C/cvs-exclude f/filter=@ F /exclude= /exclude-from=< /include= /include-from=< /files-from=* 0/from0 /old-args s/secluded-args/protect-args
   /trust-sender /copy-as= /address= /port= /sockopts= /blocking-io /outbuf= /stats 8/8-bit-output h/human-readable /progress P i/itemize-changes
   M/remote-option= /out-format= /log-file=> /log-file-format= /password-file=< /early-input=< /list-only /bwlimit= /stop-after= /stop-at= /fsync
   /write-batch=> /only-write-batch=> /read-batch=< /protocol= /iconv= /checksum-seed= 4/ipv4 6/ipv6 V/version /help`,
  { permute: true, abbreviations: false, negation: 'safe' },
);

/** A remote rsync operand (`host:path`, `host::module`, `rsync://…`), which is no local file. */
const remote = (v: string): boolean => /^[^/]*:/.test(v) && !v.startsWith('./');

function rsyncUses(a: ParsedArgs<RO>): OperandUses {
  // A filter rule that merges rules from a file reads a file Keel does not follow.
  if (named(a, '-f').some((o) => /^(merge|\.|dir-merge|:)/.test(o.value ?? ''))) return null;
  const ops = a.operands;
  if (ops.length === 0) return [];
  const uses: FileUse[] = [];
  const tree = hasOption(a, '-r', '-a');
  if (ops.length === 1) {
    const only = ops[0] as Operand;
    if (!remote(only.word.value)) uses.push({ kind: 'read', value: only.word.value, word: only.word });
    return uses;
  }
  const dest = ops[ops.length - 1] as Operand;
  const local = !remote(dest.word.value);
  for (const s of ops.slice(0, -1)) {
    const v = s.word.value;
    if (remote(v)) {
      // Names Keel cannot see land below the destination.
      if (local) uses.push({ kind: 'writeBelow', value: dest.word.value, byRule: true });
      continue;
    }
    uses.push({ kind: tree ? 'search' : 'read', value: v, word: s.word });
    if (hasOption(a, '--remove-source-files')) uses.push({ kind: 'writeTree', value: v, word: s.word, byRule: true });
    if (!local) continue;
    if (hasOption(a, '-R')) uses.push({ kind: 'writeTree', value: `${dest.word.value}/${v}`, from: v, byRule: true });
    else if (v.endsWith('/')) uses.push({ kind: 'writeTree', value: dest.word.value, from: v, byRule: true });
    else uses.push({ kind: 'writeTree', value: v, word: s.word, into: dest.word.value, byRule: true });
  }
  if (local && a.options.some((o) => /^--del/.test(o.name))) uses.push({ kind: 'writeTree', value: dest.word.value, byRule: true });
  const backupDir = named(a, '--backup-dir')[0]?.value;
  if (backupDir !== undefined) uses.push({ kind: 'writeBelow', value: backupDir, byRule: true });
  if (local && hasOption(a, '-b') && backupDir === undefined) uses.push({ kind: 'writeBelow', value: dest.word.value, byRule: true });
  return uses;
}

export const ARCHIVES: Record<string, ReadOnlySpec> = {
  tar: { table: TAR, prepare: tarWords, operands: tarUses },
  rsync: { table: RSYNC, operands: rsyncUses },
};
