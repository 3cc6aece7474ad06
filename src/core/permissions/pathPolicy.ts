import { dirname, join, resolve } from 'node:path';
import type { Findings } from './findings';
import { liveFs, type FsView } from './fsView';
import { isInside, type PathPattern } from './paths';
import { resolvePhysical, type PhysicalPath } from './physical';
import { foldedPlaces, foldPath, hardLinkReason, protectedInodes, type FoldedPlaces } from './protectedPlaces';
import type { PermissionRule, RuleBehavior } from './rules';

/**
 * The one notion of what a file access may do, shared by every tool: the Read, Glob and Grep
 * tools, the Write and Edit tools, and every file a Bash command opens (redirections, the
 * operands and option files of the commands Keel models, the read-only commands' files). Three
 * kinds of access:
 * - **read** a file's content: Read deny and ask rules (on where it really leads and on the path
 *   as written); without asking only inside the roots or under a Read allow rule;
 * - **search** below a folder (Grep, Glob, `grep -r`, `rg`, `diff -r`, `git diff`): a read of the
 *   folder, and every Read deny or ask rule that may match something inside it must be excluded
 *   (the Grep and Glob tools pass them to ripgrep, `searchExclusions`) or it asks;
 * - **write**: Edit (and, for the Write tool, Write) deny and ask rules, protected places
 *   (protectedPlaces.ts: also through symlinks and hard links, in every mode), a place that cannot
 *   be resolved, and the workspace boundary; an Edit/Write allow rule covers it anywhere.
 * Metadata (`stat`, `ls -d`, `readlink`) is a read that does not follow the last link and needs
 * no root: only Read deny and ask rules apply.
 *
 * One instance serves one decision and caches what it resolved. Never throws.
 */
export interface CompiledPathRule {
  rule: PermissionRule;
  pattern: PathPattern;
}

export interface PolicyRules {
  /** Read/Edit/Write rules of these tools with this behaviour, compiled. */
  pathRules(kinds: readonly string[], behavior: RuleBehavior): CompiledPathRule[];
  /** An allow rule naming one of these tools as a whole (`Edit`, `Read`), if any. */
  wholeTool(tools: readonly string[]): PermissionRule | undefined;
}

export interface PolicyPlaces {
  /** Workspace and additional directories (physical). */
  roots: readonly string[];
  /** Home as given, and physical. */
  home: string;
  homeReal: string;
  /** Settings files and the caller's protected files (absolute). */
  files: readonly string[];
  /** The reason shown for a write to one of `files`, where the caller gave one. */
  reasons?: ReadonlyMap<string, string>;
}

/** What a write check found. */
export interface WriteVerdict {
  /** Where the kernel writes (physical), or null when it cannot be resolved (then it asked). */
  real: string | null;
  inside: boolean;
  /** An Edit/Write allow rule (or the whole tool) that covers it, if any. */
  allowedBy?: PermissionRule;
}

/** Names a tree copy may bring in before Keel stops listing them (and asks). */
export const MAX_TREE_ENTRIES = 2_000;
/** Entries a folder may hold for its symlinks to be checked (`find DIR -exec cat {} +`). */
export const MAX_LINK_WALK = 10_000;

/**
 * Paths that are not files: output thrown away, a pipe (`<(…)` is `/dev/fd/63`), the terminal,
 * and the devices that only produce zeros or random bytes.
 */
const NOT_FILES = /^\/dev\/(null|stdin|stdout|stderr|tty|fd\/\d+|zero|random|urandom)$/;

export function isNotAFile(path: string): boolean {
  return NOT_FILES.test(path);
}

export class PathPolicy {
  private readonly physical = new Map<string, PhysicalPath>();
  private readonly readableSeen = new Map<string, boolean>();
  private readonly readChecked = new Set<string>();
  private inodes: Set<string> | undefined;
  private foldedCache: { real: FoldedPlaces; written: FoldedPlaces } | undefined;

  constructor(
    private readonly rules: PolicyRules,
    private readonly places: PolicyPlaces,
    readonly fs: FsView = liveFs,
  ) {}

  /** Where `p` (absolute, may hold `..` and links) really leads, resolved once per decision. */
  resolve(p: string): PhysicalPath {
    let r = this.physical.get(p);
    if (!r) {
      r = resolvePhysical(p, '/', this.fs);
      this.physical.set(p, r);
    }
    return r;
  }

  insideRoots(real: string): boolean {
    return this.places.roots.some((r) => isInside(r, real));
  }

  /** Read deny and ask rules on where `lexical` really leads (`real`) and on the path as written. */
  readRules(lexical: string, real: string | null, f: Findings): void {
    const written = resolve(lexical);
    const hit = (b: RuleBehavior) => this.rules.pathRules(['Read'], b).find((a) => (real !== null && a.pattern.test(real)) || a.pattern.test(written))?.rule;
    const d = hit('deny');
    if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
    const k = hit('ask');
    if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
  }

  /**
   * True when `path` (absolute) may be read without asking: it resolves inside the roots or under
   * a Read allow rule. Not a file (`/dev/null`, a pipe): true.
   */
  readable(path: string): boolean {
    if (isNotAFile(path)) return true;
    let ok = this.readableSeen.get(path);
    if (ok === undefined) {
      const r = this.resolve(path);
      ok = r.ok && (this.insideRoots(r.path) || this.rules.pathRules(['Read'], 'allow').some((a) => a.pattern.test(r.path)));
      this.readableSeen.set(path, ok);
    }
    return ok;
  }

  /** A read of `path`'s content: its deny and ask rules (once per path); true when `readable`. */
  read(path: string, f: Findings): boolean {
    if (isNotAFile(path)) return true;
    if (!this.readChecked.has(path)) {
      this.readChecked.add(path);
      const r = this.resolve(path);
      this.readRules(path, r.ok ? r.path : null, f);
    }
    return this.readable(path);
  }

  /**
   * Metadata of `path` (stat, `ls -ld`, readlink): nothing of a file's content is read, so a
   * link may point anywhere; the entry named must be in the roots (as written, or its physical
   * place without following a last link) or under a Read allow rule. Read deny and ask rules apply
   * to the entry and, through a trailing slash, to where it leads.
   */
  metadata(path: string, f: Findings): boolean {
    if (isNotAFile(path)) return true;
    const trimmed = path.replace(/\/+$/, '');
    const parent = trimmed === '' ? null : this.resolve(dirname(trimmed));
    const entry = parent?.ok ? join(parent.path, trimmed.slice(dirname(trimmed).length + 1)) : null;
    // A trailing slash makes the kernel follow a last link: then it is where the link leads too.
    const followed = path.endsWith('/') ? this.resolve(path) : null;
    this.readRules(path, entry, f);
    if (followed?.ok) this.readRules(path, followed.path, f);
    const lexical = resolve(path);
    const allowed = (p: string): boolean => this.insideRoots(p) || this.rules.pathRules(['Read'], 'allow').some((a) => a.pattern.test(p));
    return allowed(lexical) || (entry !== null && allowed(entry));
  }

  /**
   * A read of everything below `root` (a recursive search): the folder itself is read, and a
   * Read deny rule that may match inside asks in every mode (dontAsk: denies), a Read ask rule
   * asks; the command cannot be told to skip them. True when the folder is `readable`.
   */
  search(root: string, text: string, f: Findings): boolean {
    const ok = this.read(root, f);
    const r = this.resolve(root);
    this.readRules(join(root, '_'), r.ok ? join(r.path, '_') : null, f);
    if (!r.ok || f.deny) return ok;
    const inside = (b: RuleBehavior) => this.rules.pathRules(['Read'], b).find((a) => a.pattern.reach(r.path) === 'some')?.rule;
    const d = inside('deny');
    if (d) f.hardAsk.push(`reads everything below ${r.path} (${text}), which holds files ${d.raw} denies`);
    const k = d ? undefined : inside('ask');
    if (k) f.ask ??= { reason: `reads everything below ${r.path} (${text}), where ${k.raw} asks`, rule: k };
    return ok;
  }

  /**
   * A search below `root` by a command that opens each file it is handed, following links
   * (`find ROOT -exec cat {} +`, `find ROOT | xargs cat`): the search, and every symlink below
   * `root` must lead somewhere that may be read (Read rules apply where it leads). False when one
   * does not, or when the tree holds more than MAX_LINK_WALK entries (it cannot be checked).
   */
  searchThroughLinks(root: string, text: string, f: Findings): boolean {
    let ok = this.search(root, text, f);
    const r = this.resolve(root);
    if (!r.ok) return false;
    const links = this.listTree(r.path, MAX_LINK_WALK, 'links');
    if (links === null) return false;
    for (const rel of links) if (!this.read(join(r.path, rel), f)) ok = false;
    return ok;
  }

  /**
   * What a search below `root` (physical) must skip: ripgrep globs for every Read deny and ask
   * rule that may match inside it, with the rules; null when one cannot be written as a glob.
   */
  searchExclusions(root: string): { globs: string[]; rules: string[] } | null {
    const globs: string[] = [];
    const rules: string[] = [];
    for (const b of ['deny', 'ask'] as const) {
      for (const a of this.rules.pathRules(['Read'], b)) {
        const g = a.pattern.ripgrepGlobs(root);
        if (g === null) return null;
        if (g.length === 0) continue;
        globs.push(...g);
        if (!rules.includes(a.rule.raw)) rules.push(a.rule.raw);
      }
    }
    return { globs, rules };
  }

  /**
   * A write of `path` (absolute, may hold `..` and links), named `text` in messages: rules of
   * `kinds` (Edit, and Write for the Write tool), protected places (hard asks), and where it
   * lands. Unresolvable or outside the roots: a soft ask. `allowedBy`: the allow rule of `kinds`
   * that covers it; the caller decides whether a write inside needs one.
   */
  write(path: string, text: string, f: Findings, kinds: readonly string[] = ['Edit', 'Write']): WriteVerdict {
    const r = this.resolve(path);
    const real = r.ok ? r.path : null;
    const lexical = resolve(path);
    const hit = (b: RuleBehavior) => this.rules.pathRules(kinds, b).find((a) => (real !== null && a.pattern.test(real)) || a.pattern.test(lexical))?.rule;
    const d = hit('deny');
    if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
    const k = hit('ask');
    if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
    const { real: byReal, written } = this.folded();
    const prot = (real !== null ? byReal.reason(real) : null) ?? written.reason(lexical) ?? (real !== null && r.ok && r.exists ? hardLinkReason(real, () => this.protectedInodes()) : null);
    if (prot) f.hardAsk.push(prot);
    if (!r.ok) {
      f.softAsk.push(`cannot tell which file ${text} writes: ${r.reason}`);
      f.risky.push('writes a file whose location cannot be resolved');
      return { real: null, inside: false };
    }
    const allowedBy = this.rules.pathRules(kinds, 'allow').find((a) => a.pattern.test(r.path))?.rule ?? this.rules.wholeTool(kinds);
    const inside = this.insideRoots(r.path);
    if (inside) f.writesInside = true;
    else {
      // Outside the roots nothing allows it without asking (an Edit rule there neither: add the
      // folder to additionalDirectories); bypassPermissions does.
      f.softAsk.push(`writes outside the workspace (${text})`);
      f.risky.push('writes outside the workspace');
    }
    return { real, inside, ...(allowedBy ? { allowedBy } : {}) };
  }

  /**
   * A write of `path` and of everything below it (`rm -r`, `mv DIR`, `chmod -R`), or, with `from`,
   * of what lands below it when the tree `from` is copied or moved there (`cp -r FROM PATH`).
   * Removing or changing a tree that holds one of Keel's protected places (a root's `.keel`,
   * `.git`, `.claude`, `.vscode`, its instruction files, a protected file) asks in every mode; so
   * does copying in a tree that holds a protected name, or one too large to list (past
   * MAX_TREE_ENTRIES names). Edit deny and ask rules that may match inside decide as for a write.
   */
  writeTree(path: string, text: string, f: Findings, from?: string): WriteVerdict {
    const v = this.write(path, text, f);
    if (v.real === null) return v;
    if (from === undefined) {
      const places = this.knownPlaces();
      const hit = places.find((p) => p !== v.real && isInside(foldPath(v.real as string), foldPath(p)));
      if (hit) f.hardAsk.push(`${text} changes or removes everything below ${path}, which holds ${hit}`);
      for (const b of ['deny', 'ask'] as const) {
        const rule = this.rules.pathRules(['Edit', 'Write'], b).find((a) => a.pattern.reach(v.real as string) === 'some')?.rule;
        if (!rule) continue;
        if (b === 'deny') f.hardAsk.push(`${text} changes everything below ${path}, where ${rule.raw} denies`);
        else f.ask ??= { reason: `${text} changes everything below ${path}, where ${rule.raw} asks`, rule };
      }
      return v;
    }
    const src = this.resolve(from);
    if (!src.ok) {
      f.hardAsk.push(`${text} copies ${from}, which Keel cannot resolve, below ${path}`);
      return v;
    }
    const names = this.listTree(src.path);
    if (names === null) {
      f.hardAsk.push(`${text} copies more than ${MAX_TREE_ENTRIES} files from ${from} below ${path}; Keel cannot check their names`);
      return v;
    }
    for (const rel of names) this.writeNamesOnly(join(v.real, rel), `${text} (${rel})`, f);
    return v;
  }

  /** Rules and protected names for one file a tree copy creates (not the boundary: its root was checked). */
  private writeNamesOnly(real: string, text: string, f: Findings): void {
    const hit = (b: RuleBehavior) => this.rules.pathRules(['Edit', 'Write'], b).find((a) => a.pattern.test(real))?.rule;
    const d = hit('deny');
    if (d) f.deny ??= { reason: `denied by ${d.raw}`, rule: d };
    const k = hit('ask');
    if (k) f.ask ??= { reason: `${k.raw} asks`, rule: k };
    const prot = this.folded().real.reason(real);
    if (prot) f.hardAsk.push(`${text}: ${prot}`);
  }

  /**
   * The names below `dir` (physical; `links`: only the symlinks), without following links;
   * null past `limit` entries.
   */
  private listTree(dir: string, limit = MAX_TREE_ENTRIES, only?: 'links'): string[] | null {
    const out: string[] = [];
    const queue: string[] = [''];
    let seen = 0;
    for (let q = 0; q < queue.length; q++) {
      const rel = queue[q] as string;
      if (this.fs.lstat(join(dir, rel)).kind !== 'dir') continue;
      const names = this.fs.readdir(join(dir, rel));
      if (!names) continue;
      for (const n of names) {
        const r = rel === '' ? n : join(rel, n);
        if (++seen > limit) return null;
        if (only !== 'links' || this.fs.lstat(join(dir, r)).kind === 'link') out.push(r);
        queue.push(r);
      }
    }
    return out;
  }

  /** The places whose removal matters: each root's protected folders and instruction files, ~/.keel, the protected files. */
  private knownPlaces(): string[] {
    const out: string[] = [];
    for (const r of this.places.roots) for (const n of ['.git', '.keel', '.claude', '.vscode', 'KEEL.md', 'AGENTS.md', 'CLAUDE.md', 'CLAUDE.local.md']) out.push(join(r, n));
    out.push(join(this.places.homeReal, '.keel'), ...this.places.files);
    return out;
  }

  /** Protected places with names folded, for physical paths and for paths as written. */
  private folded(): { real: FoldedPlaces; written: FoldedPlaces } {
    this.foldedCache ??= {
      real: foldedPlaces({ roots: this.places.roots, home: this.places.homeReal, files: this.places.files, ...(this.places.reasons ? { reasons: this.places.reasons } : {}) }),
      written: foldedPlaces({ roots: this.places.roots, home: this.places.home, files: this.places.files, ...(this.places.reasons ? { reasons: this.places.reasons } : {}) }),
    };
    return this.foldedCache;
  }

  /**
   * A write whose file names Keel cannot know, below `dir` (an archive extracted there, a tree
   * copied from where Keel cannot list it): any name may be a protected one, so it asks in every
   * mode when `dir` is inside a root; outside, it is a write outside.
   */
  unknownWritesBelow(dir: string, text: string, f: Findings): WriteVerdict {
    const v = this.write(join(dir, '_'), text, f);
    const real = v.real === null ? null : dirname(v.real);
    const reaches = real !== null && this.places.roots.some((r) => isInside(r, real) || isInside(real, r));
    if (reaches) f.hardAsk.push(`writes files whose names Keel cannot see (an archive's, a remote host's) below ${real}; a protected file (.git/, .keel/, KEEL.md…) could be among them`);
    return v;
  }

  private protectedInodes(): Set<string> {
    this.inodes ??= protectedInodes(this.places.roots, this.places.files);
    return this.inodes;
  }
}
