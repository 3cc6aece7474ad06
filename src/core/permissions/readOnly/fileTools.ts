import { basename } from 'node:path';
import { defHasName, hasOption, type Operand, type ParsedArgs } from '../shell/options';
import { ARCHIVES } from './archives';
import { DATA_TOOLS } from './dataTools';
import { SED } from './sed';
import { GNU, roTable } from './table';
import type { FileUse, ReadOnlySpec, RO } from './types';

/**
 * The files of the well-known file commands (coreutils 9.1, checked against their `--help` and
 * getopt strings): what each reads and writes, so that Read and Edit rules and protected places
 * decide them whichever Bash rule allowed the command. A write such a command exists to make (cp's
 * destination, touch's file, rm's operand) is covered by a Bash rule for it inside the workspace;
 * a write named by an option (`--backup` suffixes aside) is like a redirection. Sources that are
 * folders copied or moved whole are searched (their content is read), and the names they hold
 * land below the destination (`writeTree` with `from`).
 */
const P = { permute: true };

const lit = (x: Operand): { value: string; word: Operand['word'] } => ({ value: x.word.value, word: x.word });

/** The value of the last `-t DIR` / `--target-directory=DIR`, if given. */
function targetDirectory(a: ParsedArgs<RO>): Operand | undefined {
  const t = a.options.filter((o) => defHasName(o.def, '-t')).pop();
  return t?.valueWord ? { word: { ...t.valueWord, value: t.value ?? '' }, at: t.at } : undefined;
}

/** The backup suffix a `--backup`/`-b` copy, move or link leaves the old destination under, if any. */
function backupSuffix(a: ParsedArgs<RO>): string | undefined {
  if (!hasOption(a, '-b', '--backup')) return undefined;
  const control = a.options.filter((o) => defHasName(o.def, '--backup')).pop()?.value;
  if (control && /^(numbered|t|existing|nil)$/.test(control)) return '.~1~';
  return a.options.filter((o) => defHasName(o.def, '-S')).pop()?.value ?? '~';
}

/**
 * cp, mv, ln, install: SOURCE... DEST, `-t DIR SOURCE...`, `-T SOURCE DEST` (coreutils'
 * target rules). Each source lands at DEST itself or, when DEST is (or may be) a folder, at
 * DEST/basename(SOURCE); both are checked when it depends on what DEST is at run time.
 * `tree`: folders land whole (cp -r, mv, rsync-like). `sourceUse`: what is done to each source.
 */
function landing(a: ParsedArgs<RO>, opts: { tree: boolean; sourceUses: (x: Operand) => FileUse[]; singleOperand?: 'cwd' }): FileUse[] | null {
  const ops = a.operands;
  const dir = targetDirectory(a);
  const uses: FileUse[] = [];
  const suffix = backupSuffix(a);
  const kind = opts.tree ? 'writeTree' : 'write';
  const into = (src: Operand, d: Operand): void => {
    uses.push(...opts.sourceUses(src));
    uses.push({ kind, value: src.word.value, word: src.word, into: d.word.value, byRule: true });
    if (suffix) uses.push({ kind: 'write', value: `${d.word.value}/${basename(src.word.value)}${suffix}`, byRule: true });
  };
  const onto = (src: Operand, dest: Operand): void => {
    uses.push(...opts.sourceUses(src));
    uses.push({ kind, ...lit(dest), ...(opts.tree ? { from: src.word.value } : {}), byRule: true });
    if (suffix) uses.push({ kind: 'write', value: `${dest.word.value}${suffix}`, byRule: true });
  };
  if (dir) {
    if (hasOption(a, '-T')) return null;
    for (const s of ops) into(s, dir);
    return uses;
  }
  if (ops.length === 1 && opts.singleOperand === 'cwd') {
    into(ops[0] as Operand, { word: { value: '.', dynamic: false, glob: false, text: '.', fields: ['.'] }, at: -1 });
    return uses;
  }
  if (ops.length < 2) return uses;
  const dest = ops[ops.length - 1] as Operand;
  const sources = ops.slice(0, -1);
  if (hasOption(a, '-T')) {
    if (sources.length !== 1) return uses;
    onto(sources[0] as Operand, dest);
    return uses;
  }
  for (const s of sources) {
    into(s, dest);
    // One source: DEST may be a new file rather than a folder.
    if (sources.length === 1) onto(s, dest);
  }
  return uses;
}

const recursive = (a: ParsedArgs<RO>): boolean => hasOption(a, '-r', '-a', '--recursive', '--archive');

const CP = roTable(
  'cp',
  `a/archive /attributes-only /backup=? b /copy-contents d f/force i/interactive H l/link L/dereference n/no-clobber P/no-dereference p /preserve=?
   /no-preserve= /parents rR/recursive /reflink=? /remove-destination /sparse= /strip-trailing-slashes s/symbolic-link S/suffix= t/target-directory=@
   T/no-target-directory u/update=? v/verbose x/one-file-system Z /context=? ${GNU}`,
  P,
);

const cp: ReadOnlySpec = {
  table: CP,
  operands: (a) => {
    // --parents: SOURCE lands at DIR/SOURCE, its full name.
    if (hasOption(a, '--parents')) {
      const dir = targetDirectory(a) ?? a.operands[a.operands.length - 1];
      const sources = targetDirectory(a) ? a.operands : a.operands.slice(0, -1);
      if (!dir) return [];
      return sources.flatMap((s) => [
        { kind: recursive(a) ? 'search' : 'read', ...lit(s) } satisfies FileUse,
        { kind: recursive(a) ? 'writeTree' : 'write', value: `${dir.word.value}/${s.word.value}`, from: s.word.value, byRule: true } satisfies FileUse,
      ]);
    }
    const links = hasOption(a, '-l', '--link');
    const symbolic = hasOption(a, '-s', '--symbolic-link');
    return landing(a, {
      tree: recursive(a),
      sourceUses: (s) => {
        // A symbolic link reads nothing; a hard link gives the source another name it can be
        // read and changed under (so it is read, and written); a copy reads it.
        if (symbolic) return [];
        const read: FileUse = { kind: recursive(a) ? 'search' : 'read', ...lit(s) };
        return links ? [read, { kind: 'write', ...lit(s), byRule: true }] : [read];
      },
    });
  },
};

const MV = roTable(
  'mv',
  `/backup=? b f/force i/interactive n/no-clobber /strip-trailing-slashes S/suffix= t/target-directory=@ T/no-target-directory u/update=? v/verbose
   Z/context ${GNU}`,
  P,
);

/** mv: each source leaves its place (a write of it and of everything below) and lands whole. */
const mv: ReadOnlySpec = {
  table: MV,
  operands: (a) =>
    landing(a, {
      tree: true,
      // Moving a file is reading it under its new name: a Read rule keeps its content where it was.
      sourceUses: (s) => [
        { kind: 'search', ...lit(s) },
        { kind: 'writeTree', ...lit(s), byRule: true },
      ],
    }),
};

const LN = roTable(
  'ln',
  `/backup=? b dF/directory f/force i/interactive L/logical n/no-dereference P/physical r/relative s/symbolic S/suffix= t/target-directory=@
   T/no-target-directory v/verbose ${GNU}`,
  P,
);

/**
 * ln: each LINK_NAME is written. A hard link gives TARGET a second name, under which it can be
 * read and changed: TARGET is read and written. A symbolic link touches no TARGET (what reaches
 * through it later is resolved then).
 */
const ln: ReadOnlySpec = {
  table: LN,
  operands: (a) => {
    const symbolic = hasOption(a, '-s');
    return landing(a, {
      tree: false,
      singleOperand: 'cwd',
      sourceUses: (s) => (symbolic ? [] : [{ kind: 'read', ...lit(s) }, { kind: 'write', ...lit(s), byRule: true }]),
    });
  },
};

const INSTALL = roTable(
  'install',
  `/backup=? b c C/compare d/directory D g/group= m/mode= o/owner= p/preserve-timestamps s/strip /strip-program=! S/suffix= t/target-directory=@
   T/no-target-directory v/verbose /preserve-context Z /context=? /debug ${GNU}`,
  P,
);

/** install: like cp; `-d` creates every operand as a folder; `-D` creates DEST's leading folders. */
const install: ReadOnlySpec = {
  table: INSTALL,
  operands: (a) => {
    if (hasOption(a, '-d')) return a.operands.map((x) => ({ kind: 'write', ...lit(x), byRule: true }));
    return landing(a, { tree: false, sourceUses: (s) => [{ kind: 'read', ...lit(s) }] });
  },
};

/** Every operand is written (or, with `tree`, it and everything below it). */
const eachWritten =
  (tree: (a: ParsedArgs<RO>) => boolean = () => false) =>
  (a: ParsedArgs<RO>): FileUse[] =>
    a.operands.map((x) => ({ kind: tree(a) ? 'writeTree' : 'write', ...lit(x), byRule: true }));

/** rmdir -p a/b/c removes a/b and a too. */
function rmdirUses(a: ParsedArgs<RO>): FileUse[] {
  const uses: FileUse[] = [];
  for (const x of a.operands) {
    uses.push({ kind: 'write', ...lit(x), byRule: true });
    if (!hasOption(a, '-p')) continue;
    let v = x.word.value.replace(/\/+$/, '');
    while (v.includes('/')) {
      v = v.slice(0, v.lastIndexOf('/'));
      if (v !== '') uses.push({ kind: 'write', value: v, byRule: true });
    }
  }
  return uses;
}

/**
 * chmod, chown, chgrp: MODE/OWNER/GROUP first unless `--reference=RFILE`; every other operand is
 * changed (with -R, everything below it). chmod reads modes like `-x` or `-w` as the mode, not
 * an option (its getopt string lists the mode letters): such a word is the mode.
 */
function ownership(a: ParsedArgs<RO>): FileUse[] | null {
  const ref = hasOption(a, '--reference');
  const ops = ref ? a.operands : a.operands.slice(1);
  const uses: FileUse[] = ops.map((x) => ({ kind: hasOption(a, '-R') ? 'writeTree' : 'write', ...lit(x), byRule: true }));
  return uses;
}

const OWNERSHIP = `c/changes f/silent/quiet v/verbose /dereference h/no-dereference /from= /no-preserve-root /preserve-root /reference=< R/recursive H L P ${GNU}`;

/** chmod's mode letters, which its getopt takes as options (`chmod -x f`, `chmod -rw f`). */
const CHMOD_MODE = /^-[rwxXst]+$/;

const chmod: ReadOnlySpec = {
  table: roTable('chmod', `c/changes f/silent/quiet v/verbose /no-preserve-root /preserve-root /reference=< R/recursive ${GNU}`, P),
  // `-x`, `-rw` are a mode: put them where a mode stands (first operand).
  prepare: (words) => {
    const i = words.findIndex((w, k) => k > 0 && !w.dynamic && CHMOD_MODE.test(w.value));
    if (i < 0) return words;
    const mode = words[i] as (typeof words)[number];
    const rest = words.filter((_, k) => k !== i);
    return [rest[0] as (typeof words)[number], { ...mode, value: mode.value.slice(1) }, ...rest.slice(1)];
  },
  operands: ownership,
};

export const FILE_TOOLS: Record<string, ReadOnlySpec> = {
  cp,
  mv,
  ln,
  install,
  rm: {
    table: roTable('rm', `f/force i I /interactive=? /one-file-system /no-preserve-root /preserve-root=? rR/recursive d/dir v/verbose ${GNU}`, P),
    operands: eachWritten(recursive),
  },
  rmdir: { table: roTable('rmdir', `/ignore-fail-on-non-empty p/parents v/verbose ${GNU}`, P), operands: rmdirUses },
  mkdir: { table: roTable('mkdir', `m/mode= p/parents v/verbose Z /context=? ${GNU}`, P), operands: eachWritten() },
  touch: {
    table: roTable('touch', `a c/no-create d/date= f h/no-dereference m r/reference=< t= /time= ${GNU}`, P),
    operands: eachWritten(),
  },
  // tee FILE… writes each; /dev/null is no file.
  tee: { table: roTable('tee', `a/append i/ignore-interrupts p /output-error=? ${GNU}`, P), operands: eachWritten() },
  truncate: { table: roTable('truncate', `c/no-create o/io-blocks r/reference=< s/size= ${GNU}`, P), operands: eachWritten() },
  unlink: { table: roTable('unlink', GNU, P), operands: eachWritten() },
  shred: {
    table: roTable('shred', `f/force n/iterations= /random-source=< s/size= u /remove=? v/verbose x/exact z/zero ${GNU}`, P),
    operands: eachWritten(),
  },
  chmod,
  chown: { table: roTable('chown', OWNERSHIP, P), operands: ownership },
  chgrp: { table: roTable('chgrp', OWNERSHIP, P), operands: ownership },
  ...DATA_TOOLS,
  sed: SED,
  ...ARCHIVES,
};
